//! Twin of `shaders/raycast_anyhit.wgsl`: any hit of a batch of rays against a list of bodies,
//! for occlusion: the first triangle hit within `[tmin, tmax]` in the order of the stackless
//! depth-first walk of each body's BVH, the bodies in list order.

use rayon::prelude::*;

use super::shared::targets::QueryScene;
use crate::layout::{Ray, RayHit};

/// Twin of `raycast_anyhit.wgsl` for one ray against packed bodies `targets` (`body` is the
/// position in `targets`).
pub fn raycast_anyhit_ray(scene: &QueryScene<'_>, targets: &[u32], ray: &Ray) -> RayHit {
    let mut res = RayHit::MISS;
    for (k, &b) in targets.iter().enumerate() {
        let cost = scene.walk(b, ray, |triangle, t, u, v| {
            res = RayHit { t, triangle, u, v, body: k as u32, ..res };
            true
        });
        res.nodes_visited += cost.nodes;
        res.triangles_tested += cost.triangles;
        if res.is_hit() {
            break;
        }
    }
    res
}

/// Twin of `raycast_anyhit.wgsl`: any hit of each ray against packed bodies `targets`.
pub fn raycast_anyhit(scene: &QueryScene<'_>, targets: &[u32], rays: &[Ray]) -> Vec<RayHit> {
    rays.par_iter().with_min_len(64).map(|r| raycast_anyhit_ray(scene, targets, r)).collect()
}
