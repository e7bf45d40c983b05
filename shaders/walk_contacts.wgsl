// Iterative detection (Lehericey et al. 2013, IRTCD): one invocation per contact of the last
// frame (`memory`, the other ping-pong side: `pairs.state.stored[1 - params.side]` of them,
// dispatched indirectly from that side's arguments; both written by `contact_args` at the end
// of that frame). Its ray (the same source vertex, the same side, along the vertex's current
// normal, computed here: `source_normal`) is classified again exactly as the full pass does
// (shared/classify.wgsl), but each trace starts on the triangle the ray hit last frame and walks
// the triangle adjacency (`walk_ray`, shared/walk.wgsl) instead of traversing the BVH: the ray
// on the target from last frame's target triangle, the source body's own trace from last
// frame's exit triangle; the straight ray that confirms a hit beyond the reach (see
// shared/classify.wgsl) from the same triangle as the ray it confirms, or from that ray's hit
// when there is none. A walk that does not hit is cast through the (rebuilt) BVH with
// `params.walk_fallback` = WALK_FALLBACK_BVH, and is a miss with WALK_FALLBACK_DROP (the paper's
// behaviour: the ray is lost until the next full pass); traces without a remembered triangle
// (a volumetric self pair's second hit, an exit never found) are treated alike. Walks cross at
// most ceil(walk_reach / mean_size) edges of the body walked (Eq. 1). The counters (the walk
// outcomes and fallback casts, `pairs.state.walk`, and the contacts walked) are tallied where
// the tuning says (`layout::Tuning::workgroup_tallies`, the WGSL constant WORKGROUP_TALLIES): on
// a GPU in workgroup memory, then added once per workgroup after a barrier, so that the
// detection state's few words take a handful of atomics per workgroup instead of three or four
// from every invocation; on a software adapter with one atomic each (on llvmpipe, which switches
// between the coroutines of the workgroup's SIMD slices at a barrier, the tally was no faster:
// `Tuning::workgroup_tallies`).
// CPU twin: `raycontact::internals::cpu::walk_contacts`.
//!include shared/common.wgsl
//!include shared/contact.wgsl
//!include shared/vertices.wgsl
//!include shared/ray.wgsl
//!include shared/bvh.wgsl
//!include shared/walk.wgsl
//!include shared/classify.wgsl
//!include shared/triangles.wgsl
//!include shared/incidence.wgsl

@group(0) @binding(0) var<uniform> params: DetectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read> vertices: array<f32>;
@group(0) @binding(4) var<storage, read> triangles: array<u32>;
@group(0) @binding(5) var<storage, read> nodes: array<Node>;
@group(0) @binding(6) var<storage, read> memory: array<Contact>;
@group(0) @binding(7) var<storage, read_write> pairs: PairList;
@group(0) @binding(8) var<storage, read_write> contacts: array<Contact>;

// Packed triangles: the size of a region of the triangle buffer (shared/walk.wgsl,
// shared/incidence.wgsl).
fn triangle_count() -> u32 {
    return params.tri_count;
}

// The source's normal, computed here (an iterative pass runs no `vertex_normals`): the same bits
// as `vertex_normals` writes.
fn source_normal(v: u32) -> vec3<f32> {
    return face_sum(v, false).normal;
}

// The counters' numbers: a walk outcome (0..7), then these.
const COUNT_FALLBACK_CAST: u32 = WALK_OUTCOMES;
const COUNT_FALLBACK_HIT: u32 = WALK_OUTCOMES + 1u;
const COUNT_WALKED: u32 = WALK_OUTCOMES + 2u;
const COUNTERS: u32 = WALK_OUTCOMES + 3u;

// The workgroup's tally of each counter (with WORKGROUP_TALLIES).
var<workgroup> wg_counts: array<atomic<u32>, COUNTERS>;

// Adds `n` to counter `what` of the detection state.
fn add_count(what: u32, n: u32) {
    if what < WALK_OUTCOMES {
        atomicAdd(&pairs.state.walk.outcomes[what], n);
    } else if what == COUNT_FALLBACK_CAST {
        atomicAdd(&pairs.state.walk.fallback_casts, n);
    } else if what == COUNT_FALLBACK_HIT {
        atomicAdd(&pairs.state.walk.fallback_hits, n);
    } else {
        atomicAdd(&pairs.state.walked, n);
    }
}

// Counts one of counter `what`: into the workgroup's tally, or straight into the detection state.
fn count(what: u32) {
    if WORKGROUP_TALLIES {
        atomicAdd(&wg_counts[what], 1u);
    } else {
        add_count(what, 1u);
    }
}

// Edges a walk over `body` may cross (Eq. 1 of Lehericey et al. 2013).
fn walk_steps(body: BodyGpu) -> u32 {
    let steps = ceil(params.walk_reach / body.mean_size);
    if !(steps < f32(MAX_WALK_STEPS)) {
        return MAX_WALK_STEPS;
    }
    return u32(steps);
}

// Every ray is walked or cast: a walk is short, and a BVH query would cost it more.
fn may_reach(body: u32, p: vec3<f32>, r: f32, ignore_vertex: u32) -> bool {
    return true;
}

fn trace(body: u32, ray: Ray, ignore_vertex: u32, hint: u32) -> Traced {
    let b = bodies[body];
    var outcome = WALK_NO_START;
    if hint != NONE {
        let w = walk_ray(ray, b, hint, walk_steps(b));
        var own = false;
        if w.outcome == WALK_HIT && ignore_vertex != NONE {
            let g = b.tri_offset + w.triangle;
            own = triangles[3u * g] == ignore_vertex || triangles[3u * g + 1u] == ignore_vertex
                || triangles[3u * g + 2u] == ignore_vertex;
        }
        if w.outcome == WALK_HIT && !own {
            count(WALK_HIT);
            return Traced(RayHit(w.t, w.triangle, w.u, w.v, 0u, w.steps + 1u, 0u, 0u), true, w.steps, WALK_HIT);
        }
        // A walk onto the source vertex's own triangles counts as a loop back to the start.
        outcome = w.outcome;
        if own {
            outcome = WALK_LOOP;
        }
        count(outcome);
    } else {
        count(WALK_NO_START);
    }
    if params.walk_fallback == WALK_FALLBACK_BVH {
        count(COUNT_FALLBACK_CAST);
        let fan = fan_to_pass(ignore_vertex, b, params.tri_count);
        let hit = closest_hit(ray, b, body_state[body].leaf_count, ignore_vertex, fan);
        if hit.triangle != NONE {
            count(COUNT_FALLBACK_HIT);
        }
        return Traced(hit, false, 0u, outcome);
    }
    let miss = RayHit(infinity(), NONE, 0.0, 0.0, 0u, 0u, 0u, 0u);
    return Traced(miss, false, 0u, outcome);
}

// Every trace follows its hint: the classification casts a cloth vertex's rays one by one. (Its
// iterative pass classifies one ray per remembered contact, so never asks for two together.)
const LINE_TRACES = false;

// The two traces one by one, without hints (never asked for: LINE_TRACES is false).
fn trace_line(body: u32, ray: Ray, ignore_vertex: u32) -> TracedLine {
    let back = Ray(ray.origin, ray.tmin, -ray.dir, ray.tmax);
    return TracedLine(trace(body, ray, ignore_vertex, NONE), trace(body, back, ignore_vertex, NONE));
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = linear_group(wid) * WG_SIZE + lid;
    if i < pairs.state.stored[(params.side + 1u) & 1u] {
        recast(i);
    }
    if WORKGROUP_TALLIES {
        workgroupBarrier();
        if lid < COUNTERS {
            let n = atomicLoad(&wg_counts[lid]);
            if n != 0u {
                add_count(lid, n);
            }
        }
    }
}

// Classifies again the ray of remembered contact `i`.
fn recast(i: u32) {
    let m = memory[i];
    // Edge and untangling contacts are not rays: the intersection stages find them again.
    if (m.flags & (CONTACT_EDGE | CONTACT_UNTANGLE)) != 0u {
        return;
    }
    count(COUNT_WALKED);
    let pair = pairs.list[m.pair / 2u];
    var sides = 1u;
    var hint_in = m.target_triangle;
    var hint_out = NONE;
    if (m.flags & CONTACT_OUTWARD_RAY) != 0u {
        sides = 2u;
        hint_in = NONE;
        hint_out = m.target_triangle;
    }
    classify(m.source_body, m.source_vertex, m.target_body, m.pair, pair.prediction, sides, hint_in, hint_out,
        m.exit_triangle);
}
