// Ray-traced narrow phase for volumetric bodies (Hermann et al. 2008) and cloth (Lehericey et
// al. 2015), one invocation per (directed pair, source vertex), dispatched indirectly from
// `pair_tiles`. A is the source body, B the target; n the unit normal of source vertex v at p;
// e_A, e_B the half-thicknesses (0 for a volumetric body); d the pair's prediction distance and
// r = max(d, e_A + e_B) its reach. Each hit is re-projected onto the hit triangle's unit normal
// m (length L = t |dir . m|) before it is classified (Lehericey 2015, section 3.3):
//
// - volumetric -> volumetric: the inward ray (-n) finds B's closest triangle; it must face away
//   from n (the ray leaves B) and A must not be hit first -> collision. With d > 0 the outward
//   ray (+n, up to r) finds a triangle of B facing n's way back (B's outside), not behind A,
//   with L < d -> prediction. A self pair (A, A) (Hermann's section 3.3): the inward ray hits
//   A's inward surface twice in a row (ignoring v's triangles) -> collision with the first.
// - volumetric -> cloth: inward ray -> collision when A is not hit within twice the hit length
//   (the hit is at most half the exit distance); outward ray (up to r, not behind A) ->
//   collision when L < e_B, else prediction when L < d.
// - cloth -> volumetric: both rays, unbounded. When either hits the inside of B (the vertex is
//   inside B) the one with the shorter L is a collision and the other is dropped; otherwise
//   each ray that hits B's outside -> collision when L < e_A, else prediction when L < d.
// - cloth -> cloth (and a cloth against itself, ignoring the triangles around v): both rays up
//   to r -> collision when L < e_A + e_B, else prediction when L < d. Inversion (section 3.2):
//   when v is on the other side of the hit triangle than at the previous positions, the normal
//   is flipped and the contact is a collision, flagged inverted.
//
// A contact's normal is the direction that resolves it for the source vertex: towards the hit
// (across B) for a collision of an inward-facing hit and for an inversion, away from it for a
// contact with a surface in front of v. Its points are moved off cloth mid-surfaces by e:
// source = p - e_A normal, target = hit + e_B normal; depth = (target - source) . normal
// (negative for a prediction: the gap). Vertices outside B's box grown by r are skipped (not
// for volumetric -> cloth, whose inward ray may cross A to reach B). Contacts are appended
// through an atomic counter; past the capacity they are counted only.
// CPU twin: `raycontact::cpu::narrow_phase`.
//!include shared/common.wgsl
//!include shared/contact.wgsl
//!include shared/ray.wgsl
//!include shared/bvh.wgsl

@group(0) @binding(0) var<uniform> params: DetectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read> positions: array<f32>;
@group(0) @binding(4) var<storage, read> prev_positions: array<f32>;
@group(0) @binding(5) var<storage, read> normals: array<f32>;
@group(0) @binding(6) var<storage, read> triangles: array<u32>;
@group(0) @binding(7) var<storage, read> nodes: array<Node>;
@group(0) @binding(8) var<storage, read> pairs: array<BodyPair>;
@group(0) @binding(9) var<storage, read> tile_offsets: array<u32>;
@group(0) @binding(10) var<storage, read_write> state: DetectState;
@group(0) @binding(11) var<storage, read_write> contacts: array<Contact>;

// A ray's closest hit on a body with the hit triangle's normal: face = its unnormalised
// normal, m = the unit normal, cosine = dir . m, length = t |cosine| (the re-projected ray).
struct Probe {
    hit: RayHit,
    face: vec3<f32>,
    cosine: f32,
    length: f32,
}

fn probe(body: BodyGpu, leaf_count: u32, origin: vec3<f32>, dir: vec3<f32>, tmin: f32, tmax: f32,
         ignore_vertex: u32) -> Probe {
    let hit = closest_hit(Ray(origin, tmin, dir, tmax), body, leaf_count, ignore_vertex);
    var pr = Probe(hit, vec3<f32>(0.0), 0.0, 0.0);
    if hit.triangle != NONE {
        let g = body.tri_offset + hit.triangle;
        let ta = vertex_position(triangles[3u * g]);
        pr.face = cross(vertex_position(triangles[3u * g + 1u]) - ta, vertex_position(triangles[3u * g + 2u]) - ta);
        pr.cosine = dot(dir, normalize(pr.face));
        pr.length = hit.t * abs(pr.cosine);
    }
    return pr;
}

fn hits(pr: Probe) -> bool {
    return pr.hit.triangle != NONE;
}

// Whether `body` is hit along the ray before `t` (ignoring `v`'s triangles): the ray leaves (or
// re-enters) the source body first.
fn blocked(body: BodyGpu, leaf_count: u32, origin: vec3<f32>, dir: vec3<f32>, t: f32, v: u32) -> bool {
    let h = closest_hit(Ray(origin, 0.0, dir, t), body, leaf_count, v);
    return h.triangle != NONE && h.t < t;
}

fn prev_position(v: u32) -> vec3<f32> {
    return vec3<f32>(prev_positions[3u * v], prev_positions[3u * v + 1u], prev_positions[3u * v + 2u]);
}

// Whether packed vertex v is strictly on the other side of triangle `tri` of `body` than it
// was at the previous positions.
fn inverted(v: u32, body: BodyGpu, tri: u32) -> bool {
    let g = body.tri_offset + tri;
    let ia = triangles[3u * g];
    let ib = triangles[3u * g + 1u];
    let ic = triangles[3u * g + 2u];
    let a = vertex_position(ia);
    let now = dot(vertex_position(v) - a, cross(vertex_position(ib) - a, vertex_position(ic) - a));
    let pa = prev_position(ia);
    let before = dot(prev_position(v) - pa, cross(prev_position(ib) - pa, prev_position(ic) - pa));
    return (now < 0.0 && before > 0.0) || (now > 0.0 && before < 0.0);
}

// Appends the contact of probe `pr` along `dir` from source vertex `local` (at p) of body a on
// body b. `through`: the normal points towards the hit (else away from it).
fn emit(a: u32, local: u32, b: u32, p: vec3<f32>, dir: vec3<f32>, pr: Probe, through: bool, flags: u32,
        ea: f32, eb: f32) {
    let slot = atomicAdd(&state.contact_count, 1u);
    if slot >= params.contact_capacity {
        return;
    }
    let g = bodies[b].tri_offset + pr.hit.triangle;
    let ta = vertex_position(triangles[3u * g]);
    let tb = vertex_position(triangles[3u * g + 1u]);
    let tc = vertex_position(triangles[3u * g + 2u]);
    let m = normalize(pr.face);
    var toward = m;
    if pr.cosine < 0.0 {
        toward = -m;
    }
    var normal = -toward;
    var depth = ea + eb - pr.length;
    if through {
        normal = toward;
        depth = pr.length + ea + eb;
    }
    let q = ta * (1.0 - pr.hit.u - pr.hit.v) + tb * pr.hit.u + tc * pr.hit.v;
    contacts[slot] = Contact(
        a, local, b, pr.hit.triangle,
        p - ea * normal, pr.hit.u,
        q + eb * normal, pr.hit.v,
        normal, depth,
        pr.hit.t, abs(pr.cosine),
        flags, 0u,
    );
}

// Collision or prediction class of a hit in front of a surface, by its re-projected length:
// collision below `touch`, prediction below `predict`, 0 (rejected) otherwise.
fn class_of(length: f32, touch: f32, predict: f32) -> u32 {
    if length < touch {
        return CONTACT_COLLISION;
    }
    if length < predict {
        return CONTACT_PREDICTION;
    }
    return 0u;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let w = linear_group(wid);
    let d = 2u * min(atomicLoad(&state.pair_count), params.pair_capacity);
    if d == 0u || w >= tile_offsets[d] {
        return;
    }
    // The directed pair k with tile_offsets[k] <= w < tile_offsets[k + 1]: the last k with
    // tile_offsets[k] <= w, which skips directions without workgroups.
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
    let body_b = bodies[b];
    let cloth_a = (body_a.flags & BODY_CLOTH) != 0u;
    let cloth_b = (body_b.flags & BODY_CLOTH) != 0u;
    let ea = body_a.half_thickness;
    let eb = body_b.half_thickness;
    let predict = pair.prediction;
    let reach = max(predict, ea + eb);
    let self_pair = a == b;
    let v = body_a.vertex_offset + local;
    let p = vertex_position(v);
    let sa = body_state[a];
    let sb = body_state[b];
    if !self_pair && (cloth_a || !cloth_b) {
        if any(p < body_min(sb) - reach) || any(p > body_max(sb) + reach) {
            return;
        }
    }
    let n = vec3<f32>(normals[3u * v], normals[3u * v + 1u], normals[3u * v + 2u]);
    if all(n == vec3<f32>(0.0)) {
        return;
    }
    let inf = bitcast<f32>(0x7f800000u);
    let inward = CONTACT_INWARD_RAY;
    let outward = CONTACT_OUTWARD_RAY;
    if !cloth_a && self_pair {
        // Volumetric self-collision: two inward-facing hits in a row.
        let first = probe(body_a, sa.leaf_count, p, -n, 0.0, inf, v);
        if hits(first) && first.cosine > 0.0 {
            let t1 = first.hit.t;
            let second = probe(body_a, sa.leaf_count, p, -n, t1 + SELF_HIT_GAP * t1, inf, v);
            if hits(second) && second.hit.t > t1 && second.hit.triangle != first.hit.triangle
                && second.cosine > 0.0 {
                emit(a, local, b, p, -n, first, true, CONTACT_COLLISION | inward, ea, eb);
            }
        }
    } else if !cloth_a && !cloth_b {
        let i = probe(body_b, sb.leaf_count, p, -n, 0.0, inf, NONE);
        if hits(i) && i.cosine > 0.0 && !blocked(body_a, sa.leaf_count, p, -n, i.hit.t, v) {
            emit(a, local, b, p, -n, i, true, CONTACT_COLLISION | inward, ea, eb);
        }
        if predict > 0.0 {
            let o = probe(body_b, sb.leaf_count, p, n, 0.0, reach, NONE);
            if hits(o) && o.cosine < 0.0 && o.length < predict
                && !blocked(body_a, sa.leaf_count, p, n, o.hit.t, v) {
                emit(a, local, b, p, n, o, false, CONTACT_PREDICTION | outward, ea, eb);
            }
        }
    } else if !cloth_a {
        // Volumetric -> cloth.
        let i = probe(body_b, sb.leaf_count, p, -n, 0.0, inf, NONE);
        if hits(i) && !blocked(body_a, sa.leaf_count, p, -n, 2.0 * i.hit.t, v) {
            emit(a, local, b, p, -n, i, true, CONTACT_COLLISION | inward, ea, eb);
        }
        if reach > 0.0 {
            let o = probe(body_b, sb.leaf_count, p, n, 0.0, reach, NONE);
            let cls = class_of(o.length, eb, predict);
            if hits(o) && cls != 0u && !blocked(body_a, sa.leaf_count, p, n, o.hit.t, v) {
                emit(a, local, b, p, n, o, false, cls | outward, ea, eb);
            }
        }
    } else if !cloth_b {
        // Cloth -> volumetric.
        let i = probe(body_b, sb.leaf_count, p, -n, 0.0, inf, NONE);
        let o = probe(body_b, sb.leaf_count, p, n, 0.0, inf, NONE);
        let inside_i = hits(i) && i.cosine > 0.0;
        let inside_o = hits(o) && o.cosine > 0.0;
        if inside_o && (!inside_i || o.length < i.length) {
            emit(a, local, b, p, n, o, true, CONTACT_COLLISION | outward, ea, eb);
        } else if inside_i {
            emit(a, local, b, p, -n, i, true, CONTACT_COLLISION | inward, ea, eb);
        } else {
            let ci = class_of(i.length, ea, predict);
            if hits(i) && ci != 0u {
                emit(a, local, b, p, -n, i, false, ci | inward, ea, eb);
            }
            let co = class_of(o.length, ea, predict);
            if hits(o) && co != 0u {
                emit(a, local, b, p, n, o, false, co | outward, ea, eb);
            }
        }
    } else {
        // Cloth -> cloth, or a cloth against itself.
        var ignore = NONE;
        if self_pair {
            ignore = v;
        }
        for (var side = 0u; side < 2u; side += 1u) {
            var dir = -n;
            var ray = inward;
            if side == 1u {
                dir = n;
                ray = outward;
            }
            let h = probe(body_b, sb.leaf_count, p, dir, 0.0, reach, ignore);
            if hits(h) {
                if inverted(v, body_b, h.hit.triangle) {
                    emit(a, local, b, p, dir, h, true, CONTACT_COLLISION | CONTACT_INVERTED | ray, ea, eb);
                } else {
                    let cls = class_of(h.length, ea + eb, predict);
                    if cls != 0u {
                        emit(a, local, b, p, dir, h, false, cls | ray, ea, eb);
                    }
                }
            }
        }
    }
}
