// Ray-traced narrow phase (Hermann et al. 2008), one invocation per (directed pair, source
// vertex), dispatched indirectly from `pair_tiles`. From source vertex v of body A (skipped when
// outside the overlap of the two bodies' boxes, or without a normal) a ray along the inward
// normal -n finds the closest hit on B at t2; the hit is rejected when B's triangle faces the
// same way as n (dot >= 0: the ray enters B instead of leaving it); the same ray against A,
// ignoring the triangles around v, gives t3; the contact is kept when A is not hit or t2 <= t3.
// Contacts are appended through an atomic counter; past the capacity they are counted only.
// CPU twin: `raycontact::cpu::narrow_phase`.
//!include shared/common.wgsl
//!include shared/contact.wgsl
//!include shared/ray.wgsl
//!include shared/bvh.wgsl

@group(0) @binding(0) var<uniform> params: DetectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read> positions: array<f32>;
@group(0) @binding(4) var<storage, read> normals: array<f32>;
@group(0) @binding(5) var<storage, read> triangles: array<u32>;
@group(0) @binding(6) var<storage, read> nodes: array<Node>;
@group(0) @binding(7) var<storage, read> pairs: array<BodyPair>;
@group(0) @binding(8) var<storage, read> tile_offsets: array<u32>;
@group(0) @binding(9) var<storage, read_write> state: DetectState;
@group(0) @binding(10) var<storage, read_write> contacts: array<Contact>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let w = linear_group(wid);
    let d = 2u * min(atomicLoad(&state.pair_count), params.pair_capacity);
    if d == 0u || w >= tile_offsets[d] {
        return;
    }
    // The directed pair k with tile_offsets[k] <= w < tile_offsets[k + 1].
    var lo = 0u;
    var hi = d;
    while hi - lo > 1u {
        let mid = (lo + hi) / 2u;
        if tile_offsets[mid] <= w {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let k = lo;
    let pair = pairs[k / 2u];
    var a = pair.a;
    var b = pair.b;
    if (k & 1u) == 1u {
        a = pair.b;
        b = pair.a;
    }
    let body_a = bodies[a];
    let local = (w - tile_offsets[k]) * WG_SIZE + lid;
    if local >= body_a.vertex_count {
        return;
    }
    let v = body_a.vertex_offset + local;
    let p = vertex_position(v);
    let sa = body_state[a];
    let sb = body_state[b];
    let lo_box = max(body_min(sa), body_min(sb));
    let hi_box = min(body_max(sa), body_max(sb));
    if any(p < lo_box) || any(p > hi_box) {
        return;
    }
    let n = vec3<f32>(normals[3u * v], normals[3u * v + 1u], normals[3u * v + 2u]);
    if all(n == vec3<f32>(0.0)) {
        return;
    }
    let dir = -n;
    let body_b = bodies[b];
    let hit_b = closest_hit(Ray(p, 0.0, dir, bitcast<f32>(0x7f800000u)), body_b, sb.leaf_count, NONE);
    if hit_b.triangle == NONE {
        return;
    }
    let g = body_b.tri_offset + hit_b.triangle;
    let ta = vertex_position(triangles[3u * g]);
    let tb = vertex_position(triangles[3u * g + 1u]);
    let tc = vertex_position(triangles[3u * g + 2u]);
    let face = cross(tb - ta, tc - ta);
    if dot(face, n) >= 0.0 {
        return;
    }
    // Is A itself hit before B (the ray leaves A first)? Only t < t2 matters.
    let hit_a = closest_hit(Ray(p, 0.0, dir, hit_b.t), body_a, sa.leaf_count, v);
    if hit_a.triangle != NONE && hit_a.t < hit_b.t {
        return;
    }
    let slot = atomicAdd(&state.contact_count, 1u);
    if slot >= params.contact_capacity {
        return;
    }
    let q = ta * (1.0 - hit_b.u - hit_b.v) + tb * hit_b.u + tc * hit_b.v;
    contacts[slot] = Contact(
        a, local, b, hit_b.triangle,
        p, hit_b.u,
        q, hit_b.v,
        dir, hit_b.t,
        hit_b.t, dot(dir, normalize(face)),
        CONTACT_COLLISION | CONTACT_INWARD_RAY, 0u,
    );
}
