//! Twin of `shaders/walk_contacts.wgsl`: iterative detection, last frame's contacts re-cast by
//! walking from their triangles ([`WalkTracer`], the twin of the kernel's `trace`) and
//! classified as the full pass does.

use glam::Vec3;

use super::shared::classify::{Narrow, Rays, Traced, Tracer, classify};
use super::shared::walk::walk_ray;
use crate::contact_parts::ContactParts;
use crate::layout::{
    BodyGpu, BodyPair, ContactGpu, MAX_WALK_STEPS, NONE, Ray, RayHit, WALK_FALLBACK_BVH, WALK_HIT, WALK_LOOP,
    WALK_NO_START, WalkCounts, contact_flags,
};
use crate::prefetch::prefetch;

/// Iterative detection (twin of `trace` in `walk_contacts.wgsl`): walk from the hint, at most
/// `ceil(reach / mean_size)` edges; a walk that does not hit (or ends on a triangle of the
/// ignored vertex, counted as a loop), and a trace without a hint, go through the BVH when
/// `fallback` is [`WALK_FALLBACK_BVH`], else miss.
#[derive(Clone, Copy, Debug)]
pub struct WalkTracer {
    /// [`WALK_FALLBACK_BVH`] or [`WALK_FALLBACK_DROP`](crate::layout::WALK_FALLBACK_DROP).
    pub fallback: u32,
    /// `confidence × displacement threshold`.
    pub reach: f32,
}

impl WalkTracer {
    /// Edges a walk over `body` may cross (Eq. 1 of Lehericey et al. 2013).
    pub fn steps(&self, body: &BodyGpu) -> u32 {
        // `ceil` by hand: without SSE4.1 (the x86-64 baseline) `f32::ceil` is a call into libm,
        // made for every trace. The same count: a NaN or a count past the limit is the limit.
        let x = self.reach / body.mean_size;
        if x < MAX_WALK_STEPS as f32 {
            let whole = x as u32;
            if (whole as f32) < x { whole + 1 } else { whole }
        } else {
            MAX_WALK_STEPS
        }
    }
}

impl Tracer for WalkTracer {
    fn may_reach(&self, _: &Narrow<'_>, _: usize, _: Vec3, _: f32, _: u32) -> bool {
        // As `walk_contacts.wgsl`: every ray is walked or cast.
        true
    }

    fn normal(&self, cx: &Narrow<'_>, v: u32) -> Vec3 {
        // As `walk_contacts.wgsl`: computed here (an iterative pass computes no normals).
        let p = cx.packing;
        super::vertex_normal(cx.positions, &p.triangles, &p.vertex_tri_offsets, &p.vertex_tris, v as usize)
    }

    fn trace(
        &self,
        cx: &Narrow<'_>,
        b: usize,
        ray: &Ray,
        ignore: u32,
        hint: u32,
        counts: &mut WalkCounts,
    ) -> Traced {
        let body = &cx.packing.bodies[b];
        let mut outcome = WALK_NO_START;
        if hint != NONE {
            let (w, face) = walk_ray(
                body,
                &cx.packing.adjacency,
                cx.positions,
                &cx.packing.triangles,
                ray,
                hint,
                self.steps(body),
            );
            let own = w.outcome == WALK_HIT && ignore != NONE && {
                let g = (body.tri_offset + w.triangle) as usize;
                cx.packing.triangles[3 * g..3 * g + 3].contains(&ignore)
            };
            if w.outcome == WALK_HIT && !own {
                counts.outcomes[WALK_HIT as usize] += 1;
                let hit = RayHit {
                    t: w.t,
                    triangle: w.triangle,
                    u: w.u,
                    v: w.v,
                    triangles_tested: w.steps + 1,
                    ..RayHit::MISS
                };
                return Traced { hit, walked: true, steps: w.steps, outcome: WALK_HIT, face: Some(face) };
            }
            outcome = if own { WALK_LOOP } else { w.outcome };
            counts.outcomes[outcome as usize] += 1;
        } else {
            counts.outcomes[WALK_NO_START as usize] += 1;
        }
        if self.fallback == WALK_FALLBACK_BVH {
            counts.fallback_casts += 1;
            let (hit, face) = cx.bvh_hit(b, ray, ignore);
            counts.fallback_hits += u32::from(hit.triangle != NONE);
            return Traced { outcome, ..Traced::cast(hit, face) };
        }
        Traced { outcome, ..Traced::cast(RayHit::MISS, None) }
    }
}

/// Twin of `walk_contacts.wgsl`, in rayon: each of last frame's contacts (`memory`, made over
/// the pair list `pairs`) re-cast along its side by walking from its triangles, classified as
/// the full pass does (edge and untangling contacts, `is_intersection_contact`, are left
/// out), the contacts into `out` (in memory order; `parts` keeps the per-job vectors between
/// frames). Returns the walk counters and how many remembered contacts were re-cast (those not
/// left out). (The kernel reads how many contacts `memory` holds from the detection state,
/// `stored`, and the pairs from the list that follows it in the same buffer.)
pub fn walk_contacts(
    cx: &Narrow<'_>,
    tracer: &WalkTracer,
    pairs: &[BodyPair],
    memory: &[ContactGpu],
    parts: &mut ContactParts,
    out: &mut Vec<ContactGpu>,
) -> (WalkCounts, u32) {
    let job = |chunk: &[ContactGpu], found: &mut Vec<ContactGpu>| {
        let (mut counts, mut walked) = (WalkCounts::default(), 0);
        for (i, m) in chunk.iter().enumerate() {
            for (stage, ahead) in WALK_AHEAD.into_iter().enumerate() {
                if let Some(m) = chunk.get(i + ahead) {
                    prefetch_walk(cx, m, stage);
                }
            }
            if is_intersection_contact(m) {
                continue;
            }
            walked += 1;
            let outward = m.flags & contact_flags::OUTWARD_RAY != 0;
            let rays = Rays {
                sides: if outward { 2 } else { 1 },
                hint_in: if outward { NONE } else { m.target_triangle },
                hint_out: if outward { m.target_triangle } else { NONE },
                hint_exit: m.exit_triangle,
            };
            let prediction = pairs[(m.pair / 2) as usize].prediction;
            let id = (m.source_body as usize, m.source_vertex, m.target_body as usize, m.pair);
            counts.add_counts(&classify(cx, tracer, id, prediction, rays, found).walk);
        }
        (counts, walked)
    };
    let sum = |(mut a, x): (WalkCounts, u32), (b, y): (WalkCounts, u32)| {
        a.add_counts(&b);
        (a, x + y)
    };
    parts.run(memory, out, job, sum)
}

/// How far ahead of the contact classified [`prefetch_walk`] asks for each stage's lines: each
/// stage reads its addresses from the lines the stage before asked for, which have arrived by
/// then.
const WALK_AHEAD: [usize; 3] = [8, 4, 2];

/// Asks for the cache lines a remembered contact's classification reads ([`crate::prefetch`]),
/// `stage` 0 to 2 as it comes nearer ([`WALK_AHEAD`]): (0) the source vertex's position and
/// incidence range, the vertex indices and neighbours of the triangles its walks start on (last
/// frame's hit and exit); (1) the list of its incident triangles; (2) their vertex indices. The
/// last two are what its normal reads first (the walks compute their sources' normals), each
/// load waiting for the one before. The contacts come in order of source vertex, their start
/// triangles scattered over the bodies.
fn prefetch_walk(cx: &Narrow<'_>, m: &ContactGpu, stage: usize) {
    let p = cx.packing;
    let Some(source) = p.bodies.get(m.source_body as usize) else { return };
    let v = (source.vertex_offset + m.source_vertex) as usize;
    let incident = || {
        let range = p.vertex_tri_offsets.get(v).zip(p.vertex_tri_offsets.get(v + 1));
        range.and_then(|(&from, &to)| p.vertex_tris.get(from as usize..to as usize)).unwrap_or(&[])
    };
    match stage {
        0 => {
            prefetch(cx.positions, v);
            prefetch(&p.vertex_tri_offsets, v);
            for (body, tri) in [(m.target_body, m.target_triangle), (m.source_body, m.exit_triangle)] {
                if let (Some(b), true) = (p.bodies.get(body as usize), tri != NONE) {
                    let g = 3 * (b.tri_offset + tri) as usize;
                    prefetch(&p.triangles, g);
                    prefetch(&p.adjacency, g);
                }
            }
        }
        1 => {
            // Both ends: the list may straddle two lines.
            let tris = incident();
            prefetch(tris, 0);
            prefetch(tris, tris.len().saturating_sub(1));
        }
        _ => {
            for &t in incident() {
                prefetch(&p.triangles, 3 * t as usize);
            }
        }
    }
}

/// Whether a remembered contact came from the intersection stages (an edge or untangling
/// contact), which iterative detection does not re-cast: they are not rays.
fn is_intersection_contact(c: &ContactGpu) -> bool {
    c.flags & (contact_flags::EDGE | contact_flags::UNTANGLE) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_the_kernels_ceiling() {
        // `walk_contacts.wgsl`: `ceil(reach / mean_size)`, the limit where that is not below it.
        let kernel = |x: f32| {
            let steps = x.ceil();
            if steps < MAX_WALK_STEPS as f32 { steps as u32 } else { MAX_WALK_STEPS }
        };
        let limit = MAX_WALK_STEPS as f32;
        let mut reaches = vec![0.0, -0.0, 1.0, 2.5, 3.0, limit - 1.0, limit - 0.5, limit, limit + 0.5, 1e30];
        reaches.extend([-0.5, -3.0, f32::INFINITY, f32::NAN, f32::MIN_POSITIVE, 1.0 + f32::EPSILON]);
        reaches.extend((0..2000).map(|i| i as f32 * 0.013_7));
        for reach in reaches {
            for mean_size in [1.0, 0.1, 0.3, 0.0] {
                let body = BodyGpu { mean_size, ..BodyGpu::default() };
                let tracer = WalkTracer { fallback: WALK_FALLBACK_BVH, reach };
                assert_eq!(tracer.steps(&body), kernel(reach / mean_size), "reach {reach}, size {mean_size}");
            }
        }
    }
}
