//! Test references, not twins of any kernel: what the tests and benchmarks compare the BVH
//! queries with. Nothing in the library calls them.

use glam::Vec3;

use super::shared::common::tri_vertices;
use super::shared::ray::{intersect_triangle, ray_axes};
use crate::layout::{Ray, RayHit};

/// Brute-force closest hit of a ray against triangles `first..first + count` of the packed
/// triangles (body-local indices in the result): the reference for the BVH.
pub fn raycast_brute_force(
    positions: &[Vec3],
    triangles: &[u32],
    first: u32,
    count: u32,
    ray: &Ray,
) -> RayHit {
    let mut best = RayHit::MISS;
    let axes = ray_axes(ray.dir);
    for tri in 0..count {
        let (a, b, c) = tri_vertices(positions, triangles, (first + tri) as usize);
        best.triangles_tested += 1;
        if let Some((t, u, v)) = intersect_triangle(ray.origin, ray.dir, axes, ray.tmin, ray.tmax, a, b, c) {
            if t < best.t || (t == best.t && tri < best.triangle) {
                best = RayHit { t, triangle: tri, u, v, ..best };
            }
        }
    }
    best
}
