//! Indexed triangle meshes: procedural generators, readers of OBJ, OFF, PLY and STL files, and
//! writers of OBJ, PLY and STL.
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
//!
//! or from the bytes of a PLY or STL file ([`load_mesh`] picks the reader by extension):
//!
//! ```
//! use raycontact::meshes::{PlyEncoding, StlEncoding, cuboid, read_ply, read_stl, write_ply, write_stl};
//! use glam::Vec3;
//!
//! let mesh = cuboid(Vec3::ONE, 1);
//! assert_eq!(read_ply(&write_ply(&mesh, PlyEncoding::BinaryLittleEndian)).unwrap(), mesh);
//! // STL stores every triangle's corners apart; identical corners are merged on reading.
//! let from_stl = read_stl(&write_stl(&mesh, StlEncoding::Binary)).unwrap();
//! assert_eq!(from_stl.triangles.len(), mesh.triangles.len());
//! assert_eq!(from_stl.boundary_edge_count(), 0);
//! ```

mod error;
mod io;
mod ply;
mod shapes;
mod stl;
#[cfg(test)]
mod testing;
mod weld;

pub use error::{Location, MeshIoError};
pub use io::{MESH_EXTENSIONS, load_mesh, read_obj, read_off, write_obj};
pub use ply::{PlyEncoding, read_ply, write_ply};
pub use shapes::{cuboid, cylinder, grid_sheet, icosphere, torus, uv_sphere};
pub use stl::{StlEncoding, read_stl, write_stl};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meshes::testing::{assert_close, assert_closed};

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
}
