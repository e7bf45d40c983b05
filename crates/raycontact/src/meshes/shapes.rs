//! Procedural generators: closed, outward-oriented meshes centred at the origin, and an open
//! cloth sheet ([`grid_sheet`]).

use std::collections::HashMap;
use std::f32::consts::{PI, TAU};

use glam::Vec3;

use super::TriMesh;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meshes::testing::{assert_close, assert_closed, assert_convex_outward};

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
}
