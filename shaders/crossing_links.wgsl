// The contour's links: each crossing (edge e of body S through triangle T of body O) is an end
// of the intersection segment of T with each triangle ts of S that uses e (t0, then t1: its two
// half-incidences 2 slot + side). The two ends of one segment (one triangle pair of one pair of
// bodies) are linked to each other through a hash table keyed by (pair, the two triangles):
// the first to arrive stores its half-incidence, the second links both (links[side], plus
// one). A third end of one segment (only in degenerate configurations) finds both linked and
// stays an end of the contour. Also marks each crossing's edge as crossed for the flood fill.
// One invocation per stored crossing (args[8..12) of `intersect_args`).
// CPU twin: `raycontact::internals::cpu::crossing_links`.
//!include shared/common.wgsl
//!include shared/intersect.wgsl

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> edges: array<Edge>;
@group(0) @binding(3) var<storage, read> state: IntersectStateRead;
@group(0) @binding(4) var<storage, read> crossings: array<Crossing>;
@group(0) @binding(5) var<storage, read_write> contour: array<ContourNode>;
@group(0) @binding(6) var<storage, read_write> table: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> marks: array<atomic<u32>>;

// The key of half-incidence h: (undirected pair, lower packed triangle, higher packed triangle,
// 1), or w = 0 when the edge has no triangle on that side.
fn half_key(h: u32) -> vec4<u32> {
    let c = crossings[h / 2u];
    let sb = bodies[c.source_body];
    let ts = edge_side(edges[sb.edge_offset + c.edge], h & 1u);
    if ts == NONE {
        return vec4<u32>(0u);
    }
    let gs = sb.tri_offset + ts;
    let gt = bodies[c.target_body].tri_offset + c.triangle;
    return vec4<u32>(c.pair / 2u, min(gs, gt), max(gs, gt), 1u);
}

fn hash(k: vec4<u32>) -> u32 {
    var h = (k.x * 0x9e3779b1u) ^ k.y;
    h = ((h ^ (h >> 16u)) * 0x85ebca6bu) ^ k.z;
    h = (h ^ (h >> 13u)) * 0xc2b2ae35u;
    return h ^ (h >> 16u);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = linear_group(wid) * WG_SIZE + lid;
    if i >= min(state.crossings, params.crossing_capacity) {
        return;
    }
    let c = crossings[i];
    atomicOr(&marks[bodies[c.source_body].edge_offset + c.edge], 1u);
    for (var side = 0u; side < 2u; side += 1u) {
        let h = 2u * i + side;
        let key = half_key(h);
        if key.w == 0u {
            continue;
        }
        var s = hash(key) & params.table_mask;
        var probes = 0u;
        loop {
            if probes > params.table_mask {
                break;
            }
            let r = atomicCompareExchangeWeak(&table[s], 0u, h + 1u);
            if r.exchanged {
                break;
            }
            if r.old_value == 0u {
                continue;
            }
            let h2 = r.old_value - 1u;
            if all(half_key(h2) == key) {
                let l = atomicCompareExchangeWeak(&contour[h2 / 2u].links[h2 & 1u], 0u, h + 1u);
                if l.exchanged {
                    atomicStore(&contour[i].links[side], h2 + 1u);
                    break;
                }
                if l.old_value == 0u {
                    continue;
                }
            }
            s = (s + 1u) & params.table_mask;
            probes += 1u;
        }
    }
}
