//! The CPU backend's full pass: the narrow phase's twin ([`cpu::ray_sources`]' source vertices
//! classified by [`cpu::classify`] through the BVH tracer) with its rays issued in a spatially
//! coherent order: each directed pair's source vertices in their body's ray order
//! (`cpu::SourceLists`, [`crate::ray_order`]), so that consecutive rays walk the same part of
//! the target's tree.
//! With the wide trees on, a trace asked by several pairs is cast once ([`TraceMemo`]); with the
//! twins' binary trees, an exit trace, as the kernel does ([`cpu::ExitMemo`]). The contacts are
//! those of [`cpu::narrow_phase`], in another order (the scene sorts them).

use glam::Vec3;

use crate::contact_parts::ContactParts;
use crate::cpu::{self, BvhTracer, ExitMemo, Narrow, Rays, SourceLists, Tracer};
use crate::layout::{BodyPair, ContactGpu};
use crate::order_runs::OrderRuns;
use crate::trace_memo::TraceMemo;

/// The memo a full pass answers traces asked again from.
pub(super) enum PassMemo<'m> {
    /// The backend's own: the traces that skip a vertex (its entries of the bodies that moved
    /// emptied for this pass).
    Traces(&'m TraceMemo),
    /// The kernel's: the exit traces (its words of the bodies that moved emptied for this
    /// pass).
    Exits(&'m ExitMemo),
    /// None: every trace cast.
    None,
}

/// The full pass of the CPU backend: [`cpu::narrow_phase`]'s contacts, into `out`, its rays in
/// the order of `order.0` ([`crate::ray_order::vertex_order`], `order.1` its runs' boxes at this
/// frame's positions), listed in `sources`, the traces asked again answered from `memo`.
/// Returns the sources it classified and those that `may_reach` turned away (the kernel's
/// `sources` and `unreached`).
pub(super) fn full_pass(
    cx: &Narrow<'_>,
    pairs: &[BodyPair],
    order: (&[u32], &OrderRuns),
    sources: &mut SourceLists,
    memo: PassMemo<'_>,
    parts: &mut ContactParts,
    out: &mut Vec<ContactGpu>,
) -> (u32, u32) {
    let sources = sources.fill(cx.packing, &cx.frame.body_state, cx.positions, pairs, order);
    let unreached = match memo {
        PassMemo::Traces(m) => classify_all(cx, &m.tracer(&BvhTracer), pairs, sources, parts, out),
        PassMemo::Exits(m) => classify_all(cx, &m.tracer(&BvhTracer), pairs, sources, parts, out),
        PassMemo::None => classify_all(cx, &BvhTracer, pairs, sources, parts, out),
    };
    (sources.len() as u32, unreached)
}

/// Sources whose position and normal the full pass reads together.
const GATHER: usize = 16;

/// `sources` classified through `tracer`, in rayon, into `out`; the sources turned away.
fn classify_all<T: Tracer>(
    cx: &Narrow<'_>,
    tracer: &T,
    pairs: &[BodyPair],
    sources: &[[u32; 2]],
    parts: &mut ContactParts,
    out: &mut Vec<ContactGpu>,
) -> u32 {
    let job = |chunk: &[[u32; 2]], found: &mut Vec<ContactGpu>| {
        // The sources' positions and normals read GATHER at a time: in Morton order they are
        // scattered over memory, and read together their cache misses overlap instead of each
        // waiting behind the last source's walks.
        let mut unreached = 0;
        for block in chunk.chunks(GATHER) {
            let mut at = [((0, 0, 0, 0), 0.0, (Vec3::ZERO, Vec3::ZERO)); GATHER];
            for (g, &[k, local]) in at.iter_mut().zip(block) {
                let p = &pairs[(k / 2) as usize];
                let (a, b) = if k % 2 == 0 { (p.a, p.b) } else { (p.b, p.a) };
                let v = cx.packing.bodies[a as usize].vertex_offset + local;
                let key = (a as usize, local, b as usize, k);
                *g = (key, p.prediction, (cx.positions[v as usize], tracer.normal(cx, v)));
            }
            for &(key, prediction, source) in &at[..block.len()] {
                let c = cpu::classify_at(cx, tracer, key, source, prediction, Rays::BOTH, found);
                unreached += u32::from(c.unreached);
            }
        }
        unreached
    };
    parts.run(sources, out, job, |a, b| a + b)
}
