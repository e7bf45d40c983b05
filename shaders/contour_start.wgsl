// After `contour_compress`: each loop's root gathers the least low word of the canonical keys
// of its crossings whose high word is the least, so that the crossing with the least key, the
// loop's start, is known (the same crossing on every device and run). One invocation per stored
// crossing. CPU twin: `raycontact::internals::cpu::contour_start`.
//!include shared/common.wgsl
//!include shared/intersect.wgsl

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> state: IntersectStateRead;
@group(0) @binding(2) var<storage, read> crossings: array<Crossing>;
@group(0) @binding(3) var<storage, read_write> contour: array<ContourNode>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = linear_group(wid) * WG_SIZE + lid;
    if i >= min(state.crossings, params.crossing_capacity) {
        return;
    }
    let root = decode_parent(atomicLoad(&contour[i].parent), i);
    let degree = select(0u, 1u, atomicLoad(&contour[i].links[0]) != 0u)
        + select(0u, 1u, atomicLoad(&contour[i].links[1]) != 0u);
    let key = crossing_key(crossings[i], degree);
    if key.x == ~atomicLoad(&contour[root].key_hi) {
        atomicMax(&contour[root].key_lo, ~key.y);
    }
}
