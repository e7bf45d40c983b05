//! The CPU backend's full pass: the narrow phase's twin ([`cpu::ray_sources`]' source vertices
//! classified by [`cpu::classify`] through the BVH tracer) with its rays issued in a spatially
//! coherent order: each directed pair's source vertices in their body's ray order
//! ([`crate::ray_order`]), so that consecutive rays walk the same part of the target's tree.
//! The contacts are those of [`cpu::narrow_phase`], in another order (the scene
//! sorts them).

use glam::Vec3;
use rayon::prelude::*;

use crate::cpu::{self, BvhTracer, Narrow, Rays, Traced, Tracer};
use crate::layout::{BodyPair, ContactGpu, Ray, WalkCounts};

/// The backend's tracer: the BVH tracer, which also answers [`Tracer::may_reach`] from the
/// target's 4-wide tree, so that the rays classified by their re-projected length are not cast
/// at a body that comes nowhere near their origin (on `eight-sheets`, most of the rays between
/// layers that hang apart). The kernels cast them and find nothing to report: the same contacts.
struct ReachTracer;

impl Tracer for ReachTracer {
    fn trace(
        &self,
        cx: &Narrow<'_>,
        b: usize,
        ray: &Ray,
        ignore: u32,
        hint: u32,
        counts: &mut WalkCounts,
    ) -> Traced {
        BvhTracer.trace(cx, b, ray, ignore, hint, counts)
    }

    fn may_reach(&self, cx: &Narrow<'_>, b: usize, p: Vec3, r: f32) -> bool {
        // Grown a little: a hit computed at t <= r may lie a rounding error farther, and the
        // grown boxes are rounded too.
        let slack = r * 1.0e-3 + 1.0e-5 * p.abs().max_element().max(1.0);
        cx.frame.body_wide(b).is_none_or(|w| w.has_leaf_near(p, r + slack))
    }
}

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
/// `order` ([`crate::ray_order::vertex_order`]).
pub(super) fn full_pass(cx: &Narrow<'_>, pairs: &[BodyPair], order: &[u32]) -> Vec<ContactGpu> {
    let sources = ordered_sources(cx, pairs, order);
    sources
        .par_chunks(128)
        .fold(Vec::new, |mut acc, chunk| {
            for &[k, local] in chunk {
                let p = &pairs[(k / 2) as usize];
                let (a, b) = if k % 2 == 0 { (p.a, p.b) } else { (p.b, p.a) };
                let key = (a as usize, local, b as usize, k);
                cpu::classify(cx, &ReachTracer, key, p.prediction, Rays::BOTH, &mut acc);
            }
            acc
        })
        .reduce(Vec::new, |mut x, mut y| {
            x.append(&mut y);
            x
        })
}
