// Any hit of a batch of rays against a list of bodies (`targets`), for occlusion: the first
// triangle that the ray hits within [tmin, tmax] in the order of a stackless depth-first walk of
// each body's BVH (`next_leaf` in shared/bvh.wgsl), the bodies in list order; the walk stops
// there. The ray count is the length of the `rays` binding.
// CPU twin: `raycontact::internals::cpu::raycast_anyhit`.
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

// Walks target k's BVH until a triangle is hit: `res` with the hit (body = k) and the nodes and
// triangles tested added.
fn any_hit(ray: Ray, axes: vec3<u32>, inv: vec3<f32>, k: u32, res: RayHit) -> RayHit {
    var out = res;
    if target_leaves(k) == 0u {
        return out;
    }
    let body = targets[k].body;
    var node = 0u;
    loop {
        var tested = 0u;
        let tri = next_leaf(ray, inv, body, &node, &tested);
        out.nodes_visited += tested;
        if tri == NONE {
            break;
        }
        let h = leaf_hit(ray, axes, body, tri, NONE, ray.tmax);
        out.triangles_tested += 1u;
        if h.w > 0.0 {
            out.t = h.x;
            out.triangle = tri;
            out.u = h.y;
            out.v = h.z;
            out.body = k;
            return out;
        }
    }
    return out;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = linear_group(wid) * WG_SIZE + lid;
    if r >= arrayLength(&rays) {
        return;
    }
    let ray = rays[r];
    let axes = ray_axes(ray.dir);
    let inv = safe_inverse(ray.dir);
    var res = RayHit(infinity(), NONE, 0.0, 0.0, 0u, 0u, 0u, NONE);
    let count = arrayLength(&targets);
    for (var k = 0u; k < count && res.triangle == NONE; k++) {
        res = any_hit(ray, axes, inv, k, res);
    }
    hits[r] = res;
}
