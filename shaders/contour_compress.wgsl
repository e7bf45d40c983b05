// After `contour_hook`: every crossing points at its loop's root, and each root gathers the
// least high word of its crossings' canonical keys (`crossing_key`: an end of an open polyline
// before any crossing of a closed loop, then the direction, the edge; atomicMax of the
// complement). One invocation per stored crossing. CPU twin:
// `raycontact::internals::cpu::contour_compress`.
//!include shared/common.wgsl
//!include shared/intersect.wgsl

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> state: IntersectStateRead;
@group(0) @binding(2) var<storage, read> crossings: array<Crossing>;
@group(0) @binding(3) var<storage, read_write> contour: array<ContourNode>;

fn find(x0: u32) -> u32 {
    var x = x0;
    var s = atomicLoad(&contour[x].parent);
    while s != 0u {
        x = ~s;
        s = atomicLoad(&contour[x].parent);
    }
    return x;
}

fn degree(i: u32) -> u32 {
    return select(0u, 1u, atomicLoad(&contour[i].links[0]) != 0u)
        + select(0u, 1u, atomicLoad(&contour[i].links[1]) != 0u);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = linear_group(wid) * WG_SIZE + lid;
    if i >= min(state.crossings, params.crossing_capacity) {
        return;
    }
    let root = find(i);
    if root != i {
        atomicStore(&contour[i].parent, ~root);
    }
    let key = crossing_key(crossings[i], degree(i));
    atomicMax(&contour[root].key_hi, ~key.x);
}
