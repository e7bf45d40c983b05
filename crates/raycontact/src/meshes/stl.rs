//! Reading and writing STL (stereolithography) files, ASCII and binary.

use std::collections::HashMap;
use std::fmt::Write as _;

use glam::Vec3;

use super::TriMesh;
use super::error::{Location, MeshIoError, element, parse_error};

/// The encoding [`write_stl`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StlEncoding {
    /// `solid` ... `facet normal` ... `endsolid` text.
    Ascii,
    /// An 80-byte header, a little-endian `u32` triangle count, then 50 bytes per triangle.
    Binary,
}

/// Size of the binary header plus the triangle count.
const BINARY_HEADER: usize = 84;
/// Size of one binary triangle record: normal, three corners, attribute byte count.
const BINARY_RECORD: usize = 50;

/// Builds an indexed mesh from STL's separate corners, merging corners at identical
/// coordinates (`-0.0` and `0.0` alike) into one vertex. Every triangle is kept.
#[derive(Default)]
struct Indexer {
    mesh: TriMesh,
    seen: HashMap<[u32; 3], u32>,
}

impl Indexer {
    fn push(&mut self, corners: [Vec3; 3]) {
        let triangle = corners.map(|p| {
            let key = (p + Vec3::ZERO).to_array().map(f32::to_bits);
            *self.seen.entry(key).or_insert_with(|| {
                self.mesh.positions.push(p);
                (self.mesh.positions.len() - 1) as u32
            })
        });
        self.mesh.triangles.push(triangle);
    }
}

/// Parses an STL file, ASCII or binary, into a triangle mesh.
///
/// STL stores each triangle's three corners separately (a triangle soup). This reader
/// merges corners at bit-identical coordinates (`-0.0` and `0.0` alike) into one vertex,
/// in order of first appearance, and keeps every triangle, so that neighbouring triangles
/// share their vertices as in the file they were exported from. Corners that differ by
/// rounding are not merged: weld them with [`TriMesh::weld`] and a tolerance (the bench's
/// `--weld-tolerance`). Normals and attribute bytes are ignored (the winding gives the
/// orientation).
///
/// A file is binary when its length is exactly 84 bytes plus 50 per triangle declared at
/// bytes 80..84, whatever its first bytes say (many binary exporters begin the header with
/// `solid`); otherwise it is ASCII if it begins with `solid`, and binary if not. ASCII files
/// may hold several `solid` ... `endsolid` blocks; `facet normal` may omit its values.
///
/// # Errors
///
/// [`MeshIoError::Parse`] for a binary file shorter than its header or than the triangles it
/// declares, or longer, and for an unexpected keyword or malformed number in an ASCII file
/// (at the facet and line), [`MeshIoError::NonFiniteCoordinate`] for a NaN, infinite or
/// out-of-range corner coordinate, and [`MeshIoError::EmptyMesh`] if there are no triangles.
pub fn read_stl(bytes: &[u8]) -> Result<TriMesh, MeshIoError> {
    let declared =
        bytes.get(80..BINARY_HEADER).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    let binary_size = declared.map(|n| BINARY_HEADER as u128 + BINARY_RECORD as u128 * n as u128);
    let looks_ascii = bytes.trim_ascii_start().starts_with(b"solid");
    let mesh = if binary_size == Some(bytes.len() as u128) || !looks_ascii {
        read_binary(bytes)?
    } else {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            parse_error(
                Location::Header,
                format!("begins with `solid` but is not UTF-8 text (ASCII STL): {e}"),
            )
        })?;
        read_ascii(text)?
    };
    if mesh.triangles.is_empty() {
        return Err(MeshIoError::EmptyMesh);
    }
    Ok(mesh)
}

/// Reads a binary STL file.
fn read_binary(bytes: &[u8]) -> Result<TriMesh, MeshIoError> {
    let Some(count) = bytes.get(80..BINARY_HEADER) else {
        return Err(parse_error(
            Location::Header,
            format!(
                "the file has {} bytes, fewer than a binary STL header (84), and does not begin with \
                 `solid` (ASCII STL)",
                bytes.len()
            ),
        ));
    };
    let count = u32::from_le_bytes([count[0], count[1], count[2], count[3]]) as usize;
    let records = &bytes[BINARY_HEADER..];
    let complete = records.len() / BINARY_RECORD;
    if complete < count {
        return Err(parse_error(
            element("facet", complete, None, Some((BINARY_HEADER + complete * BINARY_RECORD) as u64)),
            format!(
                "unexpected end of file: the header declares {count} triangles, the file holds {complete} \
                 and {} bytes",
                records.len() - complete * BINARY_RECORD
            ),
        ));
    }
    if records.len() != count * BINARY_RECORD {
        return Err(parse_error(
            Location::Header,
            format!(
                "the header declares {count} triangles ({} bytes in all), but the file has {} bytes",
                BINARY_HEADER + count * BINARY_RECORD,
                bytes.len()
            ),
        ));
    }
    let mut indexer = Indexer::default();
    indexer.mesh.triangles.reserve(count);
    for (k, record) in records.chunks_exact(BINARY_RECORD).enumerate() {
        let float = |i: usize| {
            let b = &record[12 + 4 * i..16 + 4 * i];
            f32::from_le_bytes([b[0], b[1], b[2], b[3]])
        };
        let coords: [f32; 9] = std::array::from_fn(float);
        if let Some(bad) = coords.iter().find(|c| !c.is_finite()) {
            let at = element("facet", k, None, Some((BINARY_HEADER + k * BINARY_RECORD) as u64));
            return Err(MeshIoError::NonFiniteCoordinate { at, text: format!("{bad:?}") });
        }
        let corner = |c: usize| Vec3::new(coords[3 * c], coords[3 * c + 1], coords[3 * c + 2]);
        indexer.push([corner(0), corner(1), corner(2)]);
    }
    Ok(indexer.mesh)
}

/// The whitespace-separated words of a text, with their 1-based lines.
struct Words<'a> {
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    line: usize,
    words: std::str::SplitAsciiWhitespace<'a>,
}

impl<'a> Words<'a> {
    fn new(text: &'a str) -> Self {
        Words { lines: text.lines().enumerate(), line: 0, words: "".split_ascii_whitespace() }
    }

    /// The next word and its line.
    fn next(&mut self) -> Option<(usize, &'a str)> {
        loop {
            if let Some(word) = self.words.next() {
                return Some((self.line, word));
            }
            let (index, line) = self.lines.next()?;
            self.line = index + 1;
            self.words = line.split_ascii_whitespace();
        }
    }

    /// Skips the rest of the current line (a solid's name).
    fn skip_line(&mut self) {
        self.words = "".split_ascii_whitespace();
    }

    /// The last line read, for errors at the end of the file.
    fn line(&self) -> usize {
        self.line.max(1)
    }
}

/// Reads an ASCII STL file.
fn read_ascii(text: &str) -> Result<TriMesh, MeshIoError> {
    let mut words = Words::new(text);
    let mut indexer = Indexer::default();
    // Starts with `solid` (checked by the caller).
    words.next();
    words.skip_line();
    let mut facet = 0;
    // A missing final `endsolid` is tolerated.
    while let Some((line, word)) = words.next() {
        match word {
            "endsolid" => {
                words.skip_line();
                match words.next() {
                    None => break,
                    Some((_, "solid")) => words.skip_line(),
                    Some((line, other)) => {
                        return Err(parse_error(
                            Location::Line(line),
                            format!(
                                "expected `solid` or the end of the file after `endsolid`, found `{other}`"
                            ),
                        ));
                    }
                }
            }
            "facet" => {
                indexer.push(read_facet(&mut words, facet)?);
                facet += 1;
            }
            other => {
                return Err(parse_error(
                    element("facet", facet, Some(line), None),
                    format!("expected `facet` or `endsolid`, found `{other}`"),
                ));
            }
        }
    }
    Ok(indexer.mesh)
}

/// Reads one facet after its `facet` keyword: `[normal [nx ny nz]] outer loop`, three
/// `vertex x y z`, `endloop endfacet`.
fn read_facet<'a>(words: &mut Words<'a>, facet: usize) -> Result<[Vec3; 3], MeshIoError> {
    let at = |line: usize| element("facet", facet, Some(line), None);
    let next = |words: &mut Words<'a>, what: &str| {
        let line = words.line();
        words.next().ok_or_else(|| parse_error(at(line), format!("unexpected end of file, expected {what}")))
    };
    let keyword = |words: &mut Words<'a>, keyword: &str| {
        let (line, word) = next(words, &format!("`{keyword}`"))?;
        if word == keyword {
            Ok(())
        } else {
            Err(parse_error(at(line), format!("expected `{keyword}`, found `{word}`")))
        }
    };
    let (mut line, mut word) = next(words, "`normal` or `outer`")?;
    if word == "normal" {
        // The normal is ignored: up to three values, which some writers leave out.
        for _ in 0..4 {
            (line, word) = next(words, "`outer`")?;
            if word == "outer" {
                break;
            }
        }
    }
    if word != "outer" {
        return Err(parse_error(at(line), format!("expected `outer`, found `{word}`")));
    }
    keyword(words, "loop")?;
    let mut corners = [Vec3::ZERO; 3];
    for corner in &mut corners {
        keyword(words, "vertex")?;
        let mut p = [0.0f32; 3];
        for c in &mut p {
            let (line, text) = next(words, "a vertex coordinate")?;
            let value: f32 = text
                .parse()
                .map_err(|_| parse_error(at(line), format!("invalid vertex coordinate `{text}`")))?;
            if !value.is_finite() {
                return Err(MeshIoError::NonFiniteCoordinate { at: at(line), text: text.to_owned() });
            }
            *c = value;
        }
        *corner = Vec3::from_array(p);
    }
    keyword(words, "endloop")?;
    keyword(words, "endfacet")?;
    Ok(corners)
}

/// Writes the mesh as STL, each triangle with its unit normal (zero for a degenerate
/// triangle).
///
/// ASCII coordinates are written with the shortest representation that reads back to the
/// same `f32`. [`read_stl`] returns the same triangles over the same positions (vertices
/// are renumbered in order of first use, and unused or duplicate vertices disappear).
pub fn write_stl(mesh: &TriMesh, encoding: StlEncoding) -> Vec<u8> {
    let normal = |t: [u32; 3]| {
        let [a, b, c] = mesh.corners(t);
        (b - a).cross(c - a).normalize_or_zero()
    };
    match encoding {
        StlEncoding::Ascii => {
            let mut out = String::with_capacity(160 * mesh.triangles.len() + 32);
            // Writing to a String cannot fail.
            let _ = writeln!(out, "solid raycontact");
            for &t in &mesh.triangles {
                let n = normal(t);
                let _ = writeln!(out, "  facet normal {} {} {}\n    outer loop", n.x, n.y, n.z);
                for p in mesh.corners(t) {
                    let _ = writeln!(out, "      vertex {} {} {}", p.x, p.y, p.z);
                }
                let _ = writeln!(out, "    endloop\n  endfacet");
            }
            let _ = writeln!(out, "endsolid raycontact");
            out.into_bytes()
        }
        StlEncoding::Binary => {
            let mut out = Vec::with_capacity(BINARY_HEADER + BINARY_RECORD * mesh.triangles.len());
            let mut header = [b' '; 80];
            header[..23].copy_from_slice(b"binary STL, raycontact ");
            out.extend_from_slice(&header);
            out.extend_from_slice(&(mesh.triangles.len() as u32).to_le_bytes());
            for &t in &mesh.triangles {
                let [a, b, c] = mesh.corners(t);
                for v in [normal(t), a, b, c] {
                    for x in v.to_array() {
                        out.extend_from_slice(&x.to_le_bytes());
                    }
                }
                out.extend_from_slice(&[0, 0]);
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meshes::testing::assert_closed;
    use crate::meshes::{cuboid, load_mesh, torus};

    /// Same triangles, corner for corner, and the positions merged back to the original count.
    fn assert_same_triangles(read: &TriMesh, mesh: &TriMesh) {
        assert_eq!(read.triangles.len(), mesh.triangles.len());
        for (&r, &m) in read.triangles.iter().zip(&mesh.triangles) {
            assert_eq!(read.corners(r), mesh.corners(m));
        }
        assert_eq!(read.positions.len(), mesh.positions.len());
        assert_eq!(read.weld(0.0).1, 0, "exact duplicates are merged on reading");
    }

    #[test]
    fn round_trips_ascii_and_binary_with_shared_vertices() {
        let meshes = [torus(1.0, 0.3, 12, 7), cuboid(Vec3::new(0.1, 1e-7, 3e5), 2)];
        for mesh in &meshes {
            for encoding in [StlEncoding::Ascii, StlEncoding::Binary] {
                let read = read_stl(&write_stl(mesh, encoding)).unwrap();
                assert_same_triangles(&read, mesh);
                assert_closed(&read);
            }
        }
        let dir = std::env::temp_dir().join(format!("raycontact-stl-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("torus.Stl");
        std::fs::write(&path, write_stl(&meshes[0], StlEncoding::Binary)).unwrap();
        let loaded = load_mesh(&path);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_same_triangles(&loaded.unwrap(), &meshes[0]);
    }

    #[test]
    fn binary_header_beginning_with_solid_and_ascii_variants() {
        let mesh = cuboid(Vec3::ONE, 1);
        let mut bytes = write_stl(&mesh, StlEncoding::Binary);
        bytes[..12].copy_from_slice(b"solid cube  ");
        assert_same_triangles(&read_stl(&bytes).unwrap(), &mesh);

        // No solid name, CRLF, a normal without values, -0.0, two solids, no final endsolid.
        let text = "solid\r\nfacet normal\r\nouter loop\r\nvertex 0 0 0\r\nvertex 1 0 0\r\nvertex 0 1 0\r\n\
            endloop\r\nendfacet\r\nendsolid\r\nsolid second part\n  facet normal 0 0 1 outer loop\n\
            vertex -0 0 0\nvertex 0 1 0\nvertex -1 0 0\nendloop endfacet\n";
        let read = read_stl(text.as_bytes()).unwrap();
        assert_eq!(read.triangles, vec![[0, 1, 2], [0, 2, 3]]);
        assert_eq!(read.positions.len(), 4);
    }

    /// The error of reading `bytes`, with its message.
    fn error(bytes: &[u8]) -> (MeshIoError, String) {
        let err = read_stl(bytes).unwrap_err();
        let text = err.to_string();
        assert!(!text.contains('\n'), "one line: {text:?}");
        (err, text)
    }

    fn at(index: usize, line: Option<usize>, offset: Option<u64>) -> Location {
        Location::Element { element: "facet".into(), index, line, offset }
    }

    #[test]
    fn errors_name_the_facet_and_its_line_or_offset() {
        let mesh = cuboid(Vec3::ONE, 1);
        let bytes = write_stl(&mesh, StlEncoding::Binary);
        // Truncated in triangle 11.
        let (err, message) = error(&bytes[..bytes.len() - 7]);
        assert!(
            matches!(&err, MeshIoError::Parse { at: a, .. } if *a == at(11, None, Some(84 + 11 * 50))),
            "{err:?}"
        );
        assert_eq!(
            message,
            "facet 11 (byte offset 634): unexpected end of file: the header declares 12 triangles, the file \
             holds 11 and 43 bytes"
        );
        // Trailing bytes, a file shorter than the header.
        let (err, _) = error(&[bytes.as_slice(), &[0; 3]].concat());
        assert!(matches!(err, MeshIoError::Parse { at: Location::Header, .. }), "{err:?}");
        let (err, _) = error(&bytes[..40]);
        assert!(matches!(err, MeshIoError::Parse { at: Location::Header, .. }), "{err:?}");
        // A NaN corner in triangle 4 (its second corner's y).
        let mut bad = bytes.clone();
        let offset = 84 + 4 * 50 + 12 + 12 + 4;
        bad[offset..offset + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        let (err, message) = error(&bad);
        assert!(
            matches!(&err, MeshIoError::NonFiniteCoordinate { at: a, text } if *a == at(4, None, Some(284)) && text == "NaN"),
            "{err:?}"
        );
        assert_eq!(
            message,
            "facet 4 (byte offset 284): vertex coordinate `NaN` is not a finite 32-bit float"
        );
        // No triangles.
        assert!(matches!(
            read_stl(&bytes[..84].iter().map(|_| 0).collect::<Vec<u8>>()),
            Err(MeshIoError::EmptyMesh)
        ));
        assert!(matches!(read_stl(b"solid empty\nendsolid empty\n"), Err(MeshIoError::EmptyMesh)));

        // ASCII: a NaN, a missing keyword, a malformed number, the end of the file.
        let text = String::from_utf8(write_stl(&mesh, StlEncoding::Ascii)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let edit = |line: usize, new: &str| {
            let mut l = lines.clone();
            l[line - 1] = new;
            l.join("\n")
        };
        // Facet k spans lines 2 + 7k ..= 8 + 7k; its corners are on lines 4 + 7k ..= 6 + 7k.
        let (err, _) = error(edit(4 + 7 * 3 + 1, "vertex 0 nan 0").as_bytes());
        assert!(
            matches!(&err, MeshIoError::NonFiniteCoordinate { at: a, text } if *a == at(3, Some(26), None) && text == "nan"),
            "{err:?}"
        );
        let (err, message) = error(edit(7 + 7 * 2, "endfacet").as_bytes());
        assert!(matches!(&err, MeshIoError::Parse { at: a, .. } if *a == at(2, Some(21), None)), "{err:?}");
        assert_eq!(message, "facet 2 (line 21): expected `endloop`, found `endfacet`");
        let (err, _) = error(edit(5, "vertex 1 2,5 3").as_bytes());
        assert!(matches!(&err, MeshIoError::Parse { at: a, .. } if *a == at(0, Some(5), None)), "{err:?}");
        let (err, message) = error(lines[..12].join("\n").as_bytes());
        assert!(matches!(&err, MeshIoError::Parse { at: a, .. } if *a == at(1, Some(12), None)), "{err:?}");
        assert!(message.contains("unexpected end of file, expected `vertex`"), "{message}");
        let (err, _) = error(edit(9, "facets normal 0 0 1").as_bytes());
        assert!(matches!(&err, MeshIoError::Parse { at: a, .. } if *a == at(1, Some(9), None)), "{err:?}");
    }
}
