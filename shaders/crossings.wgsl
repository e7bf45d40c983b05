// Edge-triangle crossings: one invocation per (directed pair k, source body a, target body b,
// edge) listed by `edge_sources`, dispatched indirectly (args[4..8) of `intersect_args`). The
// edge a -> b (its lower vertex to its higher) is traced as the segment p + t (q - p), t in
// [0, 1], through b's BVH, every box it touches (the stackless depth-first walk over the escape
// links), and tested against each triangle with the watertight ray-triangle test: EVERY crossing
// is reported, not only the nearest. A segment through a shared edge or vertex of b hits every
// incident triangle at the same t (computed from that edge or vertex alone): the lowest triangle
// index keeps it, as in the ray queries, so it is reported once. A cloth's self pair skips the
// triangles that use either end of the edge (their one-rings). An edge (all but) parallel to a
// triangle's plane does not cross it (CROSSING_PARALLEL_SIN2): in a flat region of a cloth its
// edges lie in the plane of many triangles of its own.
//
// The crossings of one edge are kept sorted by t in registers, MAX_EDGE_HITS at a time (an edge
// with more is traced again from the last t, and counted in `multi_pass`), so that each one
// knows its neighbours along the edge: FIRST / LAST (no other crossing towards the edge's first /
// second vertex), FORWARD (dot(q - p, n) > 0 for the triangle's normal n: p is behind it), and
// inside_t (the other end of the part of the edge behind the triangle: the next crossing that
// way, or the vertex, 0 or 1). Crossings go to an append buffer through an atomic counter; past
// the capacity they are counted only. CPU twin: `raycontact::internals::cpu::crossings`.
//!include shared/common.wgsl
//!include shared/ray.wgsl
//!include shared/bvh.wgsl
//!include shared/intersect.wgsl

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> vertices: array<f32>;
@group(0) @binding(3) var<storage, read> triangles: array<u32>;
@group(0) @binding(4) var<storage, read> nodes: array<Node>;
@group(0) @binding(5) var<storage, read> edges: array<Edge>;
@group(0) @binding(6) var<storage, read> list: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> state: IntersectState;
@group(0) @binding(8) var<storage, read_write> crossings: array<Crossing>;

const FORWARD_BIT: u32 = 0x80000000u;

// One pass's crossings, sorted by t: t, triangle | FORWARD_BIT, u, v.
var<private> hit_t: array<f32, MAX_EDGE_HITS>;
var<private> hit_tri: array<u32, MAX_EDGE_HITS>;
var<private> hit_u: array<f32, MAX_EDGE_HITS>;
var<private> hit_v: array<f32, MAX_EDGE_HITS>;
var<private> hit_count: u32;
// A crossing beyond the pass's MAX_EDGE_HITS was seen: another pass follows.
var<private> hit_more: bool;

// Keeps a crossing among the pass's smallest distinct t (equal t: the lower triangle).
fn keep(t: f32, tri: u32, u: f32, v: f32) {
    for (var j = 0u; j < hit_count; j += 1u) {
        if hit_t[j] == t {
            if (tri & ~FORWARD_BIT) < (hit_tri[j] & ~FORWARD_BIT) {
                hit_tri[j] = tri;
                hit_u[j] = u;
                hit_v[j] = v;
            }
            return;
        }
    }
    var n = hit_count;
    if n == MAX_EDGE_HITS {
        hit_more = true;
        if t > hit_t[n - 1u] {
            return;
        }
        n -= 1u;
    } else {
        hit_count += 1u;
    }
    var j = n;
    while j > 0u && hit_t[j - 1u] > t {
        hit_t[j] = hit_t[j - 1u];
        hit_tri[j] = hit_tri[j - 1u];
        hit_u[j] = hit_u[j - 1u];
        hit_v[j] = hit_v[j - 1u];
        j -= 1u;
    }
    hit_t[j] = t;
    hit_tri[j] = tri;
    hit_u[j] = u;
    hit_v[j] = v;
}

// A crossing held back until the next one along the edge is known.
struct Pending {
    t: f32,
    tri: u32,
    u: f32,
    v: f32,
    // The t of the crossing before it, or -1 when it is the first.
    before: f32,
}

fn emit(c: Pending, after: f32, k: u32, a: u32, b: u32, edge: u32, p: vec3<f32>, d: vec3<f32>) {
    let forward = (c.tri & FORWARD_BIT) != 0u;
    var flags = 0u;
    var inside = 0.0;
    if c.before < 0.0 {
        flags |= CROSSING_FIRST;
    } else {
        inside = c.before;
    }
    if after > 1.0 {
        flags |= CROSSING_LAST;
    }
    if forward {
        flags |= CROSSING_FORWARD;
    } else {
        inside = min(after, 1.0);
    }
    let slot = atomicAdd(&state.crossings, 1u);
    if slot < params.crossing_capacity {
        crossings[slot] = Crossing(a, b, edge, c.tri & ~FORWARD_BIT, p + c.t * d, c.t, c.u, c.v, inside,
            flags, k, 0u, 0u, 0u);
    }
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = linear_group(wid) * WG_SIZE + lid;
    if i >= min(atomicLoad(&state.edge_sources), params.edge_source_capacity) {
        return;
    }
    let entry = list[i];
    let k = entry.x;
    let a = entry.y;
    let b = entry.z;
    let edge = edges[bodies[a].edge_offset + entry.w];
    let body_b = bodies[b];
    let p = vertex_position(edge.a);
    let d = vertex_position(edge.b) - p;
    let axes = ray_axes(d);
    let inv = safe_inverse(d);
    var ignore_a = NONE;
    var ignore_b = NONE;
    if a == b {
        ignore_a = edge.a;
        ignore_b = edge.b;
    }
    var pending = Pending(0.0, 0u, 0.0, 0.0, -1.0);
    var have_pending = false;
    var after = -1.0;
    var passes = 0u;
    loop {
        hit_count = 0u;
        hit_more = false;
        var node = 0u;
        var tested = 0u;
        loop {
            let tri = next_leaf(Ray(p, 0.0, d, 1.0), inv, body_b, &node, &tested);
            if tri == NONE {
                break;
            }
            let g = body_b.tri_offset + tri;
            let ia = triangles[3u * g];
            let ib = triangles[3u * g + 1u];
            let ic = triangles[3u * g + 2u];
            if ia == ignore_a || ib == ignore_a || ic == ignore_a || ia == ignore_b || ib == ignore_b
                || ic == ignore_b {
                continue;
            }
            let va = vertex_position(ia);
            let vb = vertex_position(ib);
            let vc = vertex_position(ic);
            let n = cross(vb - va, vc - va);
            let dn = dot(d, n);
            if dn * dn <= CROSSING_PARALLEL_SIN2 * dot(d, d) * dot(n, n) {
                continue;
            }
            let h = intersect_triangle(p, d, axes, 0.0, 1.0, va, vb, vc);
            if h.w > 0.0 && h.x > after {
                var tag = tri;
                if dn > 0.0 {
                    tag |= FORWARD_BIT;
                }
                keep(h.x, tag, h.y, h.z);
            }
        }
        passes += 1u;
        for (var j = 0u; j < hit_count; j += 1u) {
            if have_pending {
                emit(pending, hit_t[j], k, a, b, entry.w, p, d);
            }
            var before = -1.0;
            if have_pending {
                before = pending.t;
            }
            pending = Pending(hit_t[j], hit_tri[j], hit_u[j], hit_v[j], before);
            have_pending = true;
        }
        if !hit_more {
            break;
        }
        after = hit_t[hit_count - 1u];
    }
    if have_pending {
        emit(pending, 2.0, k, a, b, entry.w, p, d);
    }
    if passes > 1u {
        atomicAdd(&state.multi_pass, 1u);
    }
}
