//! The boxes of runs of consecutive vertices of each body's ray order
//! ([`crate::ray_order::vertex_order`]) at a frame's positions: what lets the CPU backend's
//! source listing skip a run of vertices whole.

use glam::Vec3;
use rayon::prelude::*;

use crate::packing::Packing;

/// Vertices of a run of [`OrderRuns`].
pub(crate) const RUN: usize = 16;

/// The boxes of runs of [`RUN`] consecutive vertices of each body's ray order (the last run of
/// a body may be shorter), at this frame's positions: the CPU backend's source listing
/// (`cpu::SourceLists`) skips a run whose box lies outside the target's grown box, and
/// lists one inside it whole, instead of testing its vertices one by one (a pile's ground lists
/// a handful of its thousands of vertices for each body resting on it; a garment lies within
/// the body it covers). A run holding a NaN coordinate has the infinite box: the per-vertex
/// test lists such a vertex, so its run is never skipped (nor taken whole but under an infinite
/// target box, where the vertex test lists it too).
#[derive(Debug, Default)]
pub(crate) struct OrderRuns {
    /// Each run's (min, max).
    boxes: Vec<(Vec3, Vec3)>,
    /// Each packed body's first run, then the number of runs.
    first: Vec<u32>,
}

impl OrderRuns {
    /// The runs' boxes for `positions` in the ray order `order` (each packed body's vertices,
    /// body-local, at its vertex offset: [`crate::ray_order::vertex_order`]).
    pub fn update(&mut self, packing: &Packing, positions: &[Vec3], order: &[u32]) {
        self.first.clear();
        let mut runs = 0u32;
        for body in &packing.bodies {
            self.first.push(runs);
            runs += (body.vertex_count as usize).div_ceil(RUN) as u32;
        }
        self.first.push(runs);
        self.boxes.resize(runs as usize, (Vec3::ZERO, Vec3::ZERO));
        let first = &self.first;
        let parts = packing
            .split_per_body(&mut self.boxes, |_, b| (first[b] as usize, (first[b + 1] - first[b]) as usize));
        packing.bodies.par_iter().zip(parts).for_each(|(body, part)| {
            let own = &positions[body.vertex_offset as usize..][..body.vertex_count as usize];
            let ordered = &order[body.vertex_offset as usize..][..body.vertex_count as usize];
            for (run, local) in part.iter_mut().zip(ordered.chunks(RUN)) {
                let (mut lo, mut hi) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
                let mut nan = false;
                for &l in local {
                    let p = own[l as usize];
                    nan |= p.is_nan();
                    lo = lo.min(p);
                    hi = hi.max(p);
                }
                *run = if nan { (Vec3::NEG_INFINITY, Vec3::INFINITY) } else { (lo, hi) };
            }
        });
    }

    /// The boxes of packed body `b`'s runs, in order.
    pub fn body(&self, b: usize) -> &[(Vec3, Vec3)] {
        &self.boxes[self.first[b] as usize..self.first[b + 1] as usize]
    }
}
