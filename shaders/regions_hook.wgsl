// The flood fill of global intersection analysis (Baraff, Witkin and Kass 2003): the regions of
// every surface are the connected components of its vertex graph without the edges that another
// surface (or the surface itself) crosses (marked by `crossing_links`). The same lock-free
// union-find as the contour's over the packed vertices, all bodies at once (no edge joins two
// bodies), so that every region's root is its lowest packed vertex. One invocation per packed
// edge. CPU twin: `raycontact::internals::cpu::regions_hook`.
//!include shared/common.wgsl
//!include shared/intersect.wgsl

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> edges: array<Edge>;
@group(0) @binding(2) var<storage, read> marks: array<u32>;
@group(0) @binding(3) var<storage, read_write> regions: array<Region>;

fn find(x0: u32) -> u32 {
    var x = x0;
    loop {
        let s = atomicLoad(&regions[x].parent);
        if s == 0u {
            break;
        }
        let sp = atomicLoad(&regions[~s].parent);
        if sp == 0u {
            x = ~s;
            break;
        }
        // Path halving: x skips to its grandparent (an ancestor, whatever runs beside it).
        atomicStore(&regions[x].parent, sp);
        x = ~sp;
    }
    return x;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = linear_group(wid) * WG_SIZE + lid;
    if i >= params.edge_count || marks[i] != 0u {
        return;
    }
    let e = edges[i];
    loop {
        let ru = find(e.a);
        let rv = find(e.b);
        if ru == rv {
            return;
        }
        let r = atomicCompareExchangeWeak(&regions[max(ru, rv)].parent, 0u, ~min(ru, rv));
        if r.exchanged {
            return;
        }
    }
}
