// Closest hit of a batch of rays against a list of bodies (`targets`): per body, through its
// BVH (`closest_hit` in shared/bvh.wgsl), searching each body only up to the nearest hit so far.
// Ties in t go to the earlier body of the list, then to the lower triangle index. The ray count
// is the length of the `rays` binding. CPU twin: `raycontact::internals::cpu::raycast`.
//!include shared/common.wgsl
//!include shared/ray.wgsl
//!include shared/bvh.wgsl
//!include shared/targets.wgsl

@group(0) @binding(0) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(1) var<storage, read> vertices: array<f32>;
@group(0) @binding(2) var<storage, read> triangles: array<u32>;
@group(0) @binding(3) var<storage, read> nodes: array<Node>;
@group(0) @binding(4) var<storage, read> targets: array<QueryTarget>;
@group(0) @binding(5) var<storage, read> rays: array<Ray>;
@group(0) @binding(6) var<storage, read_write> hits: array<RayHit>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = linear_group(wid) * WG_SIZE + lid;
    if r >= arrayLength(&rays) {
        return;
    }
    var ray = rays[r];
    var best = RayHit(infinity(), NONE, 0.0, 0.0, 0u, 0u, 0u, NONE);
    let count = arrayLength(&targets);
    for (var k = 0u; k < count; k++) {
        let h = closest_hit(ray, targets[k].body, target_leaves(k), NONE, NO_FAN);
        best.nodes_visited += h.nodes_visited;
        best.triangles_tested += h.triangles_tested;
        best.fallback |= h.fallback;
        if h.triangle != NONE && h.t < best.t {
            best.t = h.t;
            best.triangle = h.triangle;
            best.u = h.u;
            best.v = h.v;
            best.body = k;
            ray.tmax = h.t;
        }
    }
    hits[r] = best;
}
