//! Twin of `shaders/edge_tiles.wgsl`: the workgroups of each directed pair of `edge_sources`.

use crate::layout::{BODY_CLOTH, BodyGpu, BodyPair, WG_SIZE};

/// Whether directed pair `k` of `pairs` traces the edges of its source body: not the reverse of
/// a self pair, nor a volumetric self pair.
pub fn traces_edges(bodies: &[BodyGpu], pairs: &[BodyPair], k: usize) -> bool {
    let p = &pairs[k / 2];
    p.a != p.b || (k.is_multiple_of(2) && bodies[p.a as usize].flags & BODY_CLOTH != 0)
}

/// Twin of `edge_tiles.wgsl`: the first workgroup of each directed pair (2k: `a -> b`, 2k + 1:
/// `b -> a`; none for the reverse of a self pair nor for a volumetric self pair, see
/// [`traces_edges`]) and, last, the total: `ceil(edges of the source body / WG_SIZE)` each.
pub fn edge_tiles(bodies: &[BodyGpu], pairs: &[BodyPair]) -> Vec<u32> {
    let mut offsets = Vec::with_capacity(2 * pairs.len() + 1);
    let mut total = 0;
    for (i, p) in pairs.iter().enumerate() {
        for (dir, src) in [p.a, p.b].into_iter().enumerate() {
            offsets.push(total);
            if traces_edges(bodies, pairs, 2 * i + dir) {
                total += bodies[src as usize].edge_count.div_ceil(WG_SIZE);
            }
        }
    }
    offsets.push(total);
    offsets
}
