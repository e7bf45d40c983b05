// Untangling contacts (full intersection analysis), one invocation per packed vertex v of a
// cloth S whose region the analysis put on the wrong side of a cloth O (`wrong_side`; O = S for
// a cloth tangled with itself): v must go back through O. Its two rays along +-n (its vertex
// normal, unbounded; O's triangles around v skipped on a self pair) find O's closest triangle T
// through the BVH; the one whose re-projected length L = t |dir . m| (m: T's unit normal) is the
// shorter is pushed through: normal = +-m along the ray (across T), depth = L + e_S + e_O (v
// ends on T's other side, clear of both half-thicknesses), source_point = v - e_S normal,
// target_point = hit + e_O normal, flagged COLLISION | UNTANGLE and the ray's side. A vertex
// whose rays both miss O gets none. Volumetric wrong sides (inside another body) are the
// vertex rays' to resolve (Hermann's and Lehericey's inside tests), not this kernel's.
// CPU twin: `raycontact::internals::cpu::untangle_contacts`.
//!include shared/common.wgsl
//!include shared/bodies.wgsl
//!include shared/contact.wgsl
//!include shared/vertices.wgsl
//!include shared/ray.wgsl
//!include shared/bvh.wgsl
//!include shared/intersect.wgsl

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> vertices: array<f32>;
@group(0) @binding(3) var<storage, read> triangles: array<u32>;
@group(0) @binding(4) var<storage, read> nodes: array<Node>;
@group(0) @binding(5) var<storage, read> regions: array<RegionRead>;
@group(0) @binding(6) var<storage, read_write> pairs: PairList;
@group(0) @binding(7) var<storage, read_write> contacts: array<Contact>;

// Unit normal of body-local triangle `tri` of `body`, or zero.
fn tri_normal(body: BodyGpu, tri: u32) -> vec3<f32> {
    let g = body.tri_offset + tri;
    let a = vertex_position(triangles[3u * g]);
    let m = cross(vertex_position(triangles[3u * g + 1u]) - a, vertex_position(triangles[3u * g + 2u]) - a);
    let l = length(m);
    if !(l > 0.0) {
        return vec3<f32>(0.0);
    }
    return m / l;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let v = linear_group(wid) * WG_SIZE + lid;
    if v >= params.vertex_count {
        return;
    }
    let other = regions[decode_parent(regions[v].parent, v)].other;
    if other == 0u {
        return;
    }
    let s = body_of_vertex(v);
    let o = ~other;
    let sb = bodies[s];
    let ob = bodies[o];
    if (sb.flags & BODY_CLOTH) == 0u || (ob.flags & BODY_CLOTH) == 0u {
        return;
    }
    let n = vertex_in(VERTEX_NORMALS, v);
    if all(n == vec3<f32>(0.0)) {
        return;
    }
    let p = vertex_position(v);
    var ignore = NONE;
    if s == o {
        ignore = v;
    }
    // Leaf count 1: O has crossings, so its BVH has leaves (only zero is tested).
    var best = RayHit(infinity(), NONE, 0.0, 0.0, 0u, 0u, 0u, 0u);
    var best_dir = vec3<f32>(0.0);
    var best_len = infinity();
    var best_m = vec3<f32>(0.0);
    var flags = 0u;
    for (var side = 0u; side < 2u; side += 1u) {
        var dir = -n;
        var ray_flag = CONTACT_INWARD_RAY;
        if side == 1u {
            dir = n;
            ray_flag = CONTACT_OUTWARD_RAY;
        }
        let hit = closest_hit(Ray(p, 0.0, dir, infinity()), ob, 1u, ignore, NO_FAN);
        if hit.triangle == NONE {
            continue;
        }
        let m = tri_normal(ob, hit.triangle);
        let len = hit.t * abs(dot(dir, m));
        if len < best_len {
            best = hit;
            best_dir = dir;
            best_len = len;
            best_m = m;
            flags = ray_flag;
        }
    }
    if best.triangle == NONE || all(best_m == vec3<f32>(0.0)) {
        return;
    }
    var normal = best_m;
    if dot(best_dir, best_m) < 0.0 {
        normal = -best_m;
    }
    let hit_point = p + best.t * best_dir;
    let slot = atomicAdd(&pairs.state.contact_count, 1u);
    if slot >= params.contact_capacity {
        return;
    }
    contacts[slot] = Contact(s, v - sb.vertex_offset, o, best.triangle, p - sb.half_thickness * normal, best.u,
        hit_point + ob.half_thickness * normal, best.v, normal, best_len + sb.half_thickness + ob.half_thickness,
        best.t, abs(dot(best_dir, best_m)), CONTACT_COLLISION | CONTACT_UNTANGLE | flags, NONE, NONE, 0u, 0u, 0u);
}
