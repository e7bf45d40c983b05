//! The errors of the mesh readers, and where in a file they were found.

use std::fmt;
use std::path::PathBuf;

/// Where in a mesh file an error was found.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Location {
    /// A line of a text file (1-based).
    Line(usize),
    /// The header of a PLY or binary STL file (its declarations as a whole).
    Header,
    /// One record of a file: a PLY element (`vertex 12`, `face 7`) or an STL triangle
    /// (`facet 3`), with its 0-based index, and the line (ASCII files) or the byte offset
    /// (binary files) where the record starts, where known.
    Element {
        /// The kind of record: the PLY element name, or `facet` for STL.
        element: String,
        /// 0-based index of the record among those of its kind.
        index: usize,
        /// 1-based line of the record in an ASCII file.
        line: Option<usize>,
        /// Byte offset of the record in a binary file.
        offset: Option<u64>,
    },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(line) => write!(f, "line {line}"),
            Location::Header => f.write_str("header"),
            Location::Element { element, index, line, offset } => {
                write!(f, "{element} {index}")?;
                match (line, offset) {
                    (Some(line), _) => write!(f, " (line {line})"),
                    (None, Some(offset)) => write!(f, " (byte offset {offset})"),
                    (None, None) => Ok(()),
                }
            }
        }
    }
}

/// Errors from reading or parsing a mesh file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MeshIoError {
    /// The file could not be read.
    #[error("cannot read mesh file `{}`: {source}", path.display())]
    Io {
        /// The file that was being read.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file extension is not one of the supported formats.
    #[error("unsupported mesh file `{}`: expected a .obj, .off, .ply or .stl extension", path.display())]
    UnsupportedFormat {
        /// The offending path.
        path: PathBuf,
    },
    /// A statement, header or record could not be parsed, or the file ends early.
    #[error("{at}: {message}")]
    Parse {
        /// Where: the line, or the element and its index.
        at: Location,
        /// What is wrong.
        message: String,
    },
    /// A face refers to a vertex that does not exist.
    #[error("{at}: face vertex index {index} is out of range (the mesh has {vertex_count} vertices)")]
    IndexOutOfRange {
        /// Where the face is.
        at: Location,
        /// The index as written in the file (1-based or negative for OBJ, 0-based for OFF and
        /// PLY).
        index: i64,
        /// Number of vertices the index was checked against.
        vertex_count: usize,
    },
    /// A vertex coordinate is infinite or NaN, or too large for a 32-bit float.
    #[error("{at}: vertex coordinate `{text}` is not a finite 32-bit float")]
    NonFiniteCoordinate {
        /// Where the vertex is.
        at: Location,
        /// The coordinate as written in the file (text files) or as read (binary files).
        text: String,
    },
    /// The file parsed but contains no triangles.
    #[error("mesh has no triangles")]
    EmptyMesh,
}

impl MeshIoError {
    /// Where in the file the error was found (`None` for [`MeshIoError::Io`],
    /// [`MeshIoError::UnsupportedFormat`] and [`MeshIoError::EmptyMesh`]).
    pub fn location(&self) -> Option<&Location> {
        match self {
            MeshIoError::Parse { at, .. }
            | MeshIoError::IndexOutOfRange { at, .. }
            | MeshIoError::NonFiniteCoordinate { at, .. } => Some(at),
            _ => None,
        }
    }
}

/// A [`MeshIoError::Parse`] at `at`.
pub(super) fn parse_error(at: Location, message: impl Into<String>) -> MeshIoError {
    MeshIoError::Parse { at, message: message.into() }
}

/// The location of record `index` of kind `element`.
pub(super) fn element(element: &str, index: usize, line: Option<usize>, offset: Option<u64>) -> Location {
    Location::Element { element: element.to_owned(), index, line, offset }
}
