// The indirect dispatches of the intersection stages from their counters, in workgroups of
// WG_SIZE (x, y spilling past MAX_GROUPS_X, z = 1), each followed by its count: args[4..8) one
// invocation per listed edge (`crossings`), args[8..12) one per stored crossing (the contour,
// the analysis and the edge contacts). Run after each counting stage; one invocation.
// CPU twin: `raycontact::internals::cpu::intersect_args`.
//!include shared/common.wgsl
//!include shared/intersect.wgsl

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> state: IntersectStateRead;
@group(0) @binding(2) var<storage, read_write> args: array<u32, 12>;

fn write_args(base: u32, count: u32) {
    let xy = dispatch_xy((count + WG_SIZE - 1u) / WG_SIZE);
    args[base] = xy.x;
    args[base + 1u] = xy.y;
    args[base + 2u] = 1u;
    args[base + 3u] = count;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
    if lid != 0u {
        return;
    }
    write_args(4u, min(state.edge_sources, params.edge_source_capacity));
    write_args(8u, min(state.crossings, params.crossing_capacity));
}
