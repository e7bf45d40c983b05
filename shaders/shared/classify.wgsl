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
// where `hint` is the body-local triangle the same ray hit in the last frame (NONE: unknown),
// and
//
//     fn may_reach(body: u32, p: vec3<f32>, r: f32, ignore_vertex: u32) -> bool
//
// whether packed body `body` may have a triangle that does not use packed vertex
// `ignore_vertex` (NONE: any triangle) within distance r of p (`true` whenever unsure): a ray
// classified by L makes a contact only of a hit within the reach of its origin (its own, or its
// straight ray's), so it is not cast where `asks_reach` asks and the body has none
// (`narrow_phase` asks its BVH, `walk_contacts` answers `true`), and
//
//     fn source_normal(v: u32) -> vec3<f32>
//
// the normal of packed vertex v, `vertex_normals`' (`narrow_phase` reads the normals region
// that `vertex_normals` wrote this frame; `walk_contacts`, whose iterative pass runs no
// `vertex_normals`, computes it with the same `face_sum`, shared/incidence.wgsl), and
//
//     const LINE_TRACES: bool
//     fn trace_line(body: u32, ray: Ray, ignore_vertex: u32) -> TracedLine
//
// the traces of `ray` and of its opposite ray (the same origin and bounds, the direction
// negated) without hints: `trace`'s of each, which the classification asks for, for a cloth
// vertex's two rays along its normal on one body, only where LINE_TRACES is true
// (`narrow_phase` where the tuning walks them together, `LINE_WALKS`: one walk of the BVH for
// both, shared/bvh_line.wgsl; `walk_contacts`, whose traces follow hints, casts its rays one by
// one).
// The rules are in `narrow_phase.wgsl`'s header. CPU twin: `raycontact::internals::cpu::classify`.
//
// How far a ray is traced, and the re-projected ray made real. A ray classified by its
// re-projected length L = t |cos α| (the outward ray of volumetric -> volumetric and of
// volumetric -> cloth, both rays of cloth -> cloth and of a cloth against itself, the rays of
// cloth -> volumetric that hit B's outside) is traced without limit (cloth -> volumetric's go
// without limit anyway: a vertex deep inside B must find B's inside). A hit within the reach r
// along the ray (t <= r, the length of the paper's rays) is classified by its L. A hit beyond
// it (t > r) whose L is within the case's limit (the reach r: L < r) says only that v is within
// r of the hit triangle's *plane*: a slanted vertex over a sheet (80 degrees, L = r / 2: t =
// 2.9 r), or a grazing hit far away (t = 0.313, |cos α| = 0.0104 in `cloth_on_ball`: L = 0.0033,
// with v nowhere near the triangle). It is confirmed by the ray the re-projection stands for:
// a second ray from v straight towards that plane (direction sign(cos α) m, m the hit
// triangle's unit normal, up to r) on the same body. When it hits, the step is done again with
// *its* hit (triangle, t, cosine, L) in place of the far one, by the same case's rule (and for
// volumetric sources, an own trace along it); when it misses, the far hit is rejected. So the
// sheet under a slanted vertex is found (the straight ray hits it at L) and a ball grazed far
// away is not (the straight ray misses it). In `walk_contacts` the straight ray walks from the
// slanted ray's hint (last frame's triangle of that ray, which is the straight ray's own when
// last frame's contact came from one), or from the far hit's triangle when there is none.
// A hit beyond r with L >= r is rejected, and is no inversion either. A cloth pair with r = 0
// classifies nothing by L and is traced up to 0, for inversions only; with DETECT_NO_INVERSION
// set (`Scene::set_inversion_handling(false)`) no hit is tested for an inversion. Volumetric ->
// cloth's inward ray traces the source body first, to where the ray leaves it, then the cloth
// up to half that exit distance (Lehericey's condition, on a shorter ray than a cloth ray
// without limit checked by an own trace up to twice its hit; the same contacts).

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

// The traces of a ray (`front`) and of its opposite ray (`back`): `trace_line`'s.
struct TracedLine {
    front: Traced,
    back: Traced,
}

// The probes of a ray and of its opposite ray (`probe_line`).
struct ProbeLine {
    front: Probe,
    back: Probe,
}

fn probe(body: u32, origin: vec3<f32>, dir: vec3<f32>, tmin: f32, tmax: f32, ignore_vertex: u32,
         hint: u32) -> Probe {
    return probe_of(body, dir, trace(body, Ray(origin, tmin, dir, tmax), ignore_vertex, hint));
}

// `probe` of the ray along `dir` and of its opposite ray, without hints, in one `trace_line`.
fn probe_line(body: u32, origin: vec3<f32>, dir: vec3<f32>, tmin: f32, tmax: f32, ignore_vertex: u32) -> ProbeLine {
    let tr = trace_line(body, Ray(origin, tmin, dir, tmax), ignore_vertex);
    return ProbeLine(probe_of(body, dir, tr.front), probe_of(body, -dir, tr.back));
}

// The probe of trace `tr` of a ray along `dir` on packed body `body`.
fn probe_of(body: u32, dir: vec3<f32>, tr: Traced) -> Probe {
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

// Appends the contact of probe `pr`. `through`: the normal points towards the hit
// (else away from it). `exit`: the source body's triangle where the ray leaves it (or NONE).
// One atomic on the list's counter per contact, not one per subgroup by hand (a ballot, one
// lane's atomic, a broadcast of its result): `emit` runs where the traversals have diverged, and
// core Vulkan does not promise that the lanes that took the ballot together are together again
// for the broadcast after the one lane's branch (the Vulkan guide's page on
// VK_KHR_shader_subgroup_uniform_control_flow shows this very append, and even that extension
// promises reconvergence only to lanes converged before the branch: these are not); lanes that
// reached the broadcast without the lane that made the atomic would take a base that no atomic
// reserved, and write over other contacts: silently wrong. Browsers reject subgroup built-ins in
// non-uniform control flow outright (Tint's `subgroup_uniformity`). Aggregating the appends
// safely would mean holding each invocation's contacts until a point every invocation reaches,
// for which `classify` would carry its contacts (one per ray that makes one) in private memory
// through the traversals. Compilers that know their own reconvergence aggregate such
// same-address atomics per SIMD group themselves (NVIDIA's CUDA compiler since CUDA 9, LLVM's
// AMDGPU atomic optimizer); whether a given Vulkan driver does is not measured (no GPU has been
// lent to measure it).
fn emit(s: Source, pr: Probe, through: bool, flags: u32, exit: u32) {
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

// The pair cases of the classification (Lehericey et al. 2015's four tests; a volumetric body
// against itself is Hermann's self-collision).
const CASE_VOLUMETRIC_SELF: u32 = 0u;
const CASE_VV: u32 = 1u;
const CASE_VC: u32 = 2u;
const CASE_CV: u32 = 3u;
const CASE_CC: u32 = 4u;

// The case of the directed pair a -> b.
fn pair_case(a: u32, b: u32) -> u32 {
    let cloth_a = (bodies[a].flags & BODY_CLOTH) != 0u;
    let cloth_b = (bodies[b].flags & BODY_CLOTH) != 0u;
    if !cloth_a && a == b {
        return CASE_VOLUMETRIC_SELF;
    }
    if !cloth_a && !cloth_b {
        return CASE_VV;
    }
    if !cloth_a {
        return CASE_VC;
    }
    if !cloth_b {
        return CASE_CV;
    }
    return CASE_CC;
}

// One trace of the classification: along `dir` on `body`, over [tmin, tmax].
struct Request {
    body: u32,
    dir: vec3<f32>,
    tmin: f32,
    tmax: f32,
    ignore: u32,
    hint: u32,
}

// How far the source body's own trace goes for a hit on the target at t: up to t, or without
// limit when exits are remembered (the twin's `own_hit`).
fn own_tmax(t: f32) -> f32 {
    if (params.flags & DETECT_REMEMBER_EXIT) != 0u {
        return infinity();
    }
    return t;
}

// Whether a ray classified by L at `body`, skipping the triangles of packed vertex `ignore`, asks
// `may_reach` (with reach r, grown by the margin) before it is cast: always at another body's
// source (NONE), and at its own (a cloth's self pair) where SELF_REACH_SIZE of the cloth's mean
// edge lengths exceed the reach (`layout::SELF_REACH_SIZE` says why). The contacts are the same
// either way: a ray not cast where `may_reach` says no would find nothing within the reach.
// CPU twin: `raycontact::internals::cpu::asks_reach`.
fn asks_reach(body: BodyGpu, ignore: u32, r: f32) -> bool {
    return ignore == NONE || SELF_REACH_SIZE * body.mean_size > r;
}

// Whether step s of case `kind` classifies its hit by the re-projected length L (and so may
// confirm a hit beyond the reach by a straight ray): volumetric -> volumetric's outward ray
// (a hit of B's outside), volumetric -> cloth's outward ray, cloth -> volumetric's hits of
// B's outside (steps 2 and 3), every cloth -> cloth ray. The first two and the last are the
// steps that cast their ray only where `may_reach` says so.
fn by_length(kind: u32, s: u32, pr: Probe) -> bool {
    return length_step(kind, s) && (kind != CASE_VV || pr.cosine < 0.0);
}

// The steps of `by_length`, whatever their hit.
fn length_step(kind: u32, s: u32) -> bool {
    switch kind {
        case CASE_VV, CASE_VC: {
            return s == 2u;
        }
        case CASE_CV: {
            return s >= 2u;
        }
        case CASE_CC: {
            return true;
        }
        default: {
            return false;
        }
    }
}

// Classifies the rays of source vertex `local` of body a against body b (a itself for a self
// pair) of directed pair k with prediction distance `predict`: the inward ray when bit 0 of
// `sides` is set, the outward one when bit 1 is; `hint_in`, `hint_out` and `hint_exit` are
// last frame's triangles of the inward ray on b, the outward ray on b and the ray on a (NONE:
// unknown). Appends the contacts found.
//
// Every trace goes through the one `probe` call of the loop below (a step machine per case),
// and a cloth vertex's two rays walked together through the one `probe_line` call: drivers
// inline `trace` — a BVH traversal, and in `walk_contacts` a walk too — at each call site, and
// one call site instead of thirteen is what keeps the kernels quick to compile (`probe_line`'s
// is dead code where LINE_TRACES is false, a constant).
// Step s of each case, in the order the rules need them (the twin makes the same traces):
// - volumetric self: 0 the first hit on a; 1 the second hit past it.
// - volumetric -> volumetric: 0 inward on b; 1 own trace of that hit; 2 outward on b; 3 own
//   trace of that hit (along the ray the contact is made from).
// - volumetric -> cloth: 0 the own trace inward, to the exit; 1 inward on b up to half the
//   exit distance; 2 outward on b; 3 own trace of that hit (as for volumetric -> volumetric).
// - cloth -> volumetric: 0 inward on b; 1 outward on b (both unbounded: the vertex may be
//   deep inside b); then the classification: 2 the inward hit, 3 the outward hit (no trace).
// - cloth -> cloth: up to three rays on b, the side chosen as the header says.
// A step that classifies by L and whose hit lies beyond the reach with L within it is done
// again with its hit replaced by the straight ray's (`straight`; the header says why).
fn classify(a: u32, local: u32, b: u32, k: u32, predict: f32, sides: u32, hint_in: u32, hint_out: u32,
            hint_exit: u32) {
    let body_a = bodies[a];
    let body_b = bodies[b];
    let ea = body_a.half_thickness;
    let eb = body_b.half_thickness;
    let r = reach(predict, ea, eb);
    let v = body_a.vertex_offset + local;
    let p = vertex_position(v);
    let n = source_normal(v);
    if all(n == vec3<f32>(0.0)) {
        return;
    }
    let kind = pair_case(a, b);
    let src = Source(a, local, b, k, p, ea, eb);
    let inf = infinity();
    // How far the rays classified by L go: without limit (hits beyond r are confirmed by a
    // straight ray), but not at all past 0 when r = 0 (inversions only).
    var beyond = inf;
    if r <= 0.0 {
        beyond = 0.0;
    }
    // The reach of `may_reach`, grown by a margin: a hit computed at t <= r may lie a rounding
    // error farther, and the grown boxes are rounded too.
    let r_near = r + r * 1.0e-3 + 1.0e-5 * max(max(abs(p.x), abs(p.y)), max(abs(p.z), 1.0));
    let inward = CONTACT_INWARD_RAY;
    let outward = CONTACT_OUTWARD_RAY;
    let use_in = (sides & 1u) != 0u;
    let use_out = (sides & 2u) != 0u;
    let none = Probe(RayHit(inf, NONE, 0.0, 0.0, 0u, 0u, 0u, 0u), vec3<f32>(0.0), 0.0, 0.0, false, 0u, NONE);
    // The hits kept between steps: the first ray's (on b, or a's own for volumetric -> cloth)
    // with its direction, and cloth -> volumetric's two rays.
    var first = none;
    var first_dir = n;
    var i = none;
    var o = none;
    // Cloth -> cloth: the sides to cast, those cast, the hint of each.
    var todo = sides;
    var done = 0u;
    var hints = vec2<u32>(hint_in, hint_out);
    var ignore = NONE;
    if a == b {
        ignore = v;
    }
    // The step's trace (body NONE: none) and the step that follows; kept when the step is done
    // again with the straight ray (`straight`).
    var rq = Request(NONE, -n, 0.0, inf, NONE, NONE);
    var next = 8u;
    var straight = false;
    var s = 0u;
    // A cloth vertex's two rays on b (cloth -> volumetric, cloth -> cloth: steps 0 and 1, the
    // same bounds), both cast without hints, are traced together in step 0 where the kernel
    // can (LINE_TRACES): step 1 then takes the second one's probe, kept in `second`.
    let line = LINE_TRACES && hint_in == NONE && hint_out == NONE
        && ((kind == CASE_CV && use_in && use_out) || (kind == CASE_CC && sides == 3u));
    var second = none;
    var lined = false;
    // `may_reach`'s answer for the steps that ask it (0: not asked yet, 1: yes, 2: no).
    var reach_answer = 0u;
    loop {
        if !straight {
            rq = Request(NONE, -n, 0.0, inf, NONE, NONE);
            next = 8u;
            switch kind {
                case CASE_VOLUMETRIC_SELF: {
                    if s == 0u && use_in {
                        rq = Request(a, -n, 0.0, inf, v, hint_in);
                    } else if s == 1u {
                        let t1 = first.hit.t;
                        rq = Request(a, -n, t1 + SELF_HIT_GAP * t1, inf, v, NONE);
                    }
                }
                case CASE_VV, CASE_VC: {
                    if s == 0u {
                        if use_in {
                            if kind == CASE_VV {
                                rq = Request(b, -n, 0.0, inf, NONE, hint_in);
                            } else {
                                rq = Request(a, -n, 0.0, inf, v, hint_exit);
                            }
                        } else {
                            next = 2u;
                        }
                    } else if s == 1u {
                        if kind == CASE_VV {
                            rq = Request(a, -n, 0.0, own_tmax(first.hit.t), v, hint_exit);
                        } else {
                            // Half the exit distance (none when the ray never leaves a).
                            rq = Request(b, -n, 0.0, 0.5 * first.hit.t, NONE, hint_in);
                        }
                    } else if s == 2u {
                        if use_out && ((kind == CASE_VV && predict > 0.0) || (kind == CASE_VC && r > 0.0)) {
                            rq = Request(b, n, 0.0, beyond, NONE, hint_out);
                        }
                    } else if s == 3u {
                        rq = Request(a, first_dir, 0.0, own_tmax(first.hit.t), v, hint_exit);
                    }
                }
                case CASE_CV: {
                    if s == 0u {
                        next = 1u;
                        if use_in {
                            rq = Request(b, -n, 0.0, inf, NONE, hint_in);
                        }
                    } else if s == 1u && use_out {
                        rq = Request(b, n, 0.0, inf, NONE, hint_out);
                    } else if s == 2u {
                        // No trace: the inward hit of step 0 (its hint for a straight ray).
                        next = 3u;
                        rq.hint = hint_in;
                    } else if s == 3u {
                        rq.hint = hint_out;
                    }
                }
                default: {
                    // Cloth -> cloth: the first side still to cast, if any (three rounds at most).
                    if s < 3u {
                        next = s + 1u;
                        let side = s & 1u;
                        if (todo & (1u << side)) != 0u && (done & (1u << side)) == 0u {
                            done |= 1u << side;
                            var dir = -n;
                            if side == 1u {
                                dir = n;
                            }
                            rq = Request(b, dir, 0.0, beyond, ignore, hints[side]);
                        }
                    }
                }
            }
        }
        var pr = none;
        // A ray classified by L (not the straight ray, which goes only to r): not cast where
        // `asks_reach` asks and the body has nothing within the reach (grown by a rounding
        // margin; for a self pair, nothing but the source vertex's triangles). The steps
        // classified by L trace b, or nothing (cloth -> volumetric's: body NONE).
        let by_reach = !straight && length_step(kind, s) && rq.body != NONE
            && asks_reach(body_b, rq.ignore, r_near);
        // Every step that asks it asks the same (body b, p, the reach and the vertex to ignore):
        // answered once a source (a cloth vertex's two sides, cast one by one, ask it twice).
        if by_reach && reach_answer == 0u {
            reach_answer = select(2u, 1u, may_reach(rq.body, p, r_near, rq.ignore));
            // Every step of cloth -> cloth is classified by L and asks it first: no, and none of
            // them finds anything (nor a straight ray of theirs).
            if kind == CASE_CC && reach_answer == 2u {
                return;
            }
        }
        if lined && !straight && s == 1u {
            pr = second;
        } else if rq.body != NONE && (!by_reach || reach_answer == 1u) {
            if line && !straight && s == 0u {
                let both = probe_line(rq.body, p, rq.dir, rq.tmin, rq.tmax, rq.ignore);
                pr = both.front;
                second = both.back;
                lined = true;
            } else {
                pr = probe(rq.body, p, rq.dir, rq.tmin, rq.tmax, rq.ignore, rq.hint);
            }
        }
        if kind == CASE_CV && s >= 2u && !straight {
            pr = i;
            if s == 3u {
                pr = o;
            }
        }
        if kind == CASE_CC && rq.body != NONE && !straight {
            // A walk that found its triangle behind the vertex: the other side is cast too.
            let side = s & 1u;
            let other = 1u - side;
            if pr.outcome == WALK_RANGE && (todo & (1u << other)) == 0u {
                todo |= 1u << other;
                hints[other] = hints[side];
            }
        }
        // A hit beyond the reach with L within it: the step again, with the straight ray from v
        // towards the hit triangle's plane (up to r, on b, walking from the ray's hint or else
        // from the far hit's triangle) in place of this hit.
        if !straight && hits(pr) && pr.hit.t > r && pr.length < r && by_length(kind, s, pr) {
            var m = normalize(pr.face);
            if pr.cosine < 0.0 {
                m = -m;
            }
            var hint = rq.hint;
            if hint == NONE {
                hint = pr.hit.triangle;
            }
            rq = Request(b, m, 0.0, r, ignore, hint);
            straight = true;
            continue;
        }
        straight = false;
        // What the step's hit decides: the next step, and at most one contact (flags 0: none),
        // appended by the one `emit` call below.
        var out = pr;
        var through = false;
        var flags = 0u;
        var exit = NONE;
        switch kind {
            case CASE_VOLUMETRIC_SELF: {
                if s == 0u && hits(pr) && pr.cosine > 0.0 {
                    first = pr;
                    next = 1u;
                } else if s == 1u && hits(pr) && pr.hit.t > first.hit.t
                    && pr.hit.triangle != first.hit.triangle && pr.cosine > 0.0 {
                    out = first;
                    through = true;
                    flags = CONTACT_COLLISION | inward;
                }
            }
            case CASE_VV: {
                if s == 0u || s == 2u {
                    next = s + 2u;
                    let inside = s == 0u && pr.cosine > 0.0;
                    let ahead = s == 2u && pr.cosine < 0.0 && pr.length < predict;
                    if hits(pr) && (inside || ahead) {
                        first = pr;
                        first_dir = rq.dir;
                        next = s + 1u;
                    }
                } else if s == 1u || s == 3u {
                    next = s + 1u;
                    if !blocks(pr.hit, first.hit.t) {
                        out = first;
                        exit = pr.hit.triangle;
                        through = s == 1u;
                        flags = CONTACT_COLLISION | inward;
                        if s == 3u {
                            flags = CONTACT_PREDICTION | outward;
                        }
                    }
                }
            }
            case CASE_VC: {
                if s == 0u && rq.body != NONE {
                    first = pr;
                    next = 1u;
                } else if s == 1u {
                    next = 2u;
                    if hits(pr) {
                        // The own trace went to the exit: the triangle the former bounded
                        // trace (up to twice the hit) found, that is, the exit only when it
                        // lies exactly there, unless exits are remembered.
                        exit = first.hit.triangle;
                        if (params.flags & DETECT_REMEMBER_EXIT) == 0u && first.hit.t != 2.0 * pr.hit.t {
                            exit = NONE;
                        }
                        through = true;
                        flags = CONTACT_COLLISION | inward;
                    }
                } else if s == 2u {
                    let cls = class_of(pr.length, eb, predict);
                    if hits(pr) && cls != 0u {
                        first = pr;
                        first_dir = rq.dir;
                        next = 3u;
                    }
                } else if s == 3u && !blocks(pr.hit, first.hit.t) {
                    out = first;
                    exit = pr.hit.triangle;
                    flags = class_of(first.length, eb, predict) | outward;
                }
            }
            case CASE_CV: {
                if s == 0u {
                    i = pr;
                } else if s == 1u {
                    o = pr;
                    let inside_i = hits(i) && i.cosine > 0.0;
                    let inside_o = hits(o) && o.cosine > 0.0;
                    if inside_o && (!inside_i || o.length < i.length) {
                        through = true;
                        flags = CONTACT_COLLISION | outward;
                    } else if inside_i {
                        out = i;
                        through = true;
                        flags = CONTACT_COLLISION | inward;
                    } else {
                        // Hits of b's outside: classified in steps 2 (inward) and 3 (outward).
                        next = 2u;
                    }
                } else if hits(pr) && pr.hit.t <= r && pr.cosine <= 0.0 {
                    // A hit of b's outside within the reach (or the straight ray's).
                    flags = class_of(pr.length, ea, predict);
                    if flags != 0u {
                        flags |= select(inward, outward, s == 3u);
                    }
                }
            }
            default: {
                if rq.body != NONE && hits(pr) {
                    var ray = inward;
                    if (s & 1u) == 1u {
                        ray = outward;
                    }
                    if (params.flags & DETECT_NO_INVERSION) == 0u && pr.hit.t <= r && inverted(v, b, pr.hit.triangle) {
                        through = true;
                        flags = CONTACT_COLLISION | CONTACT_INVERTED | ray;
                    } else {
                        flags = class_of(pr.length, ea + eb, predict);
                        if flags != 0u {
                            flags |= ray;
                        }
                    }
                }
            }
        }
        if flags != 0u {
            emit(src, out, through, flags, exit);
        }
        if next >= 8u {
            break;
        }
        s = next;
    }
}
