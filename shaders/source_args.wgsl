// After `ray_sources`: the indirect dispatch of the narrow phase, one invocation per listed
// source vertex (the count clamped to the capacity) in workgroups of WG_SIZE (x, y spilling
// past MAX_GROUPS_X, z = 1), followed by that number. One invocation.
// CPU twin: `raycontact::internals::cpu::source_args`.
//!include shared/common.wgsl
//!include shared/contact.wgsl

@group(0) @binding(0) var<uniform> params: DetectParams;
@group(0) @binding(1) var<storage, read> pairs: PairListRead;
@group(0) @binding(2) var<storage, read_write> args: array<u32, 4>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
    if lid != 0u {
        return;
    }
    let listed = min(pairs.state.sources, params.source_capacity);
    let xy = dispatch_xy((listed + WG_SIZE - 1u) / WG_SIZE);
    args[0] = xy.x;
    args[1] = xy.y;
    args[2] = 1u;
    args[3] = listed;
}
