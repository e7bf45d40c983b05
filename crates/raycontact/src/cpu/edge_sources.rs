//! Twin of `shaders/edge_sources.wgsl`: the edges that `crossings` traces.

use glam::Vec3;
use rayon::prelude::*;

use super::edge_tiles::traces_edges;
use crate::layout::{BodyPair, BodyState};
use crate::packing::Packing;

/// Twin of `edge_sources.wgsl`: (directed pair k, source body, target body, body-local edge) in
/// that order (the GPU appends them in any order), for every edge of the source body of each
/// directed pair that traces edges ([`traces_edges`](super::edge_tiles::traces_edges)) whose
/// target has a BVH, but those whose box misses the target's box (closed boxes; every edge of a
/// cloth on its self pair).
pub fn edge_sources(
    packing: &Packing,
    body_state: &[BodyState],
    positions: &[Vec3],
    pairs: &[BodyPair],
) -> Vec<[u32; 4]> {
    let directed: Vec<(u32, u32, u32)> = (0..2 * pairs.len())
        .filter(|&k| traces_edges(&packing.bodies, pairs, k))
        .map(|k| {
            let p = &pairs[k / 2];
            let (a, b) = if k % 2 == 0 { (p.a, p.b) } else { (p.b, p.a) };
            (k as u32, a, b)
        })
        .collect();
    let lists: Vec<Vec<[u32; 4]>> = directed
        .into_par_iter()
        .map(|(k, a, b)| {
            let body_a = &packing.bodies[a as usize];
            if body_state[b as usize].leaf_count == 0 {
                return Vec::new();
            }
            let (lo, hi) = body_state[b as usize].bounds_keys();
            let edges = &packing.edges[body_a.edge_offset as usize..][..body_a.edge_count as usize];
            edges
                .iter()
                .enumerate()
                .filter(|(_, e)| {
                    let (p, q) = (positions[e.a as usize], positions[e.b as usize]);
                    a == b || !(p.max(q).cmplt(lo).any() || p.min(q).cmpgt(hi).any())
                })
                .map(|(i, _)| [k, a, b, i as u32])
                .collect()
        })
        .collect();
    lists.concat()
}
