//! The CPU backend's full pass: the narrow phase's twin ([`cpu::ray_sources`]' source vertices
//! classified by [`cpu::classify`] through the BVH tracer) with its rays issued in a spatially
//! coherent order: each directed pair's source vertices in their body's ray order
//! ([`crate::ray_order`]), so that consecutive rays walk the same part of the target's tree.
//! With the wide trees on, a trace asked by several pairs is cast once ([`TraceMemo`]). The
//! contacts are those of [`cpu::narrow_phase`], in another order (the scene sorts them).

use rayon::prelude::*;

use crate::cpu::{self, BvhTracer, Narrow, Rays, Tracer};
use crate::layout::{BodyPair, ContactGpu};
use crate::trace_memo::TraceMemo;

/// The source vertices of [`cpu::ray_sources`] (every directed pair's in one run, pair by
/// pair), each run reordered to follow `order` ([`crate::ray_order::vertex_order`]).
fn ordered_sources(cx: &Narrow<'_>, pairs: &[BodyPair], order: &[u32]) -> Vec<[u32; 2]> {
    let mut sources = cpu::ray_sources(cx.packing, &cx.frame.body_state, cx.positions, pairs);
    let mut runs: Vec<&mut [[u32; 2]]> = Vec::new();
    let mut rest = sources.as_mut_slice();
    while let Some(&[k, _]) = rest.first() {
        let len = rest.iter().position(|s| s[0] != k).unwrap_or(rest.len());
        let (run, tail) = rest.split_at_mut(len);
        runs.push(run);
        rest = tail;
    }
    runs.into_par_iter().filter(|run| run.len() > 1).for_each(|run| {
        let k = run[0][0];
        let p = &pairs[(k / 2) as usize];
        let a = if k % 2 == 0 { p.a } else { p.b };
        let body = &cx.packing.bodies[a as usize];
        let mut listed = vec![false; body.vertex_count as usize];
        for s in run.iter() {
            listed[s[1] as usize] = true;
        }
        let seg = &order[body.vertex_offset as usize..][..body.vertex_count as usize];
        let mut out = run.iter_mut();
        for &v in seg.iter().filter(|&&v| listed[v as usize]) {
            *out.next().expect("as many listed as marked") = [k, v];
        }
    });
    sources
}

/// The full pass of the CPU backend: [`cpu::narrow_phase`]'s contacts, its rays in the order of
/// `order` ([`crate::ray_order::vertex_order`]), the traces that skip a vertex through `memo`
/// when given (emptied for this frame; none: every trace cast, as the kernel casts them).
pub(super) fn full_pass(
    cx: &Narrow<'_>,
    pairs: &[BodyPair],
    order: &[u32],
    memo: Option<&TraceMemo>,
) -> Vec<ContactGpu> {
    let sources = ordered_sources(cx, pairs, order);
    match memo {
        Some(m) => classify_all(cx, &m.tracer(&BvhTracer), pairs, &sources),
        None => classify_all(cx, &BvhTracer, pairs, &sources),
    }
}

/// `sources` classified through `tracer`, in rayon.
fn classify_all<T: Tracer>(
    cx: &Narrow<'_>,
    tracer: &T,
    pairs: &[BodyPair],
    sources: &[[u32; 2]],
) -> Vec<ContactGpu> {
    sources
        .par_chunks(128)
        .fold(Vec::new, |mut acc, chunk| {
            for &[k, local] in chunk {
                let p = &pairs[(k / 2) as usize];
                let (a, b) = if k % 2 == 0 { (p.a, p.b) } else { (p.b, p.a) };
                let key = (a as usize, local, b as usize, k);
                cpu::classify(cx, tracer, key, p.prediction, Rays::BOTH, &mut acc);
            }
            acc
        })
        .reduce(Vec::new, |mut x, mut y| {
            x.append(&mut y);
            x
        })
}
