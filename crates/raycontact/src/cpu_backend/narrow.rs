//! The CPU backend's full pass: the narrow phase's twin ([`cpu::ray_sources`]' source vertices
//! classified by [`cpu::classify`] through the BVH tracer) with its rays issued in a spatially
//! coherent order: each directed pair's source vertices in the Morton order of their body
//! (computed when the bodies are packed), so that consecutive rays walk the same part of the
//! target's tree. The contacts are those of [`cpu::narrow_phase`], in another order (the scene
//! sorts them).

use glam::Vec3;
use rayon::prelude::*;

use crate::cpu::{self, BvhTracer, Narrow, Rays, expand_bits};
use crate::layout::{BodyPair, ContactGpu};
use crate::packing::Packing;

/// Each packed body's vertices (body-local indices) in the Morton order of `positions` within
/// the body's box, packed as the vertices are (body `b`'s at `vertex_offset`).
pub(super) fn vertex_order(packing: &Packing, positions: &[Vec3]) -> Vec<u32> {
    let mut order = vec![0u32; positions.len()];
    let mut segments: Vec<(&crate::layout::BodyGpu, &mut [u32])> = Vec::new();
    let mut rest = order.as_mut_slice();
    for body in &packing.bodies {
        let (seg, tail) = rest.split_at_mut(body.vertex_count as usize);
        segments.push((body, seg));
        rest = tail;
    }
    segments.into_par_iter().for_each(|(body, seg)| {
        let p = &positions[body.vertex_offset as usize..][..body.vertex_count as usize];
        let (lo, hi) = p.iter().fold((Vec3::MAX, Vec3::MIN), |(l, h), x| (l.min(*x), h.max(*x)));
        let scale = 1023.0 / (hi - lo).max_element().max(f32::MIN_POSITIVE);
        let code = |x: Vec3| {
            let q = ((x - lo) * scale).clamp(Vec3::ZERO, Vec3::splat(1023.0)).as_uvec3();
            (expand_bits(q.x) << 2) | (expand_bits(q.y) << 1) | expand_bits(q.z)
        };
        let mut keyed: Vec<(u32, u32)> = p.iter().enumerate().map(|(v, x)| (code(*x), v as u32)).collect();
        keyed.sort_unstable();
        for (o, (_, v)) in seg.iter_mut().zip(keyed) {
            *o = v;
        }
    });
    order
}

/// The source vertices of [`cpu::ray_sources`] (every directed pair's in one run, pair by
/// pair), each run reordered to follow `order` ([`vertex_order`]).
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
/// `order` ([`vertex_order`]).
pub(super) fn full_pass(cx: &Narrow<'_>, pairs: &[BodyPair], order: &[u32]) -> Vec<ContactGpu> {
    let sources = ordered_sources(cx, pairs, order);
    sources
        .par_chunks(128)
        .fold(Vec::new, |mut acc, chunk| {
            for &[k, local] in chunk {
                let p = &pairs[(k / 2) as usize];
                let (a, b) = if k % 2 == 0 { (p.a, p.b) } else { (p.b, p.a) };
                let key = (a as usize, local, b as usize, k);
                cpu::classify(cx, &BvhTracer, key, p.prediction, Rays::BOTH, &mut acc);
            }
            acc
        })
        .reduce(Vec::new, |mut x, mut y| {
            x.append(&mut y);
            x
        })
}
