//! Twin of `shaders/walk.wgsl`: a batch of rays walked over the triangle adjacency from their
//! start triangles ([`walk_ray`], the twin of `shaders/shared/walk.wgsl`), with the BVH as
//! fallback.

use glam::Vec3;
use rayon::prelude::*;

use super::shared::bvh::closest_hit_in;
use super::shared::walk::walk_ray;
use crate::frame::FrameData;
use crate::layout::{NONE, Ray, WALK_FALLBACK_BVH, WALK_HIT, WalkCounts, WalkHit};
use crate::packing::Packing;
use crate::walk::WalkOptions;

/// Twin of `walk.wgsl`: walks each ray over packed body `b` from its start triangle
/// (body-local, or [`NONE`]), and with [`WalkFallback::Bvh`](crate::WalkFallback::Bvh) casts
/// the rays whose walk did not hit through the BVH ([`closest_hit_in`]); returns the results and
/// the counters (which the kernel writes to one buffer, the counters first:
/// [`WALK_HITS_OFFSET`](crate::layout::WALK_HITS_OFFSET)).
pub fn walk(
    packing: &Packing,
    frame: &FrameData,
    positions: &[Vec3],
    b: usize,
    rays: &[Ray],
    starts: &[u32],
    options: &WalkOptions,
) -> (Vec<WalkHit>, WalkCounts) {
    let body = &packing.bodies[b];
    let fallback = options.fallback.code() == WALK_FALLBACK_BVH;
    let hits: Vec<WalkHit> = rays
        .par_iter()
        .zip(starts.par_iter())
        .with_min_len(64)
        .map(|(r, &s)| {
            let (mut h, _) =
                walk_ray(body, &packing.adjacency, positions, &packing.triangles, r, s, options.max_steps);
            if h.outcome != WALK_HIT && fallback {
                let c = closest_hit_in(frame, packing, b, positions, r, NONE, &[]);
                h = WalkHit { t: c.t, triangle: c.triangle, u: c.u, v: c.v, bvh: 1, ..h };
            }
            h
        })
        .collect();
    let counts = WalkCounts::of(&hits);
    (hits, counts)
}
