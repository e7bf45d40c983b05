// All hits of a batch of rays against a list of bodies (`targets`), up to `max_hits` per ray:
// every body's BVH walked stackless over the whole segment [tmin, tmax] (`next_leaf` in
// shared/bvh.wgsl), every triangle hit counted, and the first `max_hits` hits in the order
// (t, body, triangle) kept sorted in the ray's slots of `hits` (insertion into the slots, which
// only this invocation touches). The ray count is the length of the `rays` binding and
// `max_hits` that of `hits` divided by it. Per ray its counts; per workgroup the totals, added
// once into the head of `counts` (zeroed by the host before the dispatch).
// CPU twin: `raycontact::internals::cpu::raycast_all`.
//!include shared/common.wgsl
//!include shared/ray.wgsl
//!include shared/bvh.wgsl
//!include shared/targets.wgsl

// Mirrors `layout::RayIntersection`.
struct RayIntersection {
    t: f32,
    triangle: u32,
    u: f32,
    v: f32,
    body: u32,
}

// Mirrors `layout::RayHitCount`.
struct RayHitCount {
    found: u32,
    stored: u32,
    nodes_visited: u32,
    triangles_tested: u32,
}

// Mirrors `layout::RayHitTotals`.
struct RayHitTotals {
    found: atomic<u32>,
    stored: atomic<u32>,
    rays_hit: atomic<u32>,
    rays_overflowed: atomic<u32>,
}

// The counts buffer: the totals, then one count per ray (`layout::RAY_COUNTS_OFFSET`).
struct RayHitCounts {
    totals: RayHitTotals,
    rays: array<RayHitCount>,
}

@group(0) @binding(0) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(1) var<storage, read> vertices: array<f32>;
@group(0) @binding(2) var<storage, read> triangles: array<u32>;
@group(0) @binding(3) var<storage, read> nodes: array<Node>;
@group(0) @binding(4) var<storage, read> targets: array<QueryTarget>;
@group(0) @binding(5) var<storage, read> rays: array<Ray>;
@group(0) @binding(6) var<storage, read_write> counts: RayHitCounts;
@group(0) @binding(7) var<storage, read_write> hits: array<RayIntersection>;

// The workgroup's totals: found, stored, rays hit, rays overflowed.
var<workgroup> wg_totals: array<atomic<u32>, 4>;

// Whether hit a comes before hit b: by t, then body, then triangle (`RayIntersection::order`).
fn before(a: RayIntersection, b: RayIntersection) -> bool {
    if a.t != b.t {
        return a.t < b.t;
    }
    if a.body != b.body {
        return a.body < b.body;
    }
    return a.triangle < b.triangle;
}

// Counts hit `h` in `c` and, when it is among the first `cap` in order, inserts it into the
// sorted slots hits[base .. base + cap) (dropping the last one when they are full).
fn add_hit(c: RayHitCount, base: u32, cap: u32, h: RayIntersection) -> RayHitCount {
    var out = c;
    out.found += 1u;
    var i = out.stored;
    if i == cap {
        if !before(h, hits[base + cap - 1u]) {
            return out;
        }
        i = cap - 1u;
    } else {
        out.stored += 1u;
    }
    while i > 0u && before(h, hits[base + i - 1u]) {
        hits[base + i] = hits[base + i - 1u];
        i -= 1u;
    }
    hits[base + i] = h;
    return out;
}

// Walks target k's BVH over the whole segment, adding every hit.
fn all_hits(ray: Ray, axes: vec3<u32>, inv: vec3<f32>, k: u32, base: u32, cap: u32, c: RayHitCount) -> RayHitCount {
    var out = c;
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
            out = add_hit(out, base, cap, RayIntersection(h.x, tri, h.y, h.z, k));
        }
    }
    return out;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = linear_group(wid) * WG_SIZE + lid;
    let ray_count = arrayLength(&rays);
    if r < ray_count {
        let cap = arrayLength(&hits) / ray_count;
        let ray = rays[r];
        let axes = ray_axes(ray.dir);
        let inv = safe_inverse(ray.dir);
        var c = RayHitCount(0u, 0u, 0u, 0u);
        let count = arrayLength(&targets);
        for (var k = 0u; k < count; k++) {
            c = all_hits(ray, axes, inv, k, r * cap, cap, c);
        }
        counts.rays[r] = c;
        if c.found != 0u {
            atomicAdd(&wg_totals[0], c.found);
            atomicAdd(&wg_totals[1], c.stored);
            atomicAdd(&wg_totals[2], 1u);
            if c.found > c.stored {
                atomicAdd(&wg_totals[3], 1u);
            }
        }
    }
    workgroupBarrier();
    if lid < 4u {
        let n = atomicLoad(&wg_totals[lid]);
        if n != 0u {
            if lid == 0u {
                atomicAdd(&counts.totals.found, n);
            } else if lid == 1u {
                atomicAdd(&counts.totals.stored, n);
            } else if lid == 2u {
                atomicAdd(&counts.totals.rays_hit, n);
            } else {
                atomicAdd(&counts.totals.rays_overflowed, n);
            }
        }
    }
}
