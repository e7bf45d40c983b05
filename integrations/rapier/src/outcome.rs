//! The outcome, measured independently of both detectors: how deep the surface particles of each
//! FEM body lie inside the other, and the cloth's inside either (parry's point queries on the
//! bodies' closed, outward-oriented boundaries), how many cloth edges pass through the cloth
//! elsewhere (exact segment–triangle tests), and whether the cube still rests on the slab.

use glam::Vec3;
use rapier3d::dynamics::SoftBody;
use rapier3d::parry::query::PointQuery;
use rapier3d::parry::shape::{TriMesh, TriMeshFlags};

use crate::scene::{CUBE, SLAB, World};

/// The outcome's figures at one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Measure {
    /// The deepest boundary particle of either FEM body inside the other (m; 0: none inside).
    pub fem: f32,
    /// The deepest cloth particle inside either FEM body (m).
    pub cloth: f32,
    /// Height of the cube's centre of mass above the slab's (m; [`REST`] undeformed).
    pub stack: f32,
}

/// A boundary particle of one FEM body deeper than this inside the other fails the outcome (m):
/// the penalty response holds the cube with a few millimetres of overlap (4.2 mm in the
/// example's default run).
pub const FEM_TOLERANCE: f32 = 0.02;
/// A cloth particle deeper than this inside a FEM body fails (m).
pub const CLOTH_TOLERANCE: f32 = 0.02;
/// The cube's centre above the slab's when both rest undeformed (m).
pub const REST: f32 = 0.5 * (SLAB.1 + CUBE);
/// The cube must end at least this high above the slab (its centre of mass over the slab's, m):
/// resting on it, not sunk into it.
pub const STACKED: f32 = 0.8 * REST;

impl Measure {
    /// Measures the world as it is.
    pub fn of(world: &World) -> Self {
        let bodies = &world.physics.soft_bodies;
        let [a, b] = world.fem.map(|h| &bodies[h]);
        let cloth = &bodies[world.cloth];
        let (ma, mb) = (closed_mesh(a), closed_mesh(b));
        let inside = |mesh: &Option<TriMesh>, body: &SoftBody| {
            mesh.as_ref().map_or(0.0, |m| boundary_particles(body).map(|p| depth(m, p)).fold(0.0, f32::max))
        };
        let cloth_depth = [&ma, &mb]
            .iter()
            .map(|m| {
                m.as_ref()
                    .map_or(0.0, |m| cloth.particle_positions().map(|p| depth(m, p)).fold(0.0, f32::max))
            })
            .fold(0.0, f32::max);
        Self {
            fem: inside(&mb, a).max(inside(&ma, b)),
            cloth: cloth_depth,
            stack: b.center_of_mass().y - a.center_of_mass().y,
        }
    }
}

/// The particles on a body's boundary triangles.
fn boundary_particles(body: &SoftBody) -> impl Iterator<Item = Vec3> + '_ {
    let mut on = vec![false; body.num_particles()];
    body.boundary().iter().flatten().for_each(|&p| on[p as usize] = true);
    (0..body.num_particles()).filter(move |&i| on[i]).map(|i| body.particle_position(i))
}

/// A body's boundary as an oriented parry mesh (inside tests by pseudo-normals); `None` when
/// parry refuses it (a degenerate boundary: then nothing counts as inside).
fn closed_mesh(body: &SoftBody) -> Option<TriMesh> {
    let vertices = body.particle_positions().collect();
    TriMesh::with_flags(vertices, body.boundary().to_vec(), TriMeshFlags::ORIENTED).ok()
}

/// How deep `p` lies inside `mesh` (0 outside).
fn depth(mesh: &TriMesh, p: Vec3) -> f32 {
    let proj = mesh.project_local_point(p, false);
    if proj.is_inside { (proj.point - p).length() } else { 0.0 }
}

/// Cloth edges that pass through a triangle of the same cloth not incident to them: the cloth
/// crossed itself there (0 for a cloth that folds without passing through itself).
pub fn cloth_crossings(cloth: &SoftBody) -> usize {
    let x: Vec<Vec3> = cloth.particle_positions().collect();
    let triangles = cloth.boundary();
    let mut edges: Vec<[u32; 2]> = triangles
        .iter()
        .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]].map(|[a, b]| [a.min(b), a.max(b)]))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let boxes: Vec<(Vec3, Vec3)> = triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| x[i as usize]);
            (a.min(b).min(c), a.max(b).max(c))
        })
        .collect();
    edges
        .iter()
        .filter(|&&[i, j]| {
            let (p, q) = (x[i as usize], x[j as usize]);
            let (lo, hi) = (p.min(q), p.max(q));
            triangles.iter().zip(&boxes).any(|(t, &(tlo, thi))| {
                !t.contains(&i)
                    && !t.contains(&j)
                    && lo.cmple(thi).all()
                    && tlo.cmple(hi).all()
                    && segment_hits_triangle(p, q, t.map(|k| x[k as usize]))
            })
        })
        .count()
}

/// Whether the segment `pq` crosses the triangle (Möller–Trumbore, the segment's interior).
fn segment_hits_triangle(p: Vec3, q: Vec3, [a, b, c]: [Vec3; 3]) -> bool {
    let d = q - p;
    let (e1, e2) = (b - a, c - a);
    let h = d.cross(e2);
    let det = e1.dot(h);
    if det.abs() < 1e-12 {
        return false;
    }
    let inv = 1.0 / det;
    let s = p - a;
    let u = s.dot(h) * inv;
    let qv = s.cross(e1);
    let v = d.dot(qv) * inv;
    let t = e2.dot(qv) * inv;
    u >= 0.0 && v >= 0.0 && u + v <= 1.0 && t > 0.0 && t < 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_through_a_triangle_hits_it_and_one_beside_it_does_not() {
        let tri = [Vec3::ZERO, Vec3::X, Vec3::Z];
        assert!(segment_hits_triangle(Vec3::new(0.2, -1.0, 0.2), Vec3::new(0.2, 1.0, 0.2), tri));
        assert!(!segment_hits_triangle(Vec3::new(0.8, -1.0, 0.8), Vec3::new(0.8, 1.0, 0.8), tri));
        assert!(!segment_hits_triangle(Vec3::new(0.2, 0.5, 0.2), Vec3::new(0.2, 1.0, 0.2), tri));
    }
}
