// After the narrow phase: the indirect dispatch arguments of a consumer that runs one
// invocation per contact in workgroups of WG_SIZE (x, y spilling past MAX_GROUPS_X, z = 1),
// followed by the number of contacts actually stored (the count clamped to the capacity), so
// that a GPU solver needs no readback; that number also goes to the detection state's
// `stored[params.side]`, where the next iterative pass reads it. One invocation.
// CPU twin: `raycontact::internals::cpu::contact_args`.
//!include shared/common.wgsl
//!include shared/contact.wgsl

@group(0) @binding(0) var<uniform> params: DetectParams;
@group(0) @binding(1) var<storage, read_write> pairs: PairList;
@group(0) @binding(2) var<storage, read_write> args: array<u32, 4>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
    if lid != 0u {
        return;
    }
    let stored = min(atomicLoad(&pairs.state.contact_count), params.contact_capacity);
    let groups = (stored + WG_SIZE - 1u) / WG_SIZE;
    let xy = dispatch_xy(groups);
    args[0] = xy.x;
    args[1] = xy.y;
    args[2] = 1u;
    args[3] = stored;
    pairs.state.stored[params.side & 1u] = stored;
}
