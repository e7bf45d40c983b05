//! Reading and writing PLY (Polygon File Format, the Stanford Triangle Format), ASCII and
//! binary, through the `ply-rs-bw` crate's header parser and element readers.

use std::fmt::Write as _;
use std::io::{BufRead, Cursor};

use glam::Vec3;
use ply_rs_bw::parser::{ParseError, Parser, Reader};
use ply_rs_bw::ply::{ElementDef, Encoding, Header, Property, PropertyAccess, PropertyType, ScalarType};

use super::TriMesh;
use super::error::{Location, MeshIoError, element, parse_error};

/// The encoding [`write_ply`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlyEncoding {
    /// `format ascii 1.0`: one element per line.
    Ascii,
    /// `format binary_little_endian 1.0`.
    BinaryLittleEndian,
    /// `format binary_big_endian 1.0`.
    BinaryBigEndian,
}

/// One element as read: the coordinates of a vertex, the index list of a face. Other
/// elements (edges, materials, ...) and properties (normals, colours, ...) are ignored.
#[derive(Default)]
struct Record {
    xyz: [f64; 3],
    indices: Vec<i64>,
    /// A `vertex_indices` list of a non-integer type.
    float_list: bool,
}

impl PropertyAccess for Record {
    fn new() -> Self {
        Record::default()
    }

    fn set_property(&mut self, name: &str, property: Property) -> ply_rs_bw::ply::PropertyAccessResult {
        use ply_rs_bw::ply::PropertyAccessResult::{Ignored, Set};
        let axis = match name {
            "x" => Some(0),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        if let Some(axis) = axis {
            self.xyz[axis] = match property {
                Property::Char(v) => v.into(),
                Property::UChar(v) => v.into(),
                Property::Short(v) => v.into(),
                Property::UShort(v) => v.into(),
                Property::Int(v) => v.into(),
                Property::UInt(v) => v.into(),
                Property::Float(v) => v.into(),
                Property::Double(v) => v,
                _ => return Ignored,
            };
            return Set;
        }
        if !is_index_list(name) {
            return Ignored;
        }
        fn widen<T: Into<i64>>(list: Vec<T>) -> Vec<i64> {
            list.into_iter().map(Into::into).collect()
        }
        self.indices = match property {
            Property::ListChar(l) => widen(l),
            Property::ListUChar(l) => widen(l),
            Property::ListShort(l) => widen(l),
            Property::ListUShort(l) => widen(l),
            Property::ListInt(l) => widen(l),
            Property::ListUInt(l) => widen(l),
            _ => {
                self.float_list = true;
                return Ignored;
            }
        };
        Set
    }
}

/// The names PLY writers give the index list of a face.
fn is_index_list(name: &str) -> bool {
    name == "vertex_indices" || name == "vertex_index"
}

/// The parser's message on one line, without its own `Line N:` prefix.
fn message(e: &ParseError) -> String {
    let text = e.to_string();
    let text = match e.line() {
        Some(line) => text.strip_prefix(&format!("Line {line}: ")).unwrap_or(&text).to_owned(),
        None => text,
    };
    text.split(['\n', '\t']).map(str::trim).filter(|s| !s.is_empty()).collect::<Vec<_>>().join("; ")
}

/// The error for an ASCII element line that the parser rejected: the property whose value is
/// not a finite number, where there is one (the parser's grammar rejects `nan` and `inf`),
/// else the parser's message.
fn ascii_error(text: &str, def: &ElementDef, at: Location, e: &ParseError) -> MeshIoError {
    let mut tokens = text.split_ascii_whitespace();
    for property in def.properties.values() {
        let count = match property.data_type {
            PropertyType::Scalar(_) => 1,
            PropertyType::List(..) => {
                let Some(token) = tokens.next() else { break };
                match token.parse::<usize>() {
                    Ok(count) => count,
                    Err(_) => {
                        return parse_error(at, format!("invalid `{}` list length `{token}`", property.name));
                    }
                }
            }
        };
        for token in tokens.by_ref().take(count) {
            match token.parse::<f64>() {
                Ok(value) if value.is_finite() => {}
                Ok(_) if ["x", "y", "z"].contains(&property.name.as_str()) => {
                    return MeshIoError::NonFiniteCoordinate { at, text: token.to_owned() };
                }
                _ => {
                    return parse_error(at, format!("invalid `{}` value `{token}`", property.name));
                }
            }
        }
    }
    parse_error(at, message(e))
}

/// Checks that the header declares what a triangle mesh needs; returns the vertex count.
fn check_header(header: &Header) -> Result<usize, MeshIoError> {
    let vertex = header
        .elements
        .get("vertex")
        .ok_or_else(|| parse_error(Location::Header, "the PLY header declares no `vertex` element"))?;
    for axis in ["x", "y", "z"] {
        match vertex.properties.get(axis).map(|p| &p.data_type) {
            Some(PropertyType::Scalar(_)) => {}
            Some(PropertyType::List(..)) => {
                return Err(parse_error(
                    Location::Header,
                    format!("the `vertex` element's `{axis}` property is a list, expected a number"),
                ));
            }
            None => {
                return Err(parse_error(
                    Location::Header,
                    format!("the `vertex` element has no `{axis}` property"),
                ));
            }
        }
    }
    let face = header.elements.get("face").ok_or_else(|| {
        parse_error(
            Location::Header,
            "the PLY header declares no `face` element (point clouds and triangle strips are not \
             supported)",
        )
    })?;
    match face.properties.values().find(|p| is_index_list(&p.name)).map(|p| &p.data_type) {
        Some(PropertyType::List(_, ScalarType::Float | ScalarType::Double))
        | Some(PropertyType::Scalar(_)) => Err(parse_error(
            Location::Header,
            "the `face` element's vertex index property is not a list of integers",
        )),
        Some(PropertyType::List(..)) => Ok(vertex.count),
        None => Err(parse_error(
            Location::Header,
            "the `face` element has no `vertex_indices` (or `vertex_index`) list property",
        )),
    }
}

/// Reads the elements of one kind, in the header's encoding; `record` gets each with its
/// location. `line` is the line the next ASCII element starts on, and is advanced.
fn read_elements(
    parser: &Parser<Record>,
    cursor: &mut Cursor<&[u8]>,
    encoding: Encoding,
    def: &ElementDef,
    line: &mut usize,
    mut record: impl FnMut(Record, &Location) -> Result<(), MeshIoError>,
) -> Result<(), MeshIoError> {
    let mut text = String::new();
    for index in 0..def.count {
        let offset = cursor.position();
        let (result, at) = match encoding {
            Encoding::Ascii => {
                // Blank lines between elements are skipped.
                loop {
                    text.clear();
                    let read = cursor.read_line(&mut text).map_err(|e| {
                        parse_error(element(&def.name, index, Some(*line), None), e.to_string())
                    })?;
                    if read == 0 {
                        return Err(parse_error(
                            element(&def.name, index, Some(*line), None),
                            format!(
                                "unexpected end of file: the header declares {} `{}` elements",
                                def.count, def.name
                            ),
                        ));
                    }
                    if !text.trim().is_empty() {
                        break;
                    }
                    *line += 1;
                }
                let at = element(&def.name, index, Some(*line), None);
                *line += 1;
                let text = text.trim_end();
                match parser.read_ascii_element(text, def) {
                    Ok(value) => (Ok(value), at),
                    Err(e) => return Err(ascii_error(text, def, at, &e)),
                }
            }
            Encoding::BinaryLittleEndian => (
                parser.read_little_endian_element(cursor, def),
                element(&def.name, index, None, Some(offset)),
            ),
            Encoding::BinaryBigEndian => {
                (parser.read_big_endian_element(cursor, def), element(&def.name, index, None, Some(offset)))
            }
        };
        let value = result.map_err(|e| {
            let message = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                format!(
                    "unexpected end of file: the header declares {} `{}` elements of {} properties",
                    def.count,
                    def.name,
                    def.properties.len()
                )
            } else {
                message(&e)
            };
            parse_error(at.clone(), message)
        })?;
        record(value, &at)?;
    }
    Ok(())
}

/// Parses a PLY file (ASCII, binary little endian or binary big endian, the format of the
/// Stanford scans) into a triangle mesh.
///
/// Read: the `vertex` element's `x`, `y` and `z` properties (any numeric type, converted to
/// `f32`) and the `face` element's `vertex_indices` (or `vertex_index`) list (any integer
/// type, 0-based). Polygons are fan-triangulated around their first vertex. Other properties
/// (normals, colours, texture coordinates, ...) and other elements (edges, materials, ...)
/// are read past and ignored; so is anything after the last declared element. Vertices
/// shared by faces stay shared: no welding is needed.
///
/// The header is parsed, and each element decoded, by the `ply-rs-bw` crate; this function
/// drives it element by element, so that every error names the element and its index.
///
/// # Errors
///
/// [`MeshIoError::Parse`] for a malformed header (at its line), a header without a `vertex`
/// element with `x`, `y`, `z`, or without a `face` element with an integer index list (at
/// [`Location::Header`]), a malformed or truncated element, or a face with fewer than three
/// vertices (at [`Location::Element`], with the line in an ASCII file and the byte offset in
/// a binary one), [`MeshIoError::IndexOutOfRange`] for a face index that is negative or
/// beyond the declared vertices, [`MeshIoError::NonFiniteCoordinate`] for a coordinate that
/// is NaN, infinite or beyond `f32`, and [`MeshIoError::EmptyMesh`] if there are no faces.
pub fn read_ply(bytes: &[u8]) -> Result<TriMesh, MeshIoError> {
    let parser = Parser::<Record>::new();
    let mut reader = Reader::new(Cursor::new(bytes));
    let header = parser.read_header(&mut reader).map_err(|e| {
        let at = e.line().map_or(Location::Header, Location::Line);
        parse_error(at, message(&e))
    })?;
    let vertex_count = check_header(&header)?;
    let mut cursor = reader.into_inner();
    let header_end = cursor.position() as usize;
    let mut line = 1 + bytes[..header_end].iter().filter(|&&b| b == b'\n').count();

    let mut mesh = TriMesh {
        positions: Vec::with_capacity(vertex_count.min(1 << 20)),
        triangles: Vec::with_capacity(header.elements.get("face").map_or(0, |f| f.count).min(1 << 20)),
    };
    for def in header.elements.values() {
        match def.name.as_str() {
            "vertex" => read_elements(&parser, &mut cursor, header.encoding, def, &mut line, |r, at| {
                let p = r.xyz.map(|c| c as f32);
                if let Some(k) = p.iter().position(|c| !c.is_finite()) {
                    let text = format!("{:?}", r.xyz[k]);
                    return Err(MeshIoError::NonFiniteCoordinate { at: at.clone(), text });
                }
                mesh.positions.push(Vec3::from_array(p));
                Ok(())
            })?,
            "face" => read_elements(&parser, &mut cursor, header.encoding, def, &mut line, |r, at| {
                let n = r.indices.len();
                if r.float_list || n < 3 {
                    return Err(parse_error(
                        at.clone(),
                        format!("face has {n} vertices, expected at least 3"),
                    ));
                }
                let mut resolved = [0u32; 3];
                for (j, &index) in r.indices.iter().enumerate() {
                    let i =
                        usize::try_from(index).ok().filter(|&i| i < vertex_count).ok_or_else(|| {
                            MeshIoError::IndexOutOfRange { at: at.clone(), index, vertex_count }
                        })? as u32;
                    match j {
                        0 | 1 => resolved[j] = i,
                        _ => {
                            resolved[2] = i;
                            mesh.triangles.push(resolved);
                            resolved[1] = i;
                        }
                    }
                }
                Ok(())
            })?,
            _ => read_elements(&parser, &mut cursor, header.encoding, def, &mut line, |_, _| Ok(()))?,
        }
    }
    if mesh.triangles.is_empty() {
        return Err(MeshIoError::EmptyMesh);
    }
    Ok(mesh)
}

/// Writes the mesh as PLY: a `vertex` element with `float` `x`, `y`, `z` and a `face`
/// element with a `list uchar int vertex_indices`.
///
/// ASCII coordinates are written with the shortest representation that reads back to the
/// same `f32`, so [`read_ply`] returns an identical mesh in every encoding (for a mesh with
/// at least one triangle).
pub fn write_ply(mesh: &TriMesh, encoding: PlyEncoding) -> Vec<u8> {
    let format = match encoding {
        PlyEncoding::Ascii => "ascii",
        PlyEncoding::BinaryLittleEndian => "binary_little_endian",
        PlyEncoding::BinaryBigEndian => "binary_big_endian",
    };
    let mut header = String::new();
    // Writing to a String cannot fail.
    let _ = write!(
        header,
        "ply\nformat {format} 1.0\ncomment written by raycontact\nelement vertex {}\n\
         property float x\nproperty float y\nproperty float z\nelement face {}\n\
         property list uchar int vertex_indices\nend_header\n",
        mesh.positions.len(),
        mesh.triangles.len()
    );
    let mut out = header.into_bytes();
    let big = encoding == PlyEncoding::BinaryBigEndian;
    let word = |out: &mut Vec<u8>, bits: u32| {
        out.extend_from_slice(&if big { bits.to_be_bytes() } else { bits.to_le_bytes() });
    };
    match encoding {
        PlyEncoding::Ascii => {
            let mut text = String::with_capacity(24 * (mesh.positions.len() + mesh.triangles.len()));
            for p in &mesh.positions {
                let _ = writeln!(text, "{} {} {}", p.x, p.y, p.z);
            }
            for [a, b, c] in &mesh.triangles {
                let _ = writeln!(text, "3 {a} {b} {c}");
            }
            out.extend_from_slice(text.as_bytes());
        }
        PlyEncoding::BinaryLittleEndian | PlyEncoding::BinaryBigEndian => {
            for p in &mesh.positions {
                for c in p.to_array() {
                    word(&mut out, c.to_bits());
                }
            }
            for t in &mesh.triangles {
                out.push(3);
                for &i in t {
                    word(&mut out, i);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meshes::testing::assert_closed;
    use crate::meshes::{cuboid, load_mesh, torus};

    const ENCODINGS: [PlyEncoding; 3] =
        [PlyEncoding::Ascii, PlyEncoding::BinaryLittleEndian, PlyEncoding::BinaryBigEndian];

    #[test]
    fn round_trips_in_every_encoding_and_through_load_mesh() {
        let meshes = [torus(1.0, 0.3, 12, 7), cuboid(Vec3::new(0.1, 1e-7, 3e5), 2)];
        for mesh in &meshes {
            for encoding in ENCODINGS {
                let bytes = write_ply(mesh, encoding);
                assert_eq!(&read_ply(&bytes).unwrap(), mesh, "{encoding:?}");
            }
        }
        let dir = std::env::temp_dir().join(format!("raycontact-ply-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("torus.PLY");
        std::fs::write(&path, write_ply(&meshes[0], PlyEncoding::BinaryBigEndian)).unwrap();
        let loaded = load_mesh(&path);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(loaded.unwrap(), meshes[0]);
    }

    /// A unit cube as quads, in the layout of the Stanford scans (`list uchar int`), with
    /// properties and elements the reader skips.
    const CUBE_ASCII: &str = "ply\r\nformat ascii 1.0\ncomment a unit cube\n\
        element vertex 8\nproperty double x\nproperty float y\nproperty float z\n\
        property float nx\nproperty uchar red\nproperty list uchar float extra\n\
        element face 6\nproperty list uchar int vertex_indices\nproperty uchar flags\n\
        element edge 1\nproperty int vertex1\nproperty int vertex2\nend_header\n\
        0 0 0 0 1 0\n1 0 0 0 2 1 2 0.5\n1 1 0 0 3 0\n0 1 0 0 4 0\n\
        0 0 1 0 5 0\n1 0 1 0 6 0\n\n1 1 1 0 7 0\n0 1 1 0 8 0\n\
        4 0 3 2 1 9\n4 4 5 6 7 9\n4 0 1 5 4 9\n4 1 2 6 5 9\n4 2 3 7 6 9\n4 3 0 4 7 9\n\
        0 1\n";

    #[test]
    fn reads_polygons_other_properties_and_elements() {
        let mesh = read_ply(CUBE_ASCII.as_bytes()).unwrap();
        assert_eq!(mesh.positions.len(), 8);
        assert_eq!(mesh.positions[6], Vec3::ONE);
        assert_eq!(mesh.triangles.len(), 12);
        assert_eq!(mesh.triangles[..2], [[0, 3, 2], [0, 2, 1]]);
        assert_closed(&mesh);

        // Big endian, `vertex_index` as an unsigned short list, integer coordinates, and the
        // face element before the vertex element.
        let mut bytes = b"ply\nformat binary_big_endian 1.0\nelement face 1\n\
            property list uchar ushort vertex_index\nelement vertex 3\nproperty short x\n\
            property short y\nproperty short z\nend_header\n"
            .to_vec();
        bytes.extend_from_slice(&[3, 0, 2, 0, 1, 0, 0]);
        for p in [[1i16, 2, 3], [-4, 5, 6], [7, 8, -9]] {
            p.iter().for_each(|c| bytes.extend_from_slice(&c.to_be_bytes()));
        }
        let mesh = read_ply(&bytes).unwrap();
        assert_eq!(mesh.triangles, vec![[2, 1, 0]]);
        assert_eq!(mesh.positions[1], Vec3::new(-4.0, 5.0, 6.0));
    }

    /// The error of reading `bytes`, with its message.
    fn error(bytes: &[u8]) -> (MeshIoError, String) {
        let err = read_ply(bytes).unwrap_err();
        let text = err.to_string();
        assert!(!text.contains('\n'), "one line: {text:?}");
        (err, text)
    }

    fn at(element: &str, index: usize, line: Option<usize>, offset: Option<u64>) -> Location {
        Location::Element { element: element.into(), index, line, offset }
    }

    #[test]
    fn errors_name_the_element_and_its_line_or_offset() {
        // An index out of range, ASCII: face 1 is on line 28.
        let text = CUBE_ASCII.replace("4 4 5 6 7 9", "4 4 5 8 7 9");
        let (err, message) = error(text.as_bytes());
        assert!(
            matches!(&err, MeshIoError::IndexOutOfRange { at: a, index: 8, vertex_count: 8 }
                if *a == at("face", 1, Some(28), None)),
            "{err:?}"
        );
        assert_eq!(
            message,
            "face 1 (line 28): face vertex index 8 is out of range (the mesh has 8 vertices)"
        );

        // An index out of range and a NaN, binary: the byte offset of the element.
        let cube = cuboid(Vec3::ONE, 1);
        let header_len = |encoding| write_ply(&cube, encoding).len() - 8 * 12 - 12 * 13;
        for encoding in [PlyEncoding::BinaryLittleEndian, PlyEncoding::BinaryBigEndian] {
            let header_len = header_len(encoding);
            let mut bad = cube.clone();
            bad.triangles[5][2] = 8;
            let (err, _) = error(&write_ply(&bad, encoding));
            let offset = (header_len + 8 * 12 + 5 * 13) as u64;
            assert!(
                matches!(&err, MeshIoError::IndexOutOfRange { at: a, index: 8, .. }
                    if *a == at("face", 5, None, Some(offset))),
                "{err:?}"
            );
            let mut bad = cube.clone();
            bad.positions[3].y = f32::NAN;
            let (err, message) = error(&write_ply(&bad, encoding));
            assert!(
                matches!(&err, MeshIoError::NonFiniteCoordinate { at: a, text }
                    if *a == at("vertex", 3, None, Some(header_len as u64 + 36)) && text == "NaN"),
                "{err:?}"
            );
            assert!(message.starts_with("vertex 3 (byte offset"), "{message}");
        }

        // A NaN and a coordinate beyond f32, ASCII.
        for bad in ["nan", "1e300"] {
            let text = CUBE_ASCII.replace("\n1 1 0 0 3 0\n", &format!("\n1 {bad} 0 0 3 0\n"));
            let (err, _) = error(text.as_bytes());
            assert!(
                matches!(&err, MeshIoError::NonFiniteCoordinate { at: a, .. } if *a == at("vertex", 2, Some(20), None)),
                "{err:?}"
            );
        }

        // Truncated binary files: in the faces, in the vertices.
        let header_len = header_len(PlyEncoding::BinaryLittleEndian);
        let bytes = write_ply(&cube, PlyEncoding::BinaryLittleEndian);
        let (err, message) = error(&bytes[..bytes.len() - 3]);
        assert!(
            matches!(&err, MeshIoError::Parse { at: a, .. } if *a == at("face", 11, None, Some(bytes.len() as u64 - 13))),
            "{err:?}"
        );
        assert!(
            message.contains("unexpected end of file: the header declares 12 `face` elements"),
            "{message}"
        );
        let (err, _) = error(&bytes[..header_len + 30]);
        assert!(
            matches!(&err, MeshIoError::Parse { at: a, .. } if *a == at("vertex", 2, None, Some(header_len as u64 + 24))),
            "{err:?}"
        );

        // A truncated ASCII file, a malformed element, a face of two vertices.
        let (err, _) = error(&CUBE_ASCII.as_bytes()[..CUBE_ASCII.len() - 4]);
        assert!(
            matches!(&err, MeshIoError::Parse { at: a, .. } if *a == at("edge", 0, Some(33), None)),
            "{err:?}"
        );
        let text = CUBE_ASCII.replace("4 2 3 7 6 9", "4 2 3 x 6 9");
        let (err, _) = error(text.as_bytes());
        assert!(
            matches!(&err, MeshIoError::Parse { at: a, .. } if *a == at("face", 4, Some(31), None)),
            "{err:?}"
        );
        let text = CUBE_ASCII.replace("4 2 3 7 6 9", "2 2 3 9");
        let (err, message) = error(text.as_bytes());
        assert!(
            matches!(&err, MeshIoError::Parse { at: a, .. } if *a == at("face", 4, Some(31), None)),
            "{err:?}"
        );
        assert!(message.ends_with("face has 2 vertices, expected at least 3"), "{message}");
    }

    #[test]
    fn header_errors() {
        let (err, _) = error(b"ply\nformat ascii 1.0\nelement vertex x\nend_header\n");
        assert!(matches!(err, MeshIoError::Parse { at: Location::Line(3), .. }), "{err:?}");
        let (err, _) = error(b"OFF\n3 1 0\n");
        assert!(matches!(err, MeshIoError::Parse { at: Location::Line(1), .. }), "{err:?}");
        let (err, _) = error(b"");
        assert!(matches!(err, MeshIoError::Parse { .. }), "{err:?}");
        for (header, expected) in [
            ("element face 0\nproperty list uchar int vertex_indices\n", "no `vertex` element"),
            ("element vertex 0\nproperty float x\nproperty float y\n", "no `z` property"),
            ("element vertex 0\nproperty float x\nproperty float y\nproperty float z\n", "no `face` element"),
            (
                "element vertex 0\nproperty float x\nproperty float y\nproperty float z\n\
                 element face 0\nproperty list uchar float vertex_indices\n",
                "not a list of integers",
            ),
        ] {
            let (err, message) = error(format!("ply\nformat ascii 1.0\n{header}end_header\n").as_bytes());
            assert!(matches!(err, MeshIoError::Parse { at: Location::Header, .. }), "{err:?}");
            assert!(message.starts_with("header: ") && message.contains(expected), "{message}");
        }
        let empty = "ply\nformat ascii 1.0\nelement vertex 0\nproperty float x\nproperty float y\n\
            property float z\nelement face 0\nproperty list uchar int vertex_indices\nend_header\n";
        assert!(matches!(read_ply(empty.as_bytes()), Err(MeshIoError::EmptyMesh)));
    }
}
