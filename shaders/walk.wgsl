// Iterative ray casts against one body: each ray walks the triangle adjacency from its start
// triangle (`walk_ray` in shared/walk.wgsl); a ray whose walk did not hit is cast through the
// BVH (`closest_hit` in shared/bvh.wgsl) when the fallback is WALK_FALLBACK_BVH. Counts the
// outcomes per workgroup, then once per workgroup into `output.counts`; the hits follow the
// counts in the same buffer (`layout::WALK_HITS_OFFSET`).
// CPU twin: `raycontact::internals::cpu::walk`.
//!include shared/common.wgsl
//!include shared/contact.wgsl
//!include shared/ray.wgsl
//!include shared/bvh.wgsl
//!include shared/walk.wgsl

// Mirrors `layout::WalkParams`.
struct WalkParams {
    body: u32,
    ray_count: u32,
    max_steps: u32,
    fallback: u32,
    tri_count: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

// The walk's output: the counters, then one hit per ray.
struct WalkOutput {
    counts: WalkCounts,
    hits: array<WalkHit>,
}

@group(0) @binding(0) var<uniform> query: WalkParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read> vertices: array<f32>;
@group(0) @binding(4) var<storage, read> triangles: array<u32>;
@group(0) @binding(5) var<storage, read> nodes: array<Node>;
@group(0) @binding(6) var<storage, read> rays: array<Ray>;
@group(0) @binding(7) var<storage, read> starts: array<u32>;
@group(0) @binding(8) var<storage, read_write> output: WalkOutput;

// Packed triangles: the size of a region of the triangle buffer (shared/walk.wgsl).
fn triangle_count() -> u32 {
    return query.tri_count;
}

// Outcome counts of the workgroup, then fallback casts and fallback hits.
var<workgroup> wg_counts: array<atomic<u32>, 10>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = linear_group(wid) * WG_SIZE + lid;
    if r < query.ray_count {
        let body = bodies[query.body];
        let ray = rays[r];
        var h = walk_ray(ray, body, starts[r], query.max_steps);
        atomicAdd(&wg_counts[h.outcome], 1u);
        if h.outcome != WALK_HIT && query.fallback == WALK_FALLBACK_BVH {
            let b = closest_hit(ray, body, body_state[query.body].leaf_count, NONE, NO_FAN);
            h.t = b.t;
            h.triangle = b.triangle;
            h.u = b.u;
            h.v = b.v;
            h.bvh = 1u;
            atomicAdd(&wg_counts[8], 1u);
            if b.triangle != NONE {
                atomicAdd(&wg_counts[9], 1u);
            }
        }
        output.hits[r] = h;
    }
    workgroupBarrier();
    if lid < 10u {
        let n = atomicLoad(&wg_counts[lid]);
        if n != 0u {
            if lid < 8u {
                atomicAdd(&output.counts.outcomes[lid], n);
            } else if lid == 8u {
                atomicAdd(&output.counts.fallback_casts, n);
            } else {
                atomicAdd(&output.counts.fallback_hits, n);
            }
        }
    }
}
