//! Indexed triangle meshes: procedural generators, OBJ/OFF readers and an OBJ writer.
//!
//! [`TriMesh`] is a plain indexed triangle list (`positions` + `triangles`). The
//! generators in this module build closed, watertight (vertices are shared, never
//! duplicated) and outward-oriented meshes centred at the origin, except
//! [`grid_sheet`], which is an open cloth sheet. "Outward-oriented" means the
//! triangles are counter-clockwise seen from outside, so the right-hand-rule
//! normal `(b - a) × (c - a)` points out of the body and
//! [`TriMesh::signed_volume`] is positive.
//!
//! ```
//! use raycontact::meshes::torus;
//!
//! let mesh = torus(1.0, 0.25, 40, 20);
//! assert_eq!(mesh.triangles.len(), 1600);
//! assert_eq!(mesh.positions.len(), 800);
//! assert_eq!(mesh.boundary_edge_count(), 0);
//! assert!(mesh.signed_volume() > 0.0);
//! ```
//!
//! Meshes can also be read from text:
//!
//! ```
//! use raycontact::meshes::{read_obj, write_obj};
//!
//! let mesh = read_obj("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n").unwrap();
//! assert_eq!(mesh.triangles, vec![[0, 1, 2], [0, 2, 3]]);
//! assert_eq!(read_obj(&write_obj(&mesh)).unwrap(), mesh);
//! ```

use std::collections::HashMap;
use std::f32::consts::{PI, TAU};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use glam::{Affine3A, Vec3};

/// An indexed triangle mesh.
///
/// Each entry of `triangles` holds three indices into `positions`. Orientation
/// follows the right-hand rule: for a triangle `[a, b, c]` the normal is
/// `(pb - pa) × (pc - pa)`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TriMesh {
    /// Vertex positions.
    pub positions: Vec<Vec3>,
    /// Triangles as triples of indices into [`TriMesh::positions`].
    pub triangles: Vec<[u32; 3]>,
}

impl TriMesh {
    /// Returns a copy of the mesh with every position transformed by `m`.
    ///
    /// If `m` mirrors space (its linear part has a negative determinant), the
    /// winding of every triangle is reversed as well, so an outward-oriented mesh
    /// stays outward-oriented.
    pub fn transformed(&self, m: Affine3A) -> TriMesh {
        let positions = self.positions.iter().map(|&p| m.transform_point3(p)).collect();
        let triangles = if m.matrix3.determinant() < 0.0 {
            self.triangles.iter().map(|&[a, b, c]| [a, c, b]).collect()
        } else {
            self.triangles.clone()
        };
        TriMesh { positions, triangles }
    }

    /// Number of edges used by exactly one triangle (0 for a closed mesh).
    pub fn boundary_edge_count(&self) -> usize {
        self.edge_use_counts().0
    }

    /// Number of edges used by more than two triangles (0 for a manifold mesh).
    pub fn non_manifold_edge_count(&self) -> usize {
        self.edge_use_counts().1
    }

    /// Total area of all triangles.
    pub fn surface_area(&self) -> f32 {
        let sum: f64 = self
            .triangles
            .iter()
            .map(|&t| {
                let [a, b, c] = self.corners(t);
                f64::from((b - a).cross(c - a).length())
            })
            .sum();
        (0.5 * sum) as f32
    }

    /// Signed enclosed volume (divergence theorem over the triangles).
    ///
    /// Positive for a closed, outward-oriented mesh, negative if its winding is
    /// inverted. Only meaningful for closed meshes.
    pub fn signed_volume(&self) -> f32 {
        let sum: f64 = self
            .triangles
            .iter()
            .map(|&t| {
                let [a, b, c] = self.corners(t);
                f64::from(a.dot(b.cross(c)))
            })
            .sum();
        (sum / 6.0) as f32
    }

    /// Merges vertices that are at most `tolerance` apart, using a hash grid with
    /// cells of size `tolerance`.
    ///
    /// Each vertex is merged into the nearest already-kept vertex within
    /// `tolerance` (keeping the kept vertex's position), or kept itself. A
    /// `tolerance` of zero (or negative, or NaN) merges only exact duplicates.
    /// Triangles that collapse (two equal indices after merging) are dropped;
    /// unreferenced vertices are kept. Vertex order is preserved otherwise.
    ///
    /// Returns the welded mesh and the number of vertices merged away
    /// (`self.positions.len() - welded.positions.len()`).
    pub fn weld(&self, tolerance: f32) -> (TriMesh, usize) {
        let mut kept: Vec<Vec3> = Vec::new();
        let mut remap: Vec<u32> = Vec::with_capacity(self.positions.len());
        if tolerance > 0.0 {
            const NONE: u32 = u32::MAX;
            let inv_cell = 1.0 / tolerance;
            let tol2 = tolerance * tolerance;
            // Head of a singly linked list of kept vertices per grid cell.
            let mut heads: HashMap<[i32; 3], u32> = HashMap::new();
            let mut next: Vec<u32> = Vec::new();
            for &p in &self.positions {
                let cell = (p * inv_cell).floor().to_array().map(|c| c as i32);
                let mut best: Option<(f32, u32)> = None;
                for dz in -1..=1 {
                    for dy in -1..=1 {
                        for dx in -1..=1 {
                            let key = [
                                cell[0].saturating_add(dx),
                                cell[1].saturating_add(dy),
                                cell[2].saturating_add(dz),
                            ];
                            let mut k = heads.get(&key).copied().unwrap_or(NONE);
                            while k != NONE {
                                let d2 = kept[k as usize].distance_squared(p);
                                if d2 <= tol2 && best.is_none_or(|(bd, _)| d2 < bd) {
                                    best = Some((d2, k));
                                }
                                k = next[k as usize];
                            }
                        }
                    }
                }
                let index = match best {
                    Some((_, k)) => k,
                    None => {
                        let k = kept.len() as u32;
                        kept.push(p);
                        next.push(heads.insert(cell, k).unwrap_or(NONE));
                        k
                    }
                };
                remap.push(index);
            }
        } else {
            let mut seen: HashMap<[u32; 3], u32> = HashMap::with_capacity(self.positions.len());
            for &p in &self.positions {
                // `+ 0.0` maps -0.0 to 0.0 so both signs of zero are merged.
                let key = (p + Vec3::ZERO).to_array().map(f32::to_bits);
                let index = *seen.entry(key).or_insert_with(|| {
                    kept.push(p);
                    (kept.len() - 1) as u32
                });
                remap.push(index);
            }
        }
        let triangles = self
            .triangles
            .iter()
            .map(|t| t.map(|i| remap[i as usize]))
            .filter(|&[a, b, c]| a != b && b != c && a != c)
            .collect();
        let merged = self.positions.len() - kept.len();
        (TriMesh { positions: kept, triangles }, merged)
    }

    fn corners(&self, [a, b, c]: [u32; 3]) -> [Vec3; 3] {
        [self.positions[a as usize], self.positions[b as usize], self.positions[c as usize]]
    }

    /// Returns (edges used once, edges used more than twice).
    fn edge_use_counts(&self) -> (usize, usize) {
        let mut keys: Vec<u64> = self
            .triangles
            .iter()
            .flat_map(|&[a, b, c]| [(a, b), (b, c), (c, a)])
            .map(|(a, b)| (u64::from(a.min(b)) << 32) | u64::from(a.max(b)))
            .collect();
        keys.sort_unstable();
        let (mut boundary, mut non_manifold) = (0, 0);
        for run in keys.chunk_by(|x, y| x == y) {
            match run.len() {
                1 => boundary += 1,
                2 => {}
                _ => non_manifold += 1,
            }
        }
        (boundary, non_manifold)
    }
}

/// Index of vertex `(i, j)` in a grid whose rows have `row` vertices.
fn grid_index(i: u32, j: u32, row: u32) -> u32 {
    i * row + j
}

/// A UV (latitude/longitude) sphere around the z axis.
///
/// `segments` (clamped to at least 3) is the number of vertices around each
/// latitude ring, `rings` (clamped to at least 2) the number of latitude bands
/// from pole to pole.
///
/// Vertices: `segments * (rings - 1) + 2`. Triangles: `2 * segments * (rings - 1)`.
pub fn uv_sphere(radius: f32, segments: u32, rings: u32) -> TriMesh {
    let segments = segments.max(3);
    let rings = rings.max(2);
    let mut positions = Vec::with_capacity((segments * (rings - 1) + 2) as usize);
    positions.push(Vec3::new(0.0, 0.0, radius));
    for i in 1..rings {
        let theta = PI * i as f32 / rings as f32;
        let (st, ct) = theta.sin_cos();
        for j in 0..segments {
            let (sp, cp) = (TAU * j as f32 / segments as f32).sin_cos();
            positions.push(radius * Vec3::new(st * cp, st * sp, ct));
        }
    }
    positions.push(Vec3::new(0.0, 0.0, -radius));
    let north = 0;
    let south = positions.len() as u32 - 1;
    // Vertex j of latitude ring i (1-based ring numbering).
    let ring = |i: u32, j: u32| 1 + grid_index(i - 1, j % segments, segments);

    let mut triangles = Vec::with_capacity((2 * segments * (rings - 1)) as usize);
    for j in 0..segments {
        triangles.push([north, ring(1, j), ring(1, j + 1)]);
    }
    for i in 1..rings - 1 {
        for j in 0..segments {
            let (a, b, c, d) = (ring(i, j), ring(i + 1, j), ring(i + 1, j + 1), ring(i, j + 1));
            triangles.push([a, b, d]);
            triangles.push([b, c, d]);
        }
    }
    for j in 0..segments {
        triangles.push([ring(rings - 1, j), south, ring(rings - 1, j + 1)]);
    }
    TriMesh { positions, triangles }
}

/// A geodesic sphere: an icosahedron whose faces are split into four
/// `subdivisions` times, with the vertices projected onto the sphere.
///
/// Vertices: `10 * 4^subdivisions + 2`. Triangles: `20 * 4^subdivisions`.
pub fn icosphere(radius: f32, subdivisions: u32) -> TriMesh {
    let t = (1.0 + 5.0_f32.sqrt()) / 2.0;
    let mut positions: Vec<Vec3> = [
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ]
    .into_iter()
    .map(|p| Vec3::from_array(p).normalize())
    .collect();
    let mut triangles: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..subdivisions {
        let mut midpoints: HashMap<(u32, u32), u32> = HashMap::with_capacity(triangles.len() * 3 / 2);
        let mut midpoint = |a: u32, b: u32| -> u32 {
            *midpoints.entry((a.min(b), a.max(b))).or_insert_with(|| {
                let p = (positions[a as usize] + positions[b as usize]).normalize();
                positions.push(p);
                positions.len() as u32 - 1
            })
        };
        triangles = triangles
            .iter()
            .flat_map(|&[a, b, c]| {
                let (ab, bc, ca) = (midpoint(a, b), midpoint(b, c), midpoint(c, a));
                [[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]
            })
            .collect();
    }
    for p in &mut positions {
        *p *= radius;
    }
    TriMesh { positions, triangles }
}

/// A torus around the z axis, with the tube centre line a circle of radius
/// `major_radius` in the z = 0 plane and tube radius `minor_radius`
/// (use `minor_radius < major_radius` for a non-self-intersecting surface).
///
/// `major_segments` (around the z axis) and `minor_segments` (around the tube)
/// are clamped to at least 3.
///
/// Vertices: `major_segments * minor_segments`.
/// Triangles: `2 * major_segments * minor_segments` (e.g. 40 × 20 → 1600).
pub fn torus(major_radius: f32, minor_radius: f32, major_segments: u32, minor_segments: u32) -> TriMesh {
    let (nu, nv) = (major_segments.max(3), minor_segments.max(3));
    let mut positions = Vec::with_capacity((nu * nv) as usize);
    for i in 0..nu {
        let (su, cu) = (TAU * i as f32 / nu as f32).sin_cos();
        for j in 0..nv {
            let (sv, cv) = (TAU * j as f32 / nv as f32).sin_cos();
            let r = major_radius + minor_radius * cv;
            positions.push(Vec3::new(r * cu, r * su, minor_radius * sv));
        }
    }
    let at = |i: u32, j: u32| grid_index(i % nu, j % nv, nv);
    let mut triangles = Vec::with_capacity((2 * nu * nv) as usize);
    for i in 0..nu {
        for j in 0..nv {
            let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
            triangles.push([a, b, c]);
            triangles.push([a, c, d]);
        }
    }
    TriMesh { positions, triangles }
}

/// An axis-aligned box spanning `-half_extents..=half_extents`, each face split
/// into a `subdivisions × subdivisions` grid of quads (two triangles each);
/// vertices on shared edges and corners are shared between faces.
///
/// `subdivisions` is clamped to at least 1.
///
/// Vertices: `6 * n² + 2`. Triangles: `12 * n²` (with `n = subdivisions`).
pub fn cuboid(half_extents: Vec3, subdivisions: u32) -> TriMesh {
    let n = subdivisions.max(1);
    let mut positions = Vec::with_capacity((6 * n * n + 2) as usize);
    let mut triangles = Vec::with_capacity((12 * n * n) as usize);
    // Integer lattice coordinate (0..=n per axis) -> vertex index.
    let mut lattice: HashMap<[u32; 3], u32> = HashMap::with_capacity((6 * n * n + 2) as usize);
    let step = 2.0 * half_extents / n as f32;
    for axis in 0..3 {
        for positive in [false, true] {
            // In-plane axes (u, v) with u × v pointing out of this face.
            let (u, v) =
                if positive { ((axis + 1) % 3, (axis + 2) % 3) } else { ((axis + 2) % 3, (axis + 1) % 3) };
            let mut vertex = |i: u32, j: u32| -> u32 {
                let mut key = [0; 3];
                key[axis] = if positive { n } else { 0 };
                key[u] = i;
                key[v] = j;
                *lattice.entry(key).or_insert_with(|| {
                    let k = Vec3::new(key[0] as f32, key[1] as f32, key[2] as f32);
                    positions.push(k * step - half_extents);
                    positions.len() as u32 - 1
                })
            };
            for i in 0..n {
                for j in 0..n {
                    let (a, b) = (vertex(i, j), vertex(i + 1, j));
                    let (c, d) = (vertex(i + 1, j + 1), vertex(i, j + 1));
                    triangles.push([a, b, c]);
                    triangles.push([a, c, d]);
                }
            }
        }
    }
    TriMesh { positions, triangles }
}

/// A capped cylinder along the z axis, spanning `-half_height..=half_height`.
///
/// Each cap is a triangle fan around a centre vertex. `segments` (clamped to at
/// least 3) is the number of vertices around each rim.
///
/// Vertices: `2 * segments + 2`. Triangles: `4 * segments`.
pub fn cylinder(radius: f32, half_height: f32, segments: u32) -> TriMesh {
    let s = segments.max(3);
    let mut positions = Vec::with_capacity((2 * s + 2) as usize);
    for z in [-half_height, half_height] {
        for j in 0..s {
            let (sp, cp) = (TAU * j as f32 / s as f32).sin_cos();
            positions.push(Vec3::new(radius * cp, radius * sp, z));
        }
    }
    positions.push(Vec3::new(0.0, 0.0, -half_height));
    positions.push(Vec3::new(0.0, 0.0, half_height));
    let (bottom_centre, top_centre) = (2 * s, 2 * s + 1);
    let bottom = |j: u32| j % s;
    let top = |j: u32| s + j % s;
    let mut triangles = Vec::with_capacity((4 * s) as usize);
    for j in 0..s {
        let (a, b, c, d) = (bottom(j), bottom(j + 1), top(j + 1), top(j));
        triangles.push([a, b, c]);
        triangles.push([a, c, d]);
        triangles.push([top_centre, top(j), top(j + 1)]);
        triangles.push([bottom_centre, bottom(j + 1), bottom(j)]);
    }
    TriMesh { positions, triangles }
}

/// An open rectangular sheet (e.g. cloth) in the z = 0 plane, spanning
/// `size_x × size_y` centred at the origin, split into `nx × ny` quads of two
/// triangles each; all triangle normals point along +z.
///
/// `nx` and `ny` are clamped to at least 1. Vertex `(i, j)` (column `i` along x,
/// row `j` along y) has index `j * (nx + 1) + i`.
///
/// Vertices: `(nx + 1) * (ny + 1)`. Triangles: `2 * nx * ny`.
/// Boundary edges: `2 * (nx + ny)`.
pub fn grid_sheet(size_x: f32, size_y: f32, nx: u32, ny: u32) -> TriMesh {
    let (nx, ny) = (nx.max(1), ny.max(1));
    let mut positions = Vec::with_capacity(((nx + 1) * (ny + 1)) as usize);
    for j in 0..=ny {
        let y = size_y * (j as f32 / ny as f32 - 0.5);
        for i in 0..=nx {
            let x = size_x * (i as f32 / nx as f32 - 0.5);
            positions.push(Vec3::new(x, y, 0.0));
        }
    }
    let at = |i: u32, j: u32| grid_index(j, i, nx + 1);
    let mut triangles = Vec::with_capacity((2 * nx * ny) as usize);
    for j in 0..ny {
        for i in 0..nx {
            let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
            triangles.push([a, b, c]);
            triangles.push([a, c, d]);
        }
    }
    TriMesh { positions, triangles }
}

/// Errors from reading or parsing a mesh file. Line numbers are 1-based.
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
    #[error("unsupported mesh file `{}`: expected a .obj or .off extension", path.display())]
    UnsupportedFormat {
        /// The offending path.
        path: PathBuf,
    },
    /// A statement could not be parsed.
    #[error("line {line}: {message}")]
    Parse {
        /// Line of the offending statement.
        line: usize,
        /// What is wrong, naming the element.
        message: String,
    },
    /// A face refers to a vertex that does not exist.
    #[error("line {line}: face vertex index {index} is out of range (the mesh has {vertex_count} vertices)")]
    IndexOutOfRange {
        /// Line of the face.
        line: usize,
        /// The index as written in the file (1-based or negative for OBJ, 0-based for OFF).
        index: i64,
        /// Number of vertices the index was checked against.
        vertex_count: usize,
    },
    /// A vertex coordinate is infinite or NaN.
    #[error("line {line}: vertex coordinate `{text}` is not finite")]
    NonFiniteCoordinate {
        /// Line of the vertex.
        line: usize,
        /// The coordinate as written in the file.
        text: String,
    },
    /// The file parsed but contains no triangles.
    #[error("mesh has no triangles")]
    EmptyMesh,
}

fn parse_error(line: usize, message: String) -> MeshIoError {
    MeshIoError::Parse { line, message }
}

/// Parses a vertex coordinate token.
fn parse_coord(text: &str, line: usize) -> Result<f32, MeshIoError> {
    let value: f32 =
        text.parse().map_err(|_| parse_error(line, format!("invalid vertex coordinate `{text}`")))?;
    if value.is_finite() {
        Ok(value)
    } else {
        Err(MeshIoError::NonFiniteCoordinate { line, text: text.to_owned() })
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
                    let out_of_range = || MeshIoError::IndexOutOfRange { line, index, vertex_count };
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
            return Err(MeshIoError::IndexOutOfRange { line, index, vertex_count: mesh.positions.len() });
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
                .ok_or(MeshIoError::IndexOutOfRange { line, index, vertex_count })?
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

/// Reads a mesh file, choosing the format from the extension (`.obj` or `.off`,
/// case-insensitive).
///
/// # Errors
///
/// [`MeshIoError::UnsupportedFormat`] for another extension,
/// [`MeshIoError::Io`] if the file cannot be read as UTF-8 text, and the errors of
/// [`read_obj`] / [`read_off`].
pub fn load_mesh(path: &Path) -> Result<TriMesh, MeshIoError> {
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let reader: fn(&str) -> Result<TriMesh, MeshIoError> = match extension.as_deref() {
        Some("obj") => read_obj,
        Some("off") => read_off,
        _ => {
            return Err(MeshIoError::UnsupportedFormat { path: path.to_owned() });
        }
    };
    let text =
        std::fs::read_to_string(path).map_err(|source| MeshIoError::Io { path: path.to_owned(), source })?;
    reader(&text)
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

    fn assert_closed(mesh: &TriMesh) {
        assert_eq!(mesh.boundary_edge_count(), 0, "boundary edges");
        assert_eq!(mesh.non_manifold_edge_count(), 0, "non-manifold edges");
        let (_, merged) = mesh.weld(0.0);
        assert_eq!(merged, 0, "duplicate vertices");
    }

    fn assert_close(actual: f32, expected: f32, rel: f32) {
        assert!(
            (actual - expected).abs() <= rel * expected.abs(),
            "{actual} not within {}% of {expected}",
            rel * 100.0
        );
    }

    /// For a convex body around the origin every outward normal points away from it.
    fn assert_convex_outward(mesh: &TriMesh) {
        for &t in &mesh.triangles {
            let [a, b, c] = mesh.corners(t);
            let normal = (b - a).cross(c - a);
            assert!(normal.dot(a + b + c) > 0.0, "inward triangle {t:?}");
        }
    }

    #[test]
    fn uv_sphere_is_closed_outward_with_documented_counts() {
        let (segments, rings) = (48, 24);
        let mesh = uv_sphere(2.0, segments, rings);
        assert_eq!(mesh.positions.len(), (segments * (rings - 1) + 2) as usize);
        assert_eq!(mesh.triangles.len(), (2 * segments * (rings - 1)) as usize);
        assert_closed(&mesh);
        assert_convex_outward(&mesh);
        assert_close(mesh.signed_volume(), 4.0 / 3.0 * PI * 8.0, 0.02);
        assert_close(mesh.surface_area(), 4.0 * PI * 4.0, 0.02);
        assert_closed(&uv_sphere(1.0, 0, 0));
    }

    #[test]
    fn icosphere_is_closed_outward_with_documented_counts() {
        for n in 0..4 {
            let mesh = icosphere(1.5, n);
            assert_eq!(mesh.positions.len(), 10 * 4usize.pow(n) + 2);
            assert_eq!(mesh.triangles.len(), 20 * 4usize.pow(n));
            assert_closed(&mesh);
            assert_convex_outward(&mesh);
            for p in &mesh.positions {
                assert_close(p.length(), 1.5, 1e-5);
            }
        }
        let volume = icosphere(1.5, 3).signed_volume();
        assert_close(volume, 4.0 / 3.0 * PI * 1.5f32.powi(3), 0.02);
    }

    #[test]
    fn torus_is_closed_outward_with_documented_counts() {
        let (big, small) = (1.0, 0.25);
        let mesh = torus(big, small, 40, 20);
        assert_eq!(mesh.positions.len(), 800);
        assert_eq!(mesh.triangles.len(), 1600);
        assert_closed(&mesh);
        assert_close(mesh.signed_volume(), 2.0 * PI * PI * big * small * small, 0.03);
        assert_close(mesh.surface_area(), 4.0 * PI * PI * big * small, 0.03);
        // Every normal points away from the tube's centre line.
        for &t in &mesh.triangles {
            let [a, b, c] = mesh.corners(t);
            let centroid = (a + b + c) / 3.0;
            let on_axis = Vec3::new(centroid.x, centroid.y, 0.0).normalize() * big;
            assert!((b - a).cross(c - a).dot(centroid - on_axis) > 0.0);
        }
    }

    #[test]
    fn cuboid_is_closed_outward_with_documented_counts() {
        let half = Vec3::new(1.0, 2.0, 0.5);
        for n in [0, 1, 2, 5] {
            let mesh = cuboid(half, n);
            let n = n.max(1) as usize;
            assert_eq!(mesh.positions.len(), 6 * n * n + 2);
            assert_eq!(mesh.triangles.len(), 12 * n * n);
            assert_closed(&mesh);
            assert_convex_outward(&mesh);
            assert_close(mesh.signed_volume(), 8.0, 1e-5);
            assert_close(mesh.surface_area(), 8.0 * (2.0 + 0.5 + 1.0), 1e-5);
            for p in &mesh.positions {
                assert!(p.abs().cmple(half + 1e-6).all());
            }
        }
    }

    #[test]
    fn cylinder_is_closed_outward_with_documented_counts() {
        let mesh = cylinder(0.5, 1.0, 64);
        assert_eq!(mesh.positions.len(), 2 * 64 + 2);
        assert_eq!(mesh.triangles.len(), 4 * 64);
        assert_closed(&mesh);
        assert_convex_outward(&mesh);
        assert_close(mesh.signed_volume(), PI * 0.25 * 2.0, 0.01);
        assert_close(mesh.surface_area(), 2.0 * PI * 0.25 + 2.0 * PI * 0.5 * 2.0, 0.01);
    }

    #[test]
    fn grid_sheet_is_open_flat_and_faces_up() {
        let mesh = grid_sheet(2.0, 1.0, 8, 4);
        assert_eq!(mesh.positions.len(), 9 * 5);
        assert_eq!(mesh.triangles.len(), 2 * 8 * 4);
        assert_eq!(mesh.boundary_edge_count(), 2 * (8 + 4));
        assert_eq!(mesh.non_manifold_edge_count(), 0);
        assert_eq!(mesh.weld(0.0).1, 0);
        assert_close(mesh.surface_area(), 2.0, 1e-5);
        assert_eq!(mesh.positions[0], Vec3::new(-1.0, -0.5, 0.0));
        assert_eq!(mesh.positions[44], Vec3::new(1.0, 0.5, 0.0));
        for &t in &mesh.triangles {
            let [a, b, c] = mesh.corners(t);
            let n = (b - a).cross(c - a);
            assert!(n.z > 0.0 && n.x == 0.0 && n.y == 0.0);
        }
    }

    #[test]
    fn transformed_scales_volume_and_keeps_orientation_under_mirroring() {
        let mesh = cuboid(Vec3::ONE, 2);
        let m = Affine3A::from_scale_rotation_translation(
            Vec3::splat(2.0),
            glam::Quat::from_rotation_y(0.7),
            Vec3::new(3.0, -1.0, 5.0),
        );
        let moved = mesh.transformed(m);
        assert_close(moved.signed_volume(), 64.0, 1e-4);
        assert_eq!(moved.triangles, mesh.triangles);
        let mirrored = mesh.transformed(Affine3A::from_scale(Vec3::new(-1.0, 1.0, 1.0)));
        assert_close(mirrored.signed_volume(), 8.0, 1e-5);
        assert_closed(&mirrored);
    }

    #[test]
    fn weld_merges_duplicates_and_drops_collapsed_triangles() {
        // Two triangles sharing an edge, with the shared vertices duplicated.
        let soup = TriMesh {
            positions: vec![
                Vec3::ZERO,
                Vec3::X,
                Vec3::Y,
                Vec3::X,
                Vec3::new(1.0, 1.0, 0.0),
                Vec3::new(0.0, 1.0, -0.0),
            ],
            triangles: vec![[0, 1, 2], [3, 4, 5]],
        };
        assert_eq!(soup.boundary_edge_count(), 6);
        let (welded, merged) = soup.weld(0.0);
        assert_eq!(merged, 2);
        assert_eq!(welded.positions.len(), 4);
        assert_eq!(welded.triangles, vec![[0, 1, 2], [1, 3, 2]]);
        assert_eq!(welded.boundary_edge_count(), 4);

        // Near-duplicates merge with a tolerance, not without.
        let mut near = soup.clone();
        near.positions[3] += Vec3::splat(1e-4);
        assert_eq!(near.weld(0.0).1, 1);
        let (welded, merged) = near.weld(1e-3);
        assert_eq!(merged, 2);
        assert_eq!(welded.positions[1], Vec3::X, "keeps the first position");

        // A sliver collapses and is dropped.
        let sliver = TriMesh {
            positions: vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 0.01, 0.0)],
            triangles: vec![[0, 1, 2]],
        };
        let (welded, merged) = sliver.weld(0.05);
        assert_eq!(merged, 1);
        assert!(welded.triangles.is_empty());

        // A vertex between two kept ones merges into the nearer.
        let line = TriMesh { positions: vec![Vec3::ZERO, Vec3::X * 0.15, Vec3::X * 0.1], triangles: vec![] };
        let (welded, _) = line.weld(0.12);
        assert_eq!(welded.positions.len(), 2);

        // Welding a split generator restores a closed mesh.
        let sphere = icosphere(1.0, 2);
        let split = TriMesh {
            positions: sphere.triangles.iter().flat_map(|&t| sphere.corners(t)).collect(),
            triangles: (0..sphere.triangles.len() as u32).map(|i| [3 * i, 3 * i + 1, 3 * i + 2]).collect(),
        };
        let (welded, merged) = split.weld(1e-5);
        assert_eq!(welded.positions.len(), sphere.positions.len());
        assert_eq!(merged, split.positions.len() - sphere.positions.len());
        assert_closed(&welded);
    }

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
        assert!(matches!(err, MeshIoError::Parse { line: 2, .. }), "{err:?}");
        assert_eq!(err.to_string(), "line 2: invalid vertex coordinate `x`");

        let err = read_obj("v 0 0\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { line: 1, .. }), "{err:?}");

        let err = read_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { line: 5, .. }), "{err:?}");

        let err = read_obj("v 0 0 0\nv 1 0 0\nf 1 2 a/1\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { line: 3, .. }), "{err:?}");

        let err = read_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\nf 1 2 3\n").unwrap_err();
        assert!(
            matches!(err, MeshIoError::IndexOutOfRange { line: 4, index: 4, vertex_count: 3 }),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "line 4: face vertex index 4 is out of range (the mesh has 3 vertices)");

        let err = read_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n").unwrap_err();
        assert!(matches!(err, MeshIoError::IndexOutOfRange { line: 4, index: 0, .. }), "{err:?}");

        let err = read_obj("v 0 0 0\nv 1 0 0\nf -1 -2 -3\nv 0 1 0\n").unwrap_err();
        assert!(
            matches!(err, MeshIoError::IndexOutOfRange { line: 3, index: -3, vertex_count: 2 }),
            "{err:?}"
        );

        for bad in ["nan", "inf", "-inf", "1e999"] {
            let err = read_obj(&format!("v 0 0 0\nv 0 {bad} 0\n")).unwrap_err();
            assert!(
                matches!(&err, MeshIoError::NonFiniteCoordinate { line: 2, text } if text == bad),
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
        assert!(matches!(err, MeshIoError::Parse { line: 1, .. }), "{err:?}");
        let err = read_off("OFF\n3 x 0\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { line: 2, .. }), "{err:?}");
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 q\n3 0 1 2\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { line: 5, .. }), "{err:?}");
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 0 0\n").unwrap_err();
        assert!(
            matches!(&err, MeshIoError::Parse { line: 4, message } if message.contains("vertex 2 of 3")),
            "{err:?}"
        );
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { line: 6, .. }), "{err:?}");
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n2 0 1\n").unwrap_err();
        assert!(matches!(err, MeshIoError::Parse { line: 6, .. }), "{err:?}");
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n").unwrap_err();
        assert!(
            matches!(err, MeshIoError::IndexOutOfRange { line: 6, index: 3, vertex_count: 3 }),
            "{err:?}"
        );
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 -1 2\n").unwrap_err();
        assert!(matches!(err, MeshIoError::IndexOutOfRange { line: 6, index: -1, .. }), "{err:?}");
        let err = read_off("OFF\n3 1 0\n0 0 0\n1 NaN 0\n0 1 0\n3 0 1 2\n").unwrap_err();
        assert!(matches!(err, MeshIoError::NonFiniteCoordinate { line: 4, .. }), "{err:?}");
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

        let err = load_mesh(Path::new("mesh.stl")).unwrap_err();
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
