// The edges `crossings` traces: one invocation per (directed pair, edge of its source body),
// laid out by `edge_tiles` and dispatched indirectly from it. Edge e of body a goes on the list,
// as (directed pair k, a, b, e), when the target b has a BVH and the edge's box overlaps b's box
// (closed boxes: an edge that crosses b's surface lies partly inside them); every edge of a cloth
// goes on its self pair's list. Entries past the capacity are counted, not written.
// CPU twin: `raycontact::internals::cpu::edge_sources`.
//!include shared/common.wgsl
//!include shared/contact.wgsl
//!include shared/directed_pair.wgsl
//!include shared/intersect.wgsl

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read> vertices: array<f32>;
@group(0) @binding(4) var<storage, read> edges: array<Edge>;
@group(0) @binding(5) var<storage, read> pairs: PairListRead;
@group(0) @binding(6) var<storage, read> tile_offsets: array<u32>;
@group(0) @binding(7) var<storage, read_write> state: IntersectState;
@group(0) @binding(8) var<storage, read_write> list: array<vec4<u32>>;

fn position(v: u32) -> vec3<f32> {
    return vec3<f32>(vertices[3u * v], vertices[3u * v + 1u], vertices[3u * v + 2u]);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let w = linear_group(wid);
    let d = 2u * atomicLoad(&state.pairs);
    if d == 0u || w >= tile_offsets[d] {
        return;
    }
    let dp = directed_pair(w, d);
    let k = dp.k;
    let a = dp.a;
    let b = dp.b;
    let body_a = bodies[a];
    let local = dp.group * WG_SIZE + lid;
    if local >= body_a.edge_count {
        return;
    }
    let sb = body_state[b];
    if sb.leaf_count == 0u {
        return;
    }
    if a != b {
        let e = edges[body_a.edge_offset + local];
        let p = position(e.a);
        let q = position(e.b);
        if any(max(p, q) < body_min(sb)) || any(min(p, q) > body_max(sb)) {
            return;
        }
    }
    let slot = atomicAdd(&state.edge_sources, 1u);
    if slot < params.edge_source_capacity {
        list[slot] = vec4<u32>(k, a, b, local);
    }
}
