//! Twin of `shaders/ray_sources.wgsl`: the source vertices of the narrow phase, those within
//! the pair's reach of the target's box.

use glam::Vec3;
use rayon::prelude::*;

use super::shared::common::reach;
use crate::layout::{BODY_CLOTH, BodyPair, BodyState};
use crate::packing::Packing;

/// Twin of `ray_sources.wgsl`: the source vertices of the narrow phase, (directed pair k,
/// body-local vertex), in that order (the GPU appends them in any order: each workgroup's run in the body's ray
/// order, a Morton order of its vertices): every vertex of the
/// source body of each directed pair (2k: `a -> b`, 2k + 1: `b -> a`, one direction for a self
/// pair) but those outside the target's box grown by the pair's [`reach`] `max(prediction,
/// e_a + e_b)` (not tested for a self pair nor for volumetric -> cloth).
pub fn ray_sources(
    packing: &Packing,
    body_state: &[BodyState],
    positions: &[Vec3],
    pairs: &[BodyPair],
) -> Vec<[u32; 2]> {
    sources(packing, body_state, positions, pairs, None)
}

/// [`ray_sources`]' vertices with each directed pair's run in its body's ray order, as each
/// workgroup of the kernel appends its run: `order` holds every body's local vertices in that
/// order, at the body's vertex offset (the CPU backend's: by Morton code of the positions the
/// packing was made with). The CPU backend casts its rays in this order, so that consecutive
/// rays walk the same part of the target's tree.
pub fn ray_sources_ordered(
    packing: &Packing,
    body_state: &[BodyState],
    positions: &[Vec3],
    pairs: &[BodyPair],
    order: &[u32],
) -> Vec<[u32; 2]> {
    sources(packing, body_state, positions, pairs, Some(order))
}

fn sources(
    packing: &Packing,
    body_state: &[BodyState],
    positions: &[Vec3],
    pairs: &[BodyPair],
    order: Option<&[u32]>,
) -> Vec<[u32; 2]> {
    let mut directed = Vec::new();
    for (i, p) in pairs.iter().enumerate() {
        directed.push((2 * i as u32, p.a as usize, p.b as usize, p.prediction));
        if p.a != p.b {
            directed.push((2 * i as u32 + 1, p.b as usize, p.a as usize, p.prediction));
        }
    }
    let lists: Vec<Vec<[u32; 2]>> = directed
        .into_par_iter()
        .map(|(k, a, b, prediction)| {
            let (body_a, body_b) = (&packing.bodies[a], &packing.bodies[b]);
            let cloth_a = body_a.flags & BODY_CLOTH != 0;
            let cloth_b = body_b.flags & BODY_CLOTH != 0;
            let reach = reach(prediction, body_a.half_thickness, body_b.half_thickness);
            let (lo, hi) = body_state[b].bounds_keys();
            let tested = a != b && (cloth_a || !cloth_b);
            let listed = |&local: &u32| {
                let p = positions[(body_a.vertex_offset + local) as usize];
                !tested || !(p.cmplt(lo - reach).any() || p.cmpgt(hi + reach).any())
            };
            match order {
                Some(o) => o[body_a.vertex_offset as usize..][..body_a.vertex_count as usize]
                    .iter()
                    .copied()
                    .filter(listed)
                    .map(|local| [k, local])
                    .collect(),
                None => (0..body_a.vertex_count).filter(listed).map(|local| [k, local]).collect(),
            }
        })
        .collect();
    lists.concat()
}
