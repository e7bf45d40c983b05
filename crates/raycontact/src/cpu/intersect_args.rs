//! Twin of `shaders/intersect_args.wgsl`: the indirect dispatches of the intersection stages.

use crate::layout::{IntersectParams, IntersectState, WG_SIZE, dispatch_size};

/// Twin of `intersect_args.wgsl`: `args[4..12)` — (x, y, z, count) over the listed edges, then
/// over the stored crossings (0 workgroups for none).
pub fn intersect_args(params: &IntersectParams, state: &IntersectState) -> [u32; 8] {
    let one = |count: u32| {
        let groups = count.div_ceil(WG_SIZE);
        let (x, y) = if groups == 0 { (0, 1) } else { dispatch_size(groups) };
        [x, y, 1, count]
    };
    let e = one(state.edge_sources.min(params.edge_source_capacity));
    let c = one(state.crossings.min(params.crossing_capacity));
    [e[0], e[1], e[2], e[3], c[0], c[1], c[2], c[3]]
}
