// Closest hit of a batch of rays against one body, through its stackless BVH: from the root,
// a node whose box the ray hits leads to its first child (or, for a leaf, its triangle is tested),
// any other to its escape link; NONE ends the walk. No stack, so no depth limit.
// Ties in t go to the lower triangle index. CPU twin: `raycontact::cpu::raycast`.
//!include shared/common.wgsl
//!include shared/ray.wgsl

// Mirrors `layout::RaycastParams`.
struct RaycastParams {
    body: u32,
    ray_count: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> query: RaycastParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read> positions: array<f32>;
@group(0) @binding(4) var<storage, read> triangles: array<u32>;
@group(0) @binding(5) var<storage, read> nodes: array<Node>;
@group(0) @binding(6) var<storage, read> rays: array<Ray>;
@group(0) @binding(7) var<storage, read_write> hits: array<RayHit>;

fn position(v: u32) -> vec3<f32> {
    return vec3<f32>(positions[3u * v], positions[3u * v + 1u], positions[3u * v + 2u]);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = linear_group(wid) * WG_SIZE + lid;
    if r >= query.ray_count {
        return;
    }
    let ray = rays[r];
    let body = bodies[query.body];
    let n = body_state[query.body].leaf_count;
    let axes = ray_axes(ray.dir);
    let inv = safe_inverse(ray.dir);
    var best = RayHit(bitcast<f32>(0x7f800000u), NONE, 0.0, 0.0, 0u, 0u, 0u, 0u);
    var tmax = ray.tmax;
    var node = 0u;
    if n == 0u {
        node = NONE;
    }
    while node != NONE {
        let nd = nodes[body.node_offset + node];
        best.nodes_visited += 1u;
        if hit_box(ray.origin, ray.dir, inv, ray.tmin, tmax, nd.min, nd.max) {
            if (nd.child & LEAF_BIT) != 0u {
                let tri = nd.child & ~LEAF_BIT;
                let g = body.tri_offset + tri;
                best.triangles_tested += 1u;
                let h = intersect_triangle(ray.origin, ray.dir, axes, ray.tmin, tmax,
                    position(triangles[3u * g]), position(triangles[3u * g + 1u]), position(triangles[3u * g + 2u]));
                if h.w != 0.0 && (h.x < best.t || (h.x == best.t && tri < best.triangle)) {
                    best.t = h.x;
                    best.triangle = tri;
                    best.u = h.y;
                    best.v = h.z;
                    tmax = h.x;
                }
                node = nd.escape;
            } else {
                node = nd.child;
            }
        } else {
            node = nd.escape;
        }
    }
    hits[r] = best;
}
