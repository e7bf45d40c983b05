// The contour's loops as connected components of the crossings' links: a lock-free union-find
// (a root hooked under the lower root with a compare-and-swap, retried on a race; path halving
// on the way), so that every component's root is its lowest crossing slot whatever the order of
// the unions. One invocation per stored crossing, each uniting it with its linked neighbours of
// higher slot. CPU twin: `raycontact::internals::cpu::contour_hook`.
//!include shared/common.wgsl
//!include shared/intersect.wgsl

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> state: IntersectStateRead;
@group(0) @binding(2) var<storage, read_write> contour: array<ContourNode>;

fn find(x0: u32) -> u32 {
    var x = x0;
    loop {
        let s = atomicLoad(&contour[x].parent);
        if s == 0u {
            break;
        }
        let sp = atomicLoad(&contour[~s].parent);
        if sp == 0u {
            x = ~s;
            break;
        }
        // Path halving: x skips to its grandparent (an ancestor, whatever runs beside it).
        atomicStore(&contour[x].parent, sp);
        x = ~sp;
    }
    return x;
}

fn unite(u: u32, v: u32) {
    loop {
        let ru = find(u);
        let rv = find(v);
        if ru == rv {
            return;
        }
        let r = atomicCompareExchangeWeak(&contour[max(ru, rv)].parent, 0u, ~min(ru, rv));
        if r.exchanged {
            return;
        }
    }
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = linear_group(wid) * WG_SIZE + lid;
    if i >= min(state.crossings, params.crossing_capacity) {
        return;
    }
    for (var side = 0u; side < 2u; side += 1u) {
        let l = atomicLoad(&contour[i].links[side]);
        if l != 0u && (l - 1u) / 2u > i {
            unite(i, (l - 1u) / 2u);
        }
    }
}
