// The classification of the narrow phase (Hermann et al. 2008; Lehericey et al. 2015), shared
// by the full pass (`narrow_phase`: rays through the BVH) and iterative detection
// (`walk_contacts`: rays walked from last frame's hits). The kernel that includes this (after
// shared/common.wgsl, shared/contact.wgsl, shared/vertices.wgsl, shared/ray.wgsl and
// shared/bvh.wgsl) declares `params`, `bodies`, `body_state`, `vertices` (positions, previous
// positions and normals), `triangles`, `pairs` (the counters, then the pair list) and
// `contacts`, and defines
//
//     fn trace(body: u32, ray: Ray, ignore_vertex: u32, hint: u32) -> Traced
//
// the closest hit of `ray` on packed body `body` (skipping the triangles of `ignore_vertex`),
// where `hint` is the body-local triangle the same ray hit in the last frame (NONE: unknown).
// The rules are in `narrow_phase.wgsl`'s header. CPU twin: `raycontact::internals::cpu::classify`.
//
// How far a ray is traced. A ray classified by its re-projected length L = t |cos α| (the
// outward ray of volumetric -> volumetric and of volumetric -> cloth, both rays of cloth ->
// cloth and of a cloth against itself; cloth -> volumetric traces both rays unbounded anyway)
// is traced without limit (tmax = +inf), not up to the reach r: L < limit says that v is
// within the limit of the hit triangle's *plane*, and a hit at t has L = t |cos α|, so a
// slanted ray (|cos α| small) can land beyond r with L well within the limit (at 80 degrees,
// t = 5.8 L). No finite tmax is exact, since |cos α| is known only after the hit: a bound
// limit / cos_min would lose every hit slanted beyond a chosen angle, and a first trace to r
// then a second from r on costs more than one unbounded trace (the second walks the same
// boxes). So every hit whose L is within the limit is found, for every listed source vertex
// (`ray_sources` still lists only those within B's box grown by r). What stays local: an
// inversion is tested only for a hit with t <= r, the hits the bounded trace used to find
// (a vertex crossing the plane of a far triangle has not crossed the triangle). A cloth pair
// with r = 0 classifies nothing by L and is traced up to r = 0, for inversions only; with
// DETECT_NO_INVERSION set (`Scene::set_inversion_handling(false)`) no hit is tested for an
// inversion, and every cloth -> cloth hit is classified by L alone. The cost
// is that a ray that misses B's triangles near v goes on through B's boxes along its line.

// A trace's hit, whether (and in how many steps) a walk found it, and how the walk ended
// (NONE when the trace did not walk).
struct Traced {
    hit: RayHit,
    walked: bool,
    steps: u32,
    outcome: u32,
}

// A ray's hit on a body with the hit triangle's normal: face = its unnormalised normal,
// cosine = dir . m with m the unit normal, length = t |cosine| (the re-projected ray).
struct Probe {
    hit: RayHit,
    face: vec3<f32>,
    cosine: f32,
    length: f32,
    walked: bool,
    steps: u32,
    outcome: u32,
}

fn probe(body: u32, origin: vec3<f32>, dir: vec3<f32>, tmin: f32, tmax: f32, ignore_vertex: u32,
         hint: u32) -> Probe {
    let tr = trace(body, Ray(origin, tmin, dir, tmax), ignore_vertex, hint);
    var pr = Probe(tr.hit, vec3<f32>(0.0), 0.0, 0.0, tr.walked, tr.steps, tr.outcome);
    if tr.hit.triangle != NONE {
        let g = bodies[body].tri_offset + tr.hit.triangle;
        let ta = vertex_position(triangles[3u * g]);
        pr.face = cross(vertex_position(triangles[3u * g + 1u]) - ta, vertex_position(triangles[3u * g + 2u]) - ta);
        pr.cosine = dot(dir, normalize(pr.face));
        pr.length = tr.hit.t * abs(pr.cosine);
    }
    return pr;
}

fn hits(pr: Probe) -> bool {
    return pr.hit.triangle != NONE;
}

// The source body's own hit along the ray (ignoring v's triangles): up to `t`, or without
// limit when exits are remembered (then blocked when its t < `t`).
fn own_hit(body: u32, origin: vec3<f32>, dir: vec3<f32>, t: f32, v: u32, hint: u32) -> RayHit {
    var tmax = t;
    if (params.flags & DETECT_REMEMBER_EXIT) != 0u {
        tmax = infinity();
    }
    return trace(body, Ray(origin, 0.0, dir, tmax), v, hint).hit;
}

fn blocks(h: RayHit, t: f32) -> bool {
    return h.triangle != NONE && h.t < t;
}

fn prev_position(v: u32) -> vec3<f32> {
    return vertex_in(VERTEX_PREVIOUS, v);
}

// Whether packed vertex v is strictly on the other side of triangle `tri` of packed body `b`
// than it was at the previous positions.
fn inverted(v: u32, b: u32, tri: u32) -> bool {
    let g = bodies[b].tri_offset + tri;
    let ia = triangles[3u * g];
    let ib = triangles[3u * g + 1u];
    let ic = triangles[3u * g + 2u];
    let a = vertex_position(ia);
    let now = dot(vertex_position(v) - a, cross(vertex_position(ib) - a, vertex_position(ic) - a));
    let pa = prev_position(ia);
    let before = dot(prev_position(v) - pa, cross(prev_position(ib) - pa, prev_position(ic) - pa));
    return (now < 0.0 && before > 0.0) || (now > 0.0 && before < 0.0);
}

// Where a contact comes from: source body a, its vertex `local` at p, target body b, the
// directed pair k, the half-thicknesses.
struct Source {
    a: u32,
    local: u32,
    b: u32,
    k: u32,
    p: vec3<f32>,
    ea: f32,
    eb: f32,
}

// Appends the contact of probe `pr` along `dir`. `through`: the normal points towards the hit
// (else away from it). `exit`: the source body's triangle where the ray leaves it (or NONE).
fn emit(s: Source, dir: vec3<f32>, pr: Probe, through: bool, flags: u32, exit: u32) {
    let slot = atomicAdd(&pairs.state.contact_count, 1u);
    if slot >= params.contact_capacity {
        return;
    }
    let g = bodies[s.b].tri_offset + pr.hit.triangle;
    let ta = vertex_position(triangles[3u * g]);
    let tb = vertex_position(triangles[3u * g + 1u]);
    let tc = vertex_position(triangles[3u * g + 2u]);
    let m = normalize(pr.face);
    var toward = m;
    if pr.cosine < 0.0 {
        toward = -m;
    }
    var normal = -toward;
    var depth = s.ea + s.eb - pr.length;
    if through {
        normal = toward;
        depth = pr.length + s.ea + s.eb;
    }
    var f = flags;
    if pr.walked {
        f |= CONTACT_WALKED;
    }
    let q = ta * (1.0 - pr.hit.u - pr.hit.v) + tb * pr.hit.u + tc * pr.hit.v;
    contacts[slot] = Contact(
        s.a, s.local, s.b, pr.hit.triangle,
        s.p - s.ea * normal, pr.hit.u,
        q + s.eb * normal, pr.hit.v,
        normal, depth,
        pr.hit.t, abs(pr.cosine),
        f, s.k, exit, pr.steps, 0u, 0u,
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

// Classifies the rays of source vertex `local` of body a against body b (a itself for a self
// pair) of directed pair k with prediction distance `predict`: the inward ray when bit 0 of
// `sides` is set, the outward one when bit 1 is; `hint_in`, `hint_out` and `hint_exit` are
// last frame's triangles of the inward ray on b, the outward ray on b and the ray on a (NONE:
// unknown). Appends the contacts found.
fn classify(a: u32, local: u32, b: u32, k: u32, predict: f32, sides: u32, hint_in: u32, hint_out: u32,
            hint_exit: u32) {
    let body_a = bodies[a];
    let body_b = bodies[b];
    let cloth_a = (body_a.flags & BODY_CLOTH) != 0u;
    let cloth_b = (body_b.flags & BODY_CLOTH) != 0u;
    let ea = body_a.half_thickness;
    let eb = body_b.half_thickness;
    let r = reach(predict, ea, eb);
    let self_pair = a == b;
    let v = body_a.vertex_offset + local;
    let p = vertex_position(v);
    let n = vertex_in(VERTEX_NORMALS, v);
    if all(n == vec3<f32>(0.0)) {
        return;
    }
    let src = Source(a, local, b, k, p, ea, eb);
    let inf = infinity();
    let inward = CONTACT_INWARD_RAY;
    let outward = CONTACT_OUTWARD_RAY;
    let use_in = (sides & 1u) != 0u;
    let use_out = (sides & 2u) != 0u;
    let none = Probe(RayHit(inf, NONE, 0.0, 0.0, 0u, 0u, 0u, 0u), vec3<f32>(0.0), 0.0, 0.0, false, 0u, NONE);
    if !cloth_a && self_pair {
        // Volumetric self-collision: two inward-facing hits in a row.
        if use_in {
            let first = probe(a, p, -n, 0.0, inf, v, hint_in);
            if hits(first) && first.cosine > 0.0 {
                let t1 = first.hit.t;
                let second = probe(a, p, -n, t1 + SELF_HIT_GAP * t1, inf, v, NONE);
                if hits(second) && second.hit.t > t1 && second.hit.triangle != first.hit.triangle
                    && second.cosine > 0.0 {
                    emit(src, -n, first, true, CONTACT_COLLISION | inward, NONE);
                }
            }
        }
    } else if !cloth_a && !cloth_b {
        if use_in {
            let i = probe(b, p, -n, 0.0, inf, NONE, hint_in);
            if hits(i) && i.cosine > 0.0 {
                let own = own_hit(a, p, -n, i.hit.t, v, hint_exit);
                if !blocks(own, i.hit.t) {
                    emit(src, -n, i, true, CONTACT_COLLISION | inward, own.triangle);
                }
            }
        }
        if use_out && predict > 0.0 {
            let o = probe(b, p, n, 0.0, inf, NONE, hint_out);
            if hits(o) && o.cosine < 0.0 && o.length < predict {
                let own = own_hit(a, p, n, o.hit.t, v, hint_exit);
                if !blocks(own, o.hit.t) {
                    emit(src, n, o, false, CONTACT_PREDICTION | outward, own.triangle);
                }
            }
        }
    } else if !cloth_a {
        // Volumetric -> cloth.
        if use_in {
            let i = probe(b, p, -n, 0.0, inf, NONE, hint_in);
            if hits(i) {
                let own = own_hit(a, p, -n, 2.0 * i.hit.t, v, hint_exit);
                if !blocks(own, 2.0 * i.hit.t) {
                    emit(src, -n, i, true, CONTACT_COLLISION | inward, own.triangle);
                }
            }
        }
        if use_out && r > 0.0 {
            let o = probe(b, p, n, 0.0, inf, NONE, hint_out);
            let cls = class_of(o.length, eb, predict);
            if hits(o) && cls != 0u {
                let own = own_hit(a, p, n, o.hit.t, v, hint_exit);
                if !blocks(own, o.hit.t) {
                    emit(src, n, o, false, cls | outward, own.triangle);
                }
            }
        }
    } else if !cloth_b {
        // Cloth -> volumetric.
        var i = none;
        var o = none;
        if use_in {
            i = probe(b, p, -n, 0.0, inf, NONE, hint_in);
        }
        if use_out {
            o = probe(b, p, n, 0.0, inf, NONE, hint_out);
        }
        let inside_i = hits(i) && i.cosine > 0.0;
        let inside_o = hits(o) && o.cosine > 0.0;
        if inside_o && (!inside_i || o.length < i.length) {
            emit(src, n, o, true, CONTACT_COLLISION | outward, NONE);
        } else if inside_i {
            emit(src, -n, i, true, CONTACT_COLLISION | inward, NONE);
        } else {
            let ci = class_of(i.length, ea, predict);
            if hits(i) && ci != 0u {
                emit(src, -n, i, false, ci | inward, NONE);
            }
            let co = class_of(o.length, ea, predict);
            if hits(o) && co != 0u {
                emit(src, n, o, false, co | outward, NONE);
            }
        }
    } else {
        // Cloth -> cloth, or a cloth against itself. A walked ray whose line crosses its
        // remembered triangle behind the vertex (the vertex crossed it) is cast the other way
        // too, from the same triangle: that is where an inversion is found. Inversions only
        // within r along the ray (see the header).
        var ignore = NONE;
        if self_pair {
            ignore = v;
        }
        // Unbounded (see the header), or up to r = 0 when nothing classifies by L.
        var tmax = inf;
        if r <= 0.0 {
            tmax = r;
        }
        var todo = sides;
        var done = 0u;
        var hints = vec2<u32>(hint_in, hint_out);
        for (var i = 0u; i < 3u; i += 1u) {
            let side = i & 1u;
            if (todo & (1u << side)) == 0u || (done & (1u << side)) != 0u {
                continue;
            }
            done |= 1u << side;
            var dir = -n;
            var ray = inward;
            if side == 1u {
                dir = n;
                ray = outward;
            }
            let h = probe(b, p, dir, 0.0, tmax, ignore, hints[side]);
            let other = 1u - side;
            if h.outcome == WALK_RANGE && (todo & (1u << other)) == 0u {
                todo |= 1u << other;
                hints[other] = hints[side];
            }
            if hits(h) {
                if (params.flags & DETECT_NO_INVERSION) == 0u && h.hit.t <= r
                    && inverted(v, b, h.hit.triangle) {
                    emit(src, dir, h, true, CONTACT_COLLISION | CONTACT_INVERTED | ray, NONE);
                } else {
                    let cls = class_of(h.length, ea + eb, predict);
                    if cls != 0u {
                        emit(src, dir, h, false, cls | ray, NONE);
                    }
                }
            }
        }
    }
}
