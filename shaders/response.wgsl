// Contact response (Hermann et al. 2008, section 4): a penalty force per collision contact of the
// last detection, applied to its source vertex, and the opposite force spread over the hit
// triangle's three vertices by the barycentric coordinates of the hit. One invocation per stored
// contact (`args[3]` of them, dispatched indirectly from `args`, which `contact_args` wrote).
//
// Magnitude `k × depth − damping × (relative velocity along d)`, never below zero (a penalty
// pushes, never pulls), with `k` the pair's stiffness (`stiffness[source × n + target]`) and
// `depth` the re-projected penetration (Lehericey et al. 2015: `t × cos α` plus the
// thicknesses, so that `k × depth` is Hermann's force "proportional to the distance, times
// cos α"). Direction `d`: along the ray, from the source vertex towards the hit on the
// mid-surface, oriented to resolve the contact (Hermann's), or along the contact's normal
// (Lehericey's re-projection, `RESPONSE_ALONG_NORMAL`). Predictions give no force.
//
// Sums are deterministic: each contribution is rounded to fixed point (`params.scale` units per
// unit of force) and added with integer atomics, so the order of the adds does not matter. The
// source gets `f`; the target vertices get `round(-f × u)`, `round(-f × v)` and the rest, so that
// every contact's contributions sum to exactly zero. Each vertex's fourth slot adds the largest
// component of each contribution: while it stays within FORCE_LOAD_LIMIT no axis sum can overflow;
// past it the contribution is counted in `state[0]` and the lowest such vertex kept in `state[2]`.
// CPU twin: `raycontact::internals::cpu::response`.
//!include shared/common.wgsl
//!include shared/contact.wgsl
//!include shared/vertices.wgsl

struct ResponseParams {
    damping: f32,
    inv_dt: f32,
    scale: f32,
    body_count: u32,
    flags: u32,
    vertex_count: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> params: ResponseParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> triangles: array<u32>;
@group(0) @binding(3) var<storage, read> vertices: array<f32>;
@group(0) @binding(4) var<storage, read> stiffness: array<f32>;
@group(0) @binding(5) var<storage, read> contacts: array<Contact>;
@group(0) @binding(6) var<storage, read> args: array<u32, 4>;
@group(0) @binding(7) var<storage, read_write> forces: array<atomic<i32>>;
@group(0) @binding(8) var<storage, read_write> state: array<atomic<u32>, 4>;

// Velocity of packed vertex v: (position - previous position) / dt.
fn velocity(v: u32) -> vec3<f32> {
    return (vertex_in(0u, v) - vertex_in(VERTEX_PREVIOUS, v)) * params.inv_dt;
}

// Fixed point of `x`, or none (`ok` false) outside the i32 range.
fn fixed(x: f32, ok: ptr<function, bool>) -> i32 {
    let s = round(x * params.scale);
    if !(abs(s) <= 2147483520.0) {
        *ok = false;
        return 0;
    }
    return i32(s);
}

// Adds one contribution to packed vertex `v`.
fn add(v: u32, f: vec3<i32>) {
    let load = u32(max(max(abs(f.x), abs(f.y)), abs(f.z)));
    let before = u32(atomicAdd(&forces[4u * v + 3u], i32(load)));
    if before > FORCE_LOAD_LIMIT - min(load, FORCE_LOAD_LIMIT) {
        atomicAdd(&state[0], 1u);
        atomicMin(&state[2], v);
    }
    atomicAdd(&forces[4u * v], f.x);
    atomicAdd(&forces[4u * v + 1u], f.y);
    atomicAdd(&forces[4u * v + 2u], f.z);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = linear_group(wid) * WG_SIZE + lid;
    if i >= args[3] {
        return;
    }
    let c = contacts[i];
    if (c.flags & CONTACT_COLLISION) == 0u {
        return;
    }
    let sb = bodies[c.source_body];
    let tb = bodies[c.target_body];
    let vs = sb.vertex_offset + c.source_vertex;
    let g = tb.tri_offset + c.target_triangle;
    let t = vec3<u32>(triangles[3u * g], triangles[3u * g + 1u], triangles[3u * g + 2u]);
    let w = vec3<f32>(1.0 - c.u - c.v, c.u, c.v);
    var d = c.normal;
    if (params.flags & RESPONSE_ALONG_NORMAL) == 0u {
        let ray = (c.target_point - tb.half_thickness * c.normal) - (c.source_point + sb.half_thickness * c.normal);
        let len = length(ray);
        if len > 0.0 {
            d = ray / len;
            if dot(d, c.normal) < 0.0 {
                d = -d;
            }
        }
    }
    let vt = velocity(t.x) * w.x + velocity(t.y) * w.y + velocity(t.z) * w.z;
    let closing = dot(velocity(vs) - vt, d);
    let k = stiffness[c.source_body * params.body_count + c.target_body];
    let magnitude = max(k * c.depth - params.damping * closing, 0.0);
    let f = d * magnitude;
    var ok = true;
    let fs = vec3<i32>(fixed(f.x, &ok), fixed(f.y, &ok), fixed(f.z, &ok));
    if !ok {
        atomicAdd(&state[0], 1u);
        atomicMin(&state[2], vs);
        return;
    }
    let f1 = vec3<i32>(round(-vec3<f32>(fs) * w.y));
    let f2 = vec3<i32>(round(-vec3<f32>(fs) * w.z));
    let f0 = -fs - f1 - f2;
    add(vs, fs);
    add(t.x, f0);
    add(t.y, f1);
    add(t.z, f2);
    atomicAdd(&state[1], 1u);
}
