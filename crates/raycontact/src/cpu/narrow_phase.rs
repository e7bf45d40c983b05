//! Twin of `shaders/narrow_phase.wgsl`: the full pass of the narrow phase, each listed source
//! vertex classified with rays through the BVH ([`BvhTracer`], the twin of the kernel's
//! `trace`).

use glam::Vec3;
use rayon::prelude::*;

use super::ray_sources::ray_sources;
use super::shared::bvh::leaf_near;
use super::shared::classify::{Narrow, Rays, Traced, Tracer, classify};
use crate::layout::{BodyPair, ContactGpu, Ray, WalkCounts};

/// The full pass: every trace through the BVH (twin of `trace` in `narrow_phase.wgsl`, by the
/// backend's own traversal, `closest_hit_ordered`, which finds the same closest hit).
#[derive(Clone, Copy, Debug, Default)]
pub struct BvhTracer;

impl Tracer for BvhTracer {
    fn trace(&self, cx: &Narrow<'_>, b: usize, ray: &Ray, ignore: u32, _: u32, _: &mut WalkCounts) -> Traced {
        let (hit, face) = cx.bvh_hit(b, ray, ignore);
        Traced::cast(hit, face)
    }

    /// Both rays in one walk of the tree ([`closest_hits_line`](crate::cpu::closest_hits_line)).
    fn trace_line(&self, cx: &Narrow<'_>, b: usize, ray: &Ray, ignore: u32) -> Option<[Traced; 2]> {
        Some(cx.bvh_hits_line(b, ray, ignore).map(|(hit, face)| Traced::cast(hit, face)))
    }

    /// `leaf_near` on the body's tree: its wide tree when the frame has one (whose leaf lanes
    /// hold the binary leaves' boxes: the same answer), else the binary tree, as the kernel.
    fn may_reach(&self, cx: &Narrow<'_>, b: usize, p: Vec3, r: f32) -> bool {
        match cx.frame.body_wide(b) {
            Some(w) if !w.nodes.is_empty() => w.has_leaf_near(p, r),
            _ => leaf_near(cx.frame.body_nodes(cx.packing, b), p, r),
        }
    }
}

/// Twin of `narrow_phase.wgsl` over a pair list (each pair in both directions, a self pair
/// once): the source vertices of [`ray_sources`], classified in rayon, in (directed pair,
/// vertex, inward before outward) order (the GPU appends them in any order). `pairs` is the list
/// that follows the detection's counters in the kernel's pair buffer
/// ([`PAIRS_OFFSET`](crate::layout::PAIRS_OFFSET)).
pub fn narrow_phase(cx: &Narrow<'_>, pairs: &[BodyPair]) -> Vec<ContactGpu> {
    let sources = ray_sources(cx.packing, &cx.frame.body_state, cx.positions, pairs);
    let found: Vec<Vec<ContactGpu>> = sources
        .par_chunks(256)
        .map(|chunk| {
            let mut acc = Vec::new();
            for &[k, local] in chunk {
                let p = &pairs[(k / 2) as usize];
                let (a, b) = if k % 2 == 0 { (p.a, p.b) } else { (p.b, p.a) };
                classify(
                    cx,
                    &BvhTracer,
                    (a as usize, local, b as usize, k),
                    p.prediction,
                    Rays::BOTH,
                    &mut acc,
                );
            }
            acc
        })
        .collect();
    found.concat()
}
