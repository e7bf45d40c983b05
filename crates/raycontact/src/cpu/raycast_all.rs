//! Twin of `shaders/raycast_all.wgsl`: all hits of a batch of rays against a list of bodies, up
//! to `max_hits` per ray, kept sorted in each ray's slots, with the counts per ray and the
//! totals.

use rayon::prelude::*;

use super::shared::targets::QueryScene;
use crate::layout::{Ray, RayHitCount, RayHitTotals, RayIntersection};

/// `add_hit` of `raycast_all.wgsl`: counts `h` in `c` and, when it is among the first
/// `slots.len()` in [`RayIntersection::order`], inserts it into the sorted `slots`.
fn add_hit(c: &mut RayHitCount, slots: &mut [RayIntersection], h: RayIntersection) {
    let cap = slots.len() as u32;
    c.found += 1;
    let mut i = c.stored as usize;
    if c.stored == cap {
        if h.order(&slots[i - 1]).is_ge() {
            return;
        }
        i -= 1;
    } else {
        c.stored += 1;
    }
    while i > 0 && h.order(&slots[i - 1]).is_lt() {
        slots[i] = slots[i - 1];
        i -= 1;
    }
    slots[i] = h;
}

/// Twin of `raycast_all.wgsl` for one ray against packed bodies `targets`: its count, and its
/// first `slots.len()` hits sorted into `slots` (the rest of `slots` untouched).
pub fn raycast_all_ray(
    scene: &QueryScene<'_>,
    targets: &[u32],
    ray: &Ray,
    slots: &mut [RayIntersection],
) -> RayHitCount {
    let mut c = RayHitCount::default();
    for (k, &b) in targets.iter().enumerate() {
        let cost = scene.walk(b, ray, |triangle, t, u, v| {
            add_hit(&mut c, slots, RayIntersection { t, triangle, u, v, body: k as u32 });
            false
        });
        c.nodes_visited += cost.nodes;
        c.triangles_tested += cost.triangles;
    }
    c
}

/// Twin of `raycast_all.wgsl`: the totals, each ray's count, and its hits in slots
/// `max_hits * i ..` of the returned hits (`stored` of them valid, the others zero), as the
/// kernel leaves its buffers. `max_hits` is at least 1.
pub fn raycast_all(
    scene: &QueryScene<'_>,
    targets: &[u32],
    rays: &[Ray],
    max_hits: u32,
) -> (RayHitTotals, Vec<RayHitCount>, Vec<RayIntersection>) {
    let cap = max_hits.max(1) as usize;
    let mut hits = vec![RayIntersection::default(); rays.len() * cap];
    let counts: Vec<RayHitCount> = hits
        .par_chunks_mut(cap)
        .zip(rays.par_iter())
        .with_min_len(64)
        .map(|(slots, r)| raycast_all_ray(scene, targets, r, slots))
        .collect();
    (RayHitTotals::of(&counts), counts, hits)
}
