// Contacts from edge-triangle crossings, one invocation per stored crossing of edge (p -> q) of
// body S through triangle T of body O at X, T's unit normal n (from its winding), appended to
// the detection's contacts (flagged COLLISION | EDGE; the response uses them as any collision):
// - O volumetric: a vertex of the edge inside O is the vertex rays' (Hermann's) to push, so only
//   a part of the edge inside O between two crossings (the edge enters and leaves O: no vertex
//   inside, which no vertex ray can see) gives a contact, one per crossing: its deepest point Y
//   (the other crossing, at inside_t) is pushed out through T along n, by D = (X - Y) . n. The
//   force acts on the edge's vertex nearer Y (source_vertex); source_point = Y, target_point =
//   Y + D n (on T's plane), normal n, depth D.
// - O cloth (any S, and a cloth's self pair): the crossing itself is the error. The edge's
//   vertex next to the crossing that the analysis put on the wrong side (CROSSING_WRONG_*),
//   else the one of the two next to it nearer T's plane, is pushed through T to the other
//   side: normal = -sign((w - X) . n) n, depth = |(w - X) . n| + e_S + e_O, source_point =
//   w - e_S normal, target_point = the projection of w on T's plane + e_O normal.
// `ray_length` is the distance moved along the normal, `weight` 1, `pair` the crossing's
// directed pair. Past the contact capacity they are counted only.
// CPU twin: `raycontact::internals::cpu::edge_contacts`.
//!include shared/common.wgsl
//!include shared/contact.wgsl
//!include shared/intersect.wgsl

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> vertices: array<f32>;
@group(0) @binding(3) var<storage, read> triangles: array<u32>;
@group(0) @binding(4) var<storage, read> edges: array<Edge>;
@group(0) @binding(5) var<storage, read> crossings: array<Crossing>;
@group(0) @binding(6) var<storage, read_write> state: IntersectState;
@group(0) @binding(7) var<storage, read_write> pairs: PairList;
@group(0) @binding(8) var<storage, read_write> contacts: array<Contact>;

fn position(v: u32) -> vec3<f32> {
    return vec3<f32>(vertices[3u * v], vertices[3u * v + 1u], vertices[3u * v + 2u]);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = linear_group(wid) * WG_SIZE + lid;
    if i >= min(atomicLoad(&state.crossings), params.crossing_capacity) {
        return;
    }
    let c = crossings[i];
    let sb = bodies[c.source_body];
    let ob = bodies[c.target_body];
    let e = edges[sb.edge_offset + c.edge];
    let g = ob.tri_offset + c.triangle;
    let ta = position(triangles[3u * g]);
    let m = cross(position(triangles[3u * g + 1u]) - ta, position(triangles[3u * g + 2u]) - ta);
    let ml = length(m);
    if !(ml > 0.0) {
        return;
    }
    let n = m / ml;
    let p = position(e.a);
    let q = position(e.b);
    let forward = (c.flags & CROSSING_FORWARD) != 0u;
    let a_next = (c.flags & CROSSING_FIRST) != 0u;
    let b_next = (c.flags & CROSSING_LAST) != 0u;
    var w = NONE;
    var source_point: vec3<f32>;
    var target_point: vec3<f32>;
    var normal: vec3<f32>;
    var depth: f32;
    var moved: f32;
    if (ob.flags & BODY_CLOTH) == 0u {
        if (forward && a_next) || (!forward && b_next) {
            return;
        }
        let y = p + c.inside_t * (q - p);
        depth = dot(c.point - y, n);
        if !(depth > 0.0) {
            return;
        }
        moved = depth;
        w = e.b;
        if c.inside_t < 0.5 {
            w = e.a;
        }
        normal = n;
        source_point = y;
        target_point = y + depth * n;
    } else {
        let da = abs(dot(p - c.point, n));
        let db = abs(dot(q - c.point, n));
        if a_next && (c.flags & CROSSING_WRONG_A) != 0u {
            w = e.a;
        } else if b_next && (c.flags & CROSSING_WRONG_B) != 0u {
            w = e.b;
        } else if a_next && (!b_next || da <= db) {
            w = e.a;
        } else if b_next {
            w = e.b;
        } else {
            return;
        }
        let x = position(w);
        let sd = dot(x - c.point, n);
        // The side w is on (behind T: the edge's back end when sd is 0).
        var behind = sd < 0.0;
        if sd == 0.0 {
            behind = (w == e.a) == forward;
        }
        normal = n;
        if !behind {
            normal = -n;
        }
        moved = abs(sd);
        depth = moved + sb.half_thickness + ob.half_thickness;
        source_point = x - sb.half_thickness * normal;
        target_point = x + (moved + ob.half_thickness) * normal;
    }
    atomicAdd(&state.edge_contacts, 1u);
    let slot = atomicAdd(&pairs.state.contact_count, 1u);
    if slot >= params.contact_capacity {
        return;
    }
    contacts[slot] = Contact(c.source_body, w - sb.vertex_offset, c.target_body, c.triangle, source_point, c.u,
        target_point, c.v, normal, depth, moved, 1.0, CONTACT_COLLISION | CONTACT_EDGE, c.pair, NONE, 0u, 0u, 0u);
}
