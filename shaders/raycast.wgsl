// Closest hit of a batch of rays against one body, through its stackless BVH
// (`closest_hit` in shared/bvh.wgsl). CPU twin: `raycontact::internals::cpu::raycast`.
//!include shared/common.wgsl
//!include shared/ray.wgsl
//!include shared/bvh.wgsl

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
@group(0) @binding(3) var<storage, read> vertices: array<f32>;
@group(0) @binding(4) var<storage, read> triangles: array<u32>;
@group(0) @binding(5) var<storage, read> nodes: array<Node>;
@group(0) @binding(6) var<storage, read> rays: array<Ray>;
@group(0) @binding(7) var<storage, read_write> hits: array<RayHit>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = linear_group(wid) * WG_SIZE + lid;
    if r >= query.ray_count {
        return;
    }
    let body = bodies[query.body];
    hits[r] = closest_hit(rays[r], body, body_state[query.body].leaf_count, NONE);
}
