//! Twin of `shaders/pair_tiles.wgsl`: the workgroups of each directed pair of the narrow phase.

use crate::layout::{BodyGpu, BodyPair, Tuning};

/// Twin of `pair_tiles.wgsl`: the first workgroup of each directed pair (2k: `a -> b`,
/// 2k + 1: `b -> a`, without workgroups for a self pair) and, last, the total, for `tuning`'s
/// workgroups of `ray_sources` (`barrier_group` invocations of `items` vertices).
pub fn pair_tiles(bodies: &[BodyGpu], pairs: &[BodyPair], tuning: Tuning) -> Vec<u32> {
    let per_group = tuning.barrier_group * tuning.items;
    let mut offsets = Vec::with_capacity(2 * pairs.len() + 1);
    let mut total = 0;
    for p in pairs {
        for (dir, src) in [p.a, p.b].into_iter().enumerate() {
            offsets.push(total);
            if dir == 0 || p.a != p.b {
                total += bodies[src as usize].vertex_count.div_ceil(per_group);
            }
        }
    }
    offsets.push(total);
    offsets
}
