//! Reading meshes from Wavefront OBJ and OFF text, loading mesh files of any supported format,
//! and writing OBJ text.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use glam::Vec3;

use super::error::{self, Location, MeshIoError};
use super::{TriMesh, ply, stl};

fn parse_error(line: usize, message: String) -> MeshIoError {
    error::parse_error(Location::Line(line), message)
}

/// Parses a vertex coordinate token.
fn parse_coord(text: &str, line: usize) -> Result<f32, MeshIoError> {
    let value: f32 =
        text.parse().map_err(|_| parse_error(line, format!("invalid vertex coordinate `{text}`")))?;
    if value.is_finite() {
        Ok(value)
    } else {
        Err(MeshIoError::NonFiniteCoordinate { at: Location::Line(line), text: text.to_owned() })
    }
}

/// Parses the first three coordinates of a vertex statement; extra tokens are ignored.
fn parse_vertex<'a>(mut tokens: impl Iterator<Item = &'a str>, line: usize) -> Result<Vec3, MeshIoError> {
    let mut p = [0.0; 3];
    for (k, c) in p.iter_mut().enumerate() {
        let text = tokens
            .next()
            .ok_or_else(|| parse_error(line, format!("vertex has {k} coordinates, expected 3")))?;
        *c = parse_coord(text, line)?;
    }
    Ok(Vec3::from_array(p))
}

/// Strips a `#` comment and surrounding whitespace.
fn strip_comment(line: &str) -> &str {
    line.split('#').next().unwrap_or("").trim()
}

/// Parses Wavefront OBJ text into a triangle mesh.
///
/// Supported: vertices `v x y z [w]` (`w` and any further values, such as vertex
/// colours, are ignored), faces `f a b c ...` whose vertices are written `a`,
/// `a/b`, `a/b/c` or `a//c` (only the position index is used), 1-based and
/// negative (relative to the last vertex defined so far) indices, and `#`
/// comments. Polygons are fan-triangulated around their first vertex. All other
/// statements (`vt`, `vn`, `o`, `g`, `s`, `usemtl`, `mtllib`, `l`, ...) are
/// ignored.
///
/// # Errors
///
/// [`MeshIoError::Parse`] for a malformed number or a face with fewer than three
/// vertices, [`MeshIoError::IndexOutOfRange`] for a face index of 0 or beyond the
/// vertices, [`MeshIoError::NonFiniteCoordinate`] for an infinite or NaN
/// coordinate and [`MeshIoError::EmptyMesh`] if there are no faces.
pub fn read_obj(text: &str) -> Result<TriMesh, MeshIoError> {
    let mut mesh = TriMesh::default();
    // Largest 0-based positive index seen, with its line and original text, so
    // that faces may refer to vertices defined later in the file.
    let mut max_forward: Option<(u32, usize, i64)> = None;
    let mut face: Vec<u32> = Vec::new();
    for (line_index, raw) in text.lines().enumerate() {
        let line = line_index + 1;
        let mut tokens = strip_comment(raw).split_ascii_whitespace();
        match tokens.next() {
            Some("v") => mesh.positions.push(parse_vertex(tokens, line)?),
            Some("f") => {
                face.clear();
                let vertex_count = mesh.positions.len();
                for token in tokens {
                    let text = token.split('/').next().unwrap_or("");
                    let index: i64 = text
                        .parse()
                        .map_err(|_| parse_error(line, format!("invalid face vertex index `{token}`")))?;
                    let out_of_range =
                        || MeshIoError::IndexOutOfRange { at: Location::Line(line), index, vertex_count };
                    let resolved = match index {
                        0 => return Err(out_of_range()),
                        i if i < 0 => vertex_count as i64 + i,
                        i => i - 1,
                    };
                    let resolved = u32::try_from(resolved).map_err(|_| out_of_range())?;
                    if index > 0 && max_forward.is_none_or(|(m, ..)| resolved > m) {
                        max_forward = Some((resolved, line, index));
                    }
                    face.push(resolved);
                }
                if face.len() < 3 {
                    return Err(parse_error(
                        line,
                        format!("face has {} vertices, expected at least 3", face.len()),
                    ));
                }
                for pair in face[1..].windows(2) {
                    mesh.triangles.push([face[0], pair[0], pair[1]]);
                }
            }
            _ => {}
        }
    }
    if let Some((max, line, index)) = max_forward {
        if max as usize >= mesh.positions.len() {
            return Err(MeshIoError::IndexOutOfRange {
                at: Location::Line(line),
                index,
                vertex_count: mesh.positions.len(),
            });
        }
    }
    if mesh.triangles.is_empty() {
        return Err(MeshIoError::EmptyMesh);
    }
    Ok(mesh)
}

/// Parses Object File Format (OFF) text into a triangle mesh.
///
/// Layout: a header line `OFF` (the variants `COFF`, `NOFF`, `CNOFF`, `STOFF`,
/// ... are accepted, their extra per-vertex values ignored), the counts
/// `vertices faces [edges]` (on the header line or the next line), one vertex
/// `x y z` per line, then one face `n i0 i1 ... i(n-1)` per line with 0-based
/// indices (trailing face colours are ignored). `#` starts a comment; blank lines
/// are skipped. Polygons are fan-triangulated around their first vertex.
///
/// # Errors
///
/// [`MeshIoError::Parse`] for a missing header, a malformed number, a face with
/// fewer than three vertices or a file that ends early,
/// [`MeshIoError::IndexOutOfRange`], [`MeshIoError::NonFiniteCoordinate`] and
/// [`MeshIoError::EmptyMesh`] as for [`read_obj`].
pub fn read_off(text: &str) -> Result<TriMesh, MeshIoError> {
    let mut lines =
        text.lines().enumerate().map(|(i, l)| (i + 1, strip_comment(l))).filter(|(_, l)| !l.is_empty());
    let end_line = text.lines().count().max(1);
    let mut next_line = |what: &str| {
        let (line, content) = lines
            .next()
            .ok_or_else(|| parse_error(end_line, format!("unexpected end of file, expected {what}")))?;
        Ok::<_, MeshIoError>((line, content.split_ascii_whitespace()))
    };

    let (header_line, mut header) = next_line("the `OFF` header")?;
    let keyword = header.next().unwrap_or("");
    let keyword_ok = keyword
        .strip_suffix("OFF")
        .and_then(|prefix| prefix.strip_prefix("ST").or(Some(prefix)))
        .and_then(|prefix| prefix.strip_prefix('C').or(Some(prefix)))
        .and_then(|prefix| prefix.strip_prefix('N').or(Some(prefix)))
        .is_some_and(str::is_empty);
    if !keyword_ok {
        return Err(parse_error(header_line, format!("expected the `OFF` header, found `{keyword}`")));
    }
    let mut counts: Vec<&str> = header.collect();
    let mut counts_line = header_line;
    if counts.is_empty() {
        let (line, tokens) = next_line("the vertex and face counts")?;
        counts = tokens.collect();
        counts_line = line;
    }
    let parse_count = |k: usize, what: &str| -> Result<usize, MeshIoError> {
        let text = counts.get(k).copied().unwrap_or("");
        text.parse().map_err(|_| parse_error(counts_line, format!("invalid {what} count `{text}`")))
    };
    let vertex_count = parse_count(0, "vertex")?;
    let face_count = parse_count(1, "face")?;

    let mut mesh = TriMesh {
        positions: Vec::with_capacity(vertex_count.min(1 << 20)),
        triangles: Vec::with_capacity(face_count.min(1 << 20)),
    };
    for k in 0..vertex_count {
        let (line, tokens) = next_line(&format!("vertex {k} of {vertex_count}"))?;
        mesh.positions.push(parse_vertex(tokens, line)?);
    }
    for k in 0..face_count {
        let (line, mut tokens) = next_line(&format!("face {k} of {face_count}"))?;
        let n_text = tokens.next().unwrap_or("");
        let n: usize =
            n_text.parse().map_err(|_| parse_error(line, format!("invalid face vertex count `{n_text}`")))?;
        if n < 3 {
            return Err(parse_error(line, format!("face has {n} vertices, expected at least 3")));
        }
        let mut first_two = [0u32; 2];
        for j in 0..n {
            let text = tokens
                .next()
                .ok_or_else(|| parse_error(line, format!("face declares {n} vertices but lists {j}")))?;
            let index: i64 =
                text.parse().map_err(|_| parse_error(line, format!("invalid face vertex index `{text}`")))?;
            let resolved = usize::try_from(index)
                .ok()
                .filter(|&i| i < vertex_count)
                .ok_or(MeshIoError::IndexOutOfRange { at: Location::Line(line), index, vertex_count })?
                as u32;
            match j {
                0 | 1 => first_two[j] = resolved,
                _ => {
                    mesh.triangles.push([first_two[0], first_two[1], resolved]);
                    first_two[1] = resolved;
                }
            }
        }
    }
    if mesh.triangles.is_empty() {
        return Err(MeshIoError::EmptyMesh);
    }
    Ok(mesh)
}

/// The file extensions [`load_mesh`] reads (lower case; matched case-insensitively).
pub const MESH_EXTENSIONS: [&str; 4] = ["obj", "off", "ply", "stl"];

/// Reads a mesh file, choosing the format from the extension: `.obj` ([`read_obj`]),
/// `.off` ([`read_off`]), `.ply` ([`read_ply`](super::read_ply)) or `.stl`
/// ([`read_stl`](super::read_stl)), case-insensitive.
///
/// Errors name the line (text formats) or the element and its index (PLY, STL), never the
/// file: callers that report them prefix the path.
///
/// # Errors
///
/// [`MeshIoError::UnsupportedFormat`] for another extension,
/// [`MeshIoError::Io`] if the file cannot be read (or, for OBJ and OFF, is not UTF-8
/// text), and the errors of the format's reader.
pub fn load_mesh(path: &Path) -> Result<TriMesh, MeshIoError> {
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let reader: fn(&[u8]) -> Result<TriMesh, MeshIoError> = match extension.as_deref() {
        Some("obj") => |bytes| read_obj(utf8(bytes)?),
        Some("off") => |bytes| read_off(utf8(bytes)?),
        Some("ply") => ply::read_ply,
        Some("stl") => stl::read_stl,
        _ => {
            return Err(MeshIoError::UnsupportedFormat { path: path.to_owned() });
        }
    };
    let io_error = |source| MeshIoError::Io { path: path.to_owned(), source };
    let bytes = std::fs::read(path).map_err(io_error)?;
    reader(&bytes).map_err(|e| match e {
        // `utf8` has no path to name.
        MeshIoError::Io { source, .. } => io_error(source),
        other => other,
    })
}

/// The bytes as UTF-8 text, or the I/O error `read_to_string` gives (its path filled in by
/// [`load_mesh`]).
fn utf8(bytes: &[u8]) -> Result<&str, MeshIoError> {
    std::str::from_utf8(bytes).map_err(|e| MeshIoError::Io {
        path: PathBuf::new(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not UTF-8 text: {e}")),
    })
}

/// Writes the mesh as Wavefront OBJ text (`v` lines, then 1-based `f` lines).
///
/// Coordinates are written with the shortest representation that reads back to
/// the same `f32`, so [`read_obj`] returns an identical mesh (for a mesh with at
/// least one triangle).
pub fn write_obj(mesh: &TriMesh) -> String {
    let mut out = String::with_capacity(32 * (mesh.positions.len() + mesh.triangles.len()) + 64);
    // Writing to a String cannot fail.
    let _ = writeln!(out, "# {} vertices, {} triangles", mesh.positions.len(), mesh.triangles.len());
    for p in &mesh.positions {
        let _ = writeln!(out, "v {} {} {}", p.x, p.y, p.z);
    }
    for [a, b, c] in &mesh.triangles {
        let _ = writeln!(out, "f {} {} {}", a + 1, b + 1, c + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meshes::testing::{assert_close, assert_closed};
    use crate::meshes::{cuboid, torus};

    #[test]
    fn obj_reads_all_face_forms_negative_indices_and_polygons() {
        let text = "# a comment\r\n\
            mtllib foo.mtl\n\
            o thing\n\
            v 0 0 0\n\
            v 1 0 0 1.0\n\
            v 1 1 0 0.5 0.5 0.5\n\
            v 0 1 0 # trailing comment\n\
            vt 0 0\n\
            vn 0 0 1\n\
            g group\n\
            s off\n\
            usemtl m\n\
            f 1 2 3\n\
            f 1/1 3/1 4/1\n\
            f 1/1/1 2/1/1 3/1/1\n\
            f 1//1 3//1 4//1\n\
            f -4 -3 -2 -1\n\
            l 1 2\n";
        let mesh = read_obj(text).unwrap();
        assert_eq!(mesh.positions.len(), 4);
        assert_eq!(mesh.positions[2], Vec3::new(1.0, 1.0, 0.0));
        assert_eq!(mesh.triangles, vec![[0, 1, 2], [0, 2, 3], [0, 1, 2], [0, 2, 3], [0, 1, 2], [0, 2, 3]]);
        // Negative indices are relative to the vertices defined so far.
        let mesh = read_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\nv 0 0 1\nf -4 -2 -1\n").unwrap();
        assert_eq!(mesh.triangles, vec![[0, 1, 2], [0, 2, 3]]);
        // Positive indices may refer forward.
        let mesh = read_obj("f 1 2 3\nv 0 0 0\nv 1 0 0\nv 0 1 0\n").unwrap();
        assert_eq!(mesh.triangles, vec![[0, 1, 2]]);
    }

    #[test]
    fn obj_reports_errors_with_line_numbers() {
        let err = read_obj("v 0 0 0\nv 1 x 0\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { at: Location::Line(2), .. }), "{err:?}");
        assert_eq!(err.to_string(), "line 2: invalid vertex coordinate `x`");

        let err = read_obj("v 0 0\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { at: Location::Line(1), .. }), "{err:?}");

        let err = read_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { at: Location::Line(5), .. }), "{err:?}");

        let err = read_obj("v 0 0 0\nv 1 0 0\nf 1 2 a/1\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { at: Location::Line(3), .. }), "{err:?}");

        let err = read_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\nf 1 2 3\n").unwrap_err();
        assert!(
            matches!(err, MeshIoError::IndexOutOfRange { at: Location::Line(4), index: 4, vertex_count: 3 }),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "line 4: face vertex index 4 is out of range (the mesh has 3 vertices)");

        let err = read_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n").unwrap_err();
        assert!(
            matches!(err, MeshIoError::IndexOutOfRange { at: Location::Line(4), index: 0, .. }),
            "{err:?}"
        );

        let err = read_obj("v 0 0 0\nv 1 0 0\nf -1 -2 -3\nv 0 1 0\n").unwrap_err();
        assert!(
            matches!(err, MeshIoError::IndexOutOfRange { at: Location::Line(3), index: -3, vertex_count: 2 }),
            "{err:?}"
        );

        for bad in ["nan", "inf", "-inf", "1e999"] {
            let err = read_obj(&format!("v 0 0 0\nv 0 {bad} 0\n")).unwrap_err();
            assert!(
                matches!(&err, MeshIoError::NonFiniteCoordinate { at: Location::Line(2), text } if text == bad),
                "{err:?}"
            );
        }

        let err = read_obj("# nothing\nv 0 0 0\n").unwrap_err();
        assert!(matches!(err, MeshIoError::EmptyMesh), "{err:?}");
        assert!(matches!(read_obj("").unwrap_err(), MeshIoError::EmptyMesh));
    }

    const CUBE_OFF: &str = "OFF\n\
        # a unit cube\n\
        8 6 12\n\
        0 0 0\n1 0 0\n1 1 0\n0 1 0\n\
        0 0 1\n1 0 1\n1 1 1\n0 1 1\n\
        \n\
        4 0 3 2 1\n\
        4 4 5 6 7\n\
        4 0 1 5 4\n\
        4 1 2 6 5 255 0 0\n\
        4 2 3 7 6\n\
        4 3 0 4 7\n";

    #[test]
    fn off_reads_polygons_comments_and_inline_counts() {
        let mesh = read_off(CUBE_OFF).unwrap();
        assert_eq!(mesh.positions.len(), 8);
        assert_eq!(mesh.triangles.len(), 12);
        assert_eq!(mesh.triangles[0], [0, 3, 2]);
        assert_eq!(mesh.triangles[1], [0, 2, 1]);
        assert_closed(&mesh);
        assert_close(mesh.signed_volume(), 1.0, 1e-6);

        let inline = "OFF 3 1 0\n0 0 0\n1 0 0 # comment\n0 1 0\n3 0 1 2\n";
        let mesh = read_off(inline).unwrap();
        assert_eq!(mesh.triangles, vec![[0, 1, 2]]);

        let coloured = "# leading comment\nCOFF\n3 1\n0 0 0 1 1 1 1\n1 0 0 1 1 1 1\n0 1 0 1 1 1 1\n3 0 1 2\n";
        assert_eq!(read_off(coloured).unwrap().triangles, vec![[0, 1, 2]]);

        let pentagon = "OFF\n5 1 0\n0 0 0\n1 0 0\n1 1 0\n0.5 2 0\n0 1 0\n5 0 1 2 3 4\n";
        let mesh = read_off(pentagon).unwrap();
        assert_eq!(mesh.triangles, vec![[0, 1, 2], [0, 2, 3], [0, 3, 4]]);
    }

    #[test]
    fn off_reports_errors_with_line_numbers() {
        let err = read_off("PLY\n3 1 0\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { at: Location::Line(1), .. }), "{err:?}");
        let err = read_off("OFF\n3 x 0\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { at: Location::Line(2), .. }), "{err:?}");
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 q\n3 0 1 2\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { at: Location::Line(5), .. }), "{err:?}");
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 0 0\n").unwrap_err();
        assert!(
            matches!(&err, MeshIoError::Parse { at: Location::Line(4), message } if message.contains("vertex 2 of 3")),
            "{err:?}"
        );
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { at: Location::Line(6), .. }), "{err:?}");
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n2 0 1\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { at: Location::Line(6), .. }), "{err:?}");
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n").unwrap_err();
        assert!(
            matches!(err, MeshIoError::IndexOutOfRange { at: Location::Line(6), index: 3, vertex_count: 3 }),
            "{err:?}"
        );
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 -1 2\n").unwrap_err();
        assert!(
            matches!(err, MeshIoError::IndexOutOfRange { at: Location::Line(6), index: -1, .. }),
            "{err:?}"
        );
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 NaN 0\n0 1 0\n3 0 1 2\n").unwrap_err();
        assert!(matches!(err, MeshIoError::NonFiniteCoordinate { at: Location::Line(4), .. }), "{err:?}");
        let err = read_off("OFF\n3 0 0\n0 0 0\n1 0 0\n0 1 0\n").unwrap_err();
        assert!(matches!(err, MeshIoError::EmptyMesh), "{err:?}");
        let err = read_off("").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { .. }), "{err:?}");
    }

    #[test]
    fn write_obj_round_trips() {
        for mesh in [torus(1.0, 0.3, 12, 7), cuboid(Vec3::new(0.1, 1e-7, 3e5), 2)] {
            let text = write_obj(&mesh);
            assert!(text.starts_with('#'));
            assert_eq!(read_obj(&text).unwrap(), mesh);
        }
    }

    #[test]
    fn load_mesh_dispatches_on_extension_and_reports_io_errors() {
        let dir = std::env::temp_dir();
        let stem = format!("raycontact-meshes-test-{}", std::process::id());
        let obj = dir.join(format!("{stem}.OBJ"));
        let off = dir.join(format!("{stem}.Off"));
        std::fs::write(&obj, write_obj(&cuboid(Vec3::ONE, 1))).unwrap();
        std::fs::write(&off, CUBE_OFF).unwrap();
        let from_obj = load_mesh(&obj);
        let from_off = load_mesh(&off);
        std::fs::remove_file(&obj).unwrap();
        std::fs::remove_file(&off).unwrap();
        assert_eq!(from_obj.unwrap(), cuboid(Vec3::ONE, 1));
        assert_eq!(from_off.unwrap().triangles.len(), 12);

        let missing = dir.join(format!("{stem}-missing.obj"));
        let err = load_mesh(&missing).unwrap_err();
        assert!(matches!(err, MeshIoError::Io { .. }), "{err:?}");
        assert!(err.to_string().contains(&stem), "{err}");
        assert!(std::error::Error::source(&err).is_some());

        let err = load_mesh(Path::new("mesh.step")).unwrap_err();
        assert!(matches!(err, MeshIoError::UnsupportedFormat { .. }), "{err:?}");
        let err = load_mesh(Path::new("mesh")).unwrap_err();
        assert!(matches!(err, MeshIoError::UnsupportedFormat { .. }), "{err:?}");
    }

    #[test]
    fn bunny_asset_loads_closed_and_outward() {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/bunny.obj"));
        let bunny = load_mesh(path).unwrap();
        assert_eq!(bunny.positions.len(), 1839);
        assert_eq!(bunny.triangles.len(), 3674);
        assert_eq!(bunny.boundary_edge_count(), 0);
        assert_eq!(bunny.non_manifold_edge_count(), 0);
        assert!(bunny.signed_volume() > 0.0);
    }
}
