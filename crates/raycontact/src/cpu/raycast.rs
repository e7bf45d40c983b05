//! Twin of `shaders/raycast.wgsl`: closest hits of a batch of rays against a list of bodies,
//! each through its BVH ([`closest_hit_in`], the twin of `shaders/shared/bvh.wgsl`: through the
//! frame's child pairs where it has them).

use glam::Vec3;
use rayon::prelude::*;

use super::shared::bvh::{closest_hit, closest_hit_in};
use super::shared::targets::QueryScene;
use crate::layout::{BodyGpu, NONE, Node, Ray, RayHit};

/// The closest hit of one ray through the stackless BVH of one body (its used nodes `nodes`,
/// body-local), counting nodes visited and triangles tested: `raycast.wgsl`'s work for one ray
/// of a query of that one body (`body` is 0 on a hit).
pub fn raycast_one(
    body: &BodyGpu,
    nodes: &[Node],
    positions: &[Vec3],
    triangles: &[u32],
    ray: &Ray,
) -> RayHit {
    let h = closest_hit(body, nodes, positions, triangles, ray, NONE, &[]);
    RayHit { body: if h.is_hit() { 0 } else { NONE }, ..h }
}

/// Twin of `raycast.wgsl` for one ray: the closest hit on packed bodies `targets`, each searched
/// up to the nearest hit so far; ties in `t` go to the earlier body of the list, then to the
/// lower triangle index. `body` is the position in `targets`.
pub fn raycast_ray(scene: &QueryScene<'_>, targets: &[u32], ray: &Ray) -> RayHit {
    let mut ray = *ray;
    let mut best = RayHit::MISS;
    for (k, &b) in targets.iter().enumerate() {
        let h = closest_hit_in(scene.frame, scene.packing, b as usize, scene.positions, &ray, NONE, &[]);
        best.nodes_visited += h.nodes_visited;
        best.triangles_tested += h.triangles_tested;
        best.fallback |= h.fallback;
        if h.is_hit() && h.t < best.t {
            best = RayHit { t: h.t, triangle: h.triangle, u: h.u, v: h.v, body: k as u32, ..best };
            ray.tmax = h.t;
        }
    }
    best
}

/// Twin of `raycast.wgsl`: closest hits of a batch of rays against packed bodies `targets`.
pub fn raycast(scene: &QueryScene<'_>, targets: &[u32], rays: &[Ray]) -> Vec<RayHit> {
    rays.par_iter().with_min_len(64).map(|r| raycast_ray(scene, targets, r)).collect()
}
