//! Twin of `shaders/narrow_phase.wgsl`: the full pass of the narrow phase, each listed source
//! vertex classified with rays through the BVH ([`BvhTracer`], the twin of the kernel's
//! `trace`), a volumetric vertex's exit trace asked again answered from the pass's exit memo
//! ([`ExitMemo`], the kernel's `exit_word`).

use std::sync::atomic::{AtomicU32, Ordering};

use glam::Vec3;
use rayon::prelude::*;

use super::ray_sources::ray_sources;
use super::shared::bvh::{Leaf, leaf_near, other_near};
use super::shared::classify::{Narrow, Rays, Traced, Tracer, classify};
use super::shared::ray::ray_axes;
use super::traverse::other_near_wide;
use crate::layout::{BODY_CLOTH, BodyGpu, BodyPair, ContactGpu, NONE, Ray, RayHit, WalkCounts};

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

    /// `leaf_near` on the body's tree (`other_near` with a vertex to ignore; the kernel asks
    /// its `other_near`, without its triangle test where no vertex is ignored): its wide tree
    /// when the frame has one (whose leaf lanes hold the binary leaves' boxes, and its records
    /// their corners: the same answer), else the binary tree, as the kernel.
    fn may_reach(&self, cx: &Narrow<'_>, b: usize, p: Vec3, r: f32, ignore: u32) -> bool {
        match (cx.frame.body_wide(b), ignore) {
            (Some(w), NONE) if !w.nodes.is_empty() => w.has_leaf_near(p, r),
            (Some(w), _) if !w.nodes.is_empty() => other_near_wide(w, p, r, ignore),
            (_, NONE) => leaf_near(cx.frame.body_nodes(cx.packing, b), p, r),
            _ => {
                let (body, nodes) = (&cx.packing.bodies[b], cx.frame.body_nodes(cx.packing, b));
                other_near(body, nodes, cx.positions, &cx.packing.triangles, p, r, ignore)
            }
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
    let mut memo = ExitMemo::default();
    memo.clear(cx.positions.len());
    let tracer = memo.tracer(&BvhTracer);
    let found: Vec<Vec<ContactGpu>> = sources
        .par_chunks(256)
        .map(|chunk| {
            let mut acc = Vec::new();
            for &[k, local] in chunk {
                let p = &pairs[(k / 2) as usize];
                let (a, b) = if k % 2 == 0 { (p.a, p.b) } else { (p.b, p.a) };
                classify(cx, &tracer, (a as usize, local, b as usize, k), p.prediction, Rays::BOTH, &mut acc);
            }
            acc
        })
        .collect();
    found.concat()
}

/// Twin of the kernel's exit memo (`exit_word` in `narrow_phase.wgsl`, after the source list in
/// the kernel's sources buffer): per packed vertex, the hit of its exit trace once a trace has
/// cast it, this pass or an earlier one while its body did not move (0: not yet, 1: a miss, the
/// body-local triangle plus 2). The exit trace of a volumetric vertex (its inward ray on its own
/// body, skipping it, without limit) is asked by every pair of its body with a cloth, by its
/// self pair, and by every pair of it when exits are remembered; its result depends on nothing
/// but the body's positions and the ray, so an answer from the memo is the cast's, whichever
/// pair cast it first.
#[derive(Debug, Default)]
pub struct ExitMemo {
    words: Vec<AtomicU32>,
}

impl ExitMemo {
    /// Empties the memo for a pass over `vertices` packed vertices (allocating only to grow).
    pub fn clear(&mut self, vertices: usize) {
        self.words.truncate(vertices);
        for w in &mut self.words {
            *w.get_mut() = 0;
        }
        self.words.resize_with(vertices, || AtomicU32::new(0));
    }

    /// Readies the memo for a pass over the packed `bodies` as the kernel's full pass does
    /// (`take_stale_exits` of the GPU scene): the words of the bodies that moved since the last
    /// pass that used it (`moved`, per packed body) emptied, the others' kept; all emptied when
    /// the memo was forgotten since ([`Self::forget`]) or the packing's vertices changed.
    pub fn keep_unmoved(&mut self, bodies: &[BodyGpu], moved: &[bool]) {
        let vertices = bodies.last().map_or(0, |b| (b.vertex_offset + b.vertex_count) as usize);
        if self.words.len() != vertices {
            self.clear(vertices);
            return;
        }
        for (body, _) in bodies.iter().zip(moved).filter(|(_, m)| **m) {
            let range = body.vertex_offset as usize..(body.vertex_offset + body.vertex_count) as usize;
            for w in &mut self.words[range] {
                *w.get_mut() = 0;
            }
        }
    }

    /// Drops every word (a pass that does not use the memo, whose moves it does not follow):
    /// the next [`Self::keep_unmoved`] empties all of them.
    pub fn forget(&mut self) {
        self.words.clear();
    }

    /// Whether a pass over `pairs` asks an exit trace: a pair of a volumetric body with a cloth,
    /// a volumetric self pair, or, when exits are remembered, any pair with a volumetric body.
    /// Otherwise the memo would keep nothing, and a pass casts the same without it.
    pub fn asked(bodies: &[BodyGpu], pairs: &[BodyPair], remember_exit: bool) -> bool {
        let cloth = |b: u32| bodies[b as usize].flags & BODY_CLOTH != 0;
        pairs.iter().any(|p| {
            let (a, b) = (cloth(p.a), cloth(p.b));
            (!a || !b) && (a != b || p.a == p.b || remember_exit)
        })
    }

    /// `inner`'s traces, the exit traces answered from this memo when it knows them (and kept
    /// in it when it does not).
    pub fn tracer<'m, T: Tracer>(&'m self, inner: &'m T) -> ExitMemoTracer<'m, T> {
        ExitMemoTracer { memo: self, inner }
    }
}

/// A [`Tracer`] answering the exit traces from an [`ExitMemo`] (twin of `trace` in
/// `narrow_phase.wgsl`), casting every other trace through `inner`.
#[derive(Debug)]
pub struct ExitMemoTracer<'m, T> {
    memo: &'m ExitMemo,
    inner: &'m T,
}

/// Twin of `is_exit_trace` in `narrow_phase.wgsl`: whether a trace of `ray` on packed body `b`
/// skipping packed vertex `v` is that vertex's exit trace, the one the kernels keep in their
/// exit memo: its inward ray (from its position, along minus its normal `normal`, from 0
/// without limit) on its own volumetric body.
pub fn is_exit_trace(cx: &Narrow<'_>, b: usize, ray: &Ray, v: u32, normal: Vec3) -> bool {
    let body = &cx.packing.bodies[b];
    v != NONE
        && v.wrapping_sub(body.vertex_offset) < body.vertex_count
        && body.flags & BODY_CLOTH == 0
        && ray.tmin == 0.0
        && ray.tmax == f32::INFINITY
        && ray.origin == cx.positions[v as usize]
        && ray.dir == -normal
}

impl<T: Tracer> Tracer for ExitMemoTracer<'_, T> {
    fn trace(
        &self,
        cx: &Narrow<'_>,
        b: usize,
        ray: &Ray,
        ignore: u32,
        hint: u32,
        counts: &mut WalkCounts,
    ) -> Traced {
        let exit = ignore != NONE && is_exit_trace(cx, b, ray, ignore, self.inner.normal(cx, ignore));
        let word = exit.then(|| &self.memo.words[ignore as usize]);
        if let Some(w) = word {
            match w.load(Ordering::Relaxed) {
                0 => {}
                1 => return Traced::cast(RayHit::MISS, None),
                code => {
                    // The closest hit is that triangle's: its test gives the walk's t, u, v.
                    let tri = code - 2;
                    let body = &cx.packing.bodies[b];
                    let leaf = Leaf {
                        body,
                        positions: cx.positions,
                        triangles: &cx.packing.triangles,
                        ray,
                        axes: ray_axes(ray.dir),
                        ignore_vertex: ignore,
                    };
                    let (mut hit, mut tmax) = (RayHit::MISS, ray.tmax);
                    leaf.test(tri, &mut hit, &mut tmax);
                    // (A word the ray no longer hits, which `keep_unmoved` leaves none of, would
                    // be cast again.)
                    if hit.triangle == tri {
                        return Traced::cast(hit, None);
                    }
                }
            }
        }
        let traced = self.inner.trace(cx, b, ray, ignore, hint, counts);
        if let Some(w) = word {
            w.store(if traced.hit.triangle == NONE { 1 } else { traced.hit.triangle + 2 }, Ordering::Relaxed);
        }
        traced
    }

    fn may_reach(&self, cx: &Narrow<'_>, b: usize, p: Vec3, r: f32, ignore: u32) -> bool {
        self.inner.may_reach(cx, b, p, r, ignore)
    }

    /// The inner tracer's: a line is a cloth vertex's two rays, never an exit trace.
    fn trace_line(&self, cx: &Narrow<'_>, b: usize, ray: &Ray, ignore: u32) -> Option<[Traced; 2]> {
        self.inner.trace_line(cx, b, ray, ignore)
    }

    fn normal(&self, cx: &Narrow<'_>, v: u32) -> Vec3 {
        self.inner.normal(cx, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_are_asked_by_a_volumetric_body_with_a_cloth_itself_or_remembered_exits() {
        let body = |flags| BodyGpu { flags, ..BodyGpu::default() };
        let bodies = [body(0), body(0), body(BODY_CLOTH)];
        let pair = |a, b| BodyPair { a, b, prediction: 0.0, pad: 0 };
        let asked = |a, b, remember| ExitMemo::asked(&bodies, &[pair(a, b)], remember);
        assert!(!asked(0, 1, false) && asked(0, 1, true), "volumetric pair: when exits are remembered");
        assert!(asked(0, 2, false) && asked(2, 0, false), "a volumetric body with a cloth");
        assert!(asked(0, 0, false), "a volumetric self pair");
        assert!(!asked(2, 2, false) && !asked(2, 2, true), "a cloth's self pair asks none");
        assert!(!ExitMemo::asked(&bodies, &[], true));
    }

    #[test]
    fn a_kept_memo_empties_the_words_of_the_bodies_that_moved() {
        let body =
            |vertex_offset, vertex_count| BodyGpu { vertex_offset, vertex_count, ..BodyGpu::default() };
        let bodies = [body(0, 3), body(3, 2)];
        let words = |m: &mut ExitMemo| m.words.iter_mut().map(|w| *w.get_mut()).collect::<Vec<_>>();
        let mut memo = ExitMemo::default();
        memo.keep_unmoved(&bodies, &[false, false]);
        assert_eq!(words(&mut memo), [0; 5], "made for the packing");
        memo.words.iter().for_each(|w| w.store(7, Ordering::Relaxed));
        memo.keep_unmoved(&bodies, &[false, true]);
        assert_eq!(words(&mut memo), [7, 7, 7, 0, 0]);
        memo.keep_unmoved(&[body(0, 3), body(3, 3)], &[false, false]);
        assert_eq!(words(&mut memo), [0; 6], "another packing's vertices");
        memo.words.iter().for_each(|w| w.store(7, Ordering::Relaxed));
        memo.forget();
        memo.keep_unmoved(&[body(0, 3), body(3, 3)], &[false, false]);
        assert_eq!(words(&mut memo), [0; 6], "forgotten");
    }
}
