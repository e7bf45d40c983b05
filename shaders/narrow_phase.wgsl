// Ray-traced narrow phase for volumetric bodies (Hermann et al. 2008) and cloth (Lehericey et
// al. 2015), one invocation per (directed pair, source vertex) listed by `ray_sources`. A is
// the source body, B the target; n the unit normal of source vertex v at p;
// e_A, e_B the half-thicknesses (0 for a volumetric body); d the pair's prediction distance and
// r = max(d, e_A + e_B) its reach. Each hit is re-projected onto the hit triangle's unit normal
// m (length L = t |dir . m|) before it is classified (Lehericey 2015, section 3.3). A ray
// classified by L counts a hit within the reach (t <= r) by its L; a hit beyond it with L < r
// only through the straight ray from v towards the hit triangle's plane (up to r), by that
// ray's hit (shared/classify.wgsl says why):
//
// - volumetric -> volumetric: the inward ray (-n) finds B's closest triangle; it must face away
//   from n (the ray leaves B) and A must not be hit first -> collision. With d > 0 the outward
//   ray (+n) finds a triangle of B facing n's way back (B's outside), not behind A,
//   with L < d -> prediction. A self pair (A, A) (Hermann's section 3.3): the inward ray hits
//   A's inward surface twice in a row (ignoring v's triangles) -> collision with the first.
// - volumetric -> cloth: inward ray -> collision when the hit is at most half the exit distance
//   (A traced first, to its exit; B then up to half of it); outward ray (not behind A) ->
//   collision when L < e_B, else prediction when L < d.
// - cloth -> volumetric: both rays, unbounded. When either hits the inside of B (the vertex is
//   inside B) the one with the shorter L is a collision and the other is dropped; otherwise
//   each ray that hits B's outside within r -> collision when L < e_A, else prediction when L < d.
// - cloth -> cloth (and a cloth against itself, ignoring the triangles around v): both rays
//   -> collision when L < e_A + e_B, else prediction when L < d. Inversion (section 3.2): when
//   the hit is within r and v is on the other side of the hit triangle than at the previous
//   positions, the normal is flipped and the contact is a collision, flagged inverted.
//
// A contact's normal is the direction that resolves it for the source vertex: towards the hit
// (across B) for a collision of an inward-facing hit and for an inversion, away from it for a
// contact with a surface in front of v. Its points are moved off cloth mid-surfaces by e:
// source = p - e_A normal, target = hit + e_B normal; depth = (target - source) . normal
// (negative for a prediction: the gap). One invocation per source vertex listed by
// `ray_sources` (those within B's box grown by r), dispatched indirectly from `source_args`.
// Contacts are appended through an atomic counter; past the capacity they are counted only.
// The classification is in shared/classify.wgsl (shared with `walk_contacts`); here the rays go
// through the BVH (`closest_hit`, and a cloth vertex's two rays along its normal together:
// `closest_hits_line`).
// A volumetric vertex's exit trace (its inward ray through its own body, without limit, skipping
// it) is asked by every pair of its body with a cloth (and by every pair of it when exits are
// remembered, and by its self pair): a body wearing three garments asks it three times a pass.
// Its closest hit depends on nothing but the body's positions and the ray, so the first trace
// that casts it keeps its triangle in the exit memo (a word per packed vertex after the source
// list's capacity) and the others test that one triangle for the same t, u, v, in this pass and
// in later ones while the body does not move: before each full pass the scene empties the words
// of the bodies that moved since the last one (all after a new packing; a grown buffer holds
// none), so a static body under moving cloth casts its exit traces once. The memo holds one word
// written with one atomic store, so an invocation reads it unknown (and casts) or known, never
// half written; which one casts first does not matter. On lavapipe `cloth-layers`' ray stage
// took 8-10 % less (3 alternated runs; 20,228 of its 30,342 exit traces a frame answered), the
// other scenes within their noise.
// The sources whose `may_reach` said no (their rays classified by L not cast) are counted into
// `pairs.state.unreached`, tallied per workgroup where the tuning says (WORKGROUP_TALLIES, as
// `walk_contacts`' counters): on a GPU one atomic per workgroup, not one from every such source.
// CPU twin: `raycontact::internals::cpu::narrow_phase` (its `ExitMemo`).
//!include shared/common.wgsl
//!include shared/contact.wgsl
//!include shared/vertices.wgsl
//!include shared/ray.wgsl
//!include shared/bvh.wgsl
//!include shared/bvh_line.wgsl
//!include shared/classify.wgsl

@group(0) @binding(0) var<uniform> params: DetectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read> vertices: array<f32>;
@group(0) @binding(4) var<storage, read> triangles: array<u32>;
@group(0) @binding(5) var<storage, read> nodes: array<Node>;
@group(0) @binding(6) var<storage, read_write> sources: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> pairs: PairList;
@group(0) @binding(8) var<storage, read_write> contacts: array<Contact>;

// The exit memo's word of packed vertex v, after the source list: 0 while v's exit trace is not
// known, 1 when it misses, its hit triangle (body-local) plus 2 otherwise.
fn exit_word(v: u32) -> u32 {
    return 2u * params.source_capacity + v;
}

// Whether a trace is vertex v's exit trace: its inward ray (from its position, along minus its
// normal, from 0 without limit) on its own volumetric body, skipping v.
fn is_exit_trace(b: BodyGpu, ray: Ray, v: u32) -> bool {
    if v == NONE || v - b.vertex_offset >= b.vertex_count || (b.flags & BODY_CLOTH) != 0u {
        return false;
    }
    return ray.tmin == 0.0 && ray.tmax == infinity() && all(ray.origin == vertex_position(v))
        && all(ray.dir == -source_normal(v));
}

fn trace(body: u32, ray: Ray, ignore_vertex: u32, hint: u32) -> Traced {
    let b = bodies[body];
    let exit = is_exit_trace(b, ray, ignore_vertex);
    if exit {
        let code = atomicLoad(&sources[exit_word(ignore_vertex)]);
        if code == 1u {
            return Traced(RayHit(infinity(), NONE, 0.0, 0.0, 0u, 0u, 0u, 0u), false, 0u, NONE);
        }
        if code > 1u {
            // The closest hit is that triangle's: its test gives the walk's t, u, v. (A word
            // the ray no longer hits, which emptying the moved bodies' words leaves none of,
            // would be cast again.)
            let tri = code - 2u;
            let h = leaf_hit(ray, ray_axes(ray.dir), b, tri, ignore_vertex, ray.tmax);
            if h.w > 0.0 {
                return Traced(RayHit(h.x, tri, h.y, h.z, 0u, 1u, 0u, 0u), false, 0u, NONE);
            }
        }
    }
    let fan = fan_to_pass(ignore_vertex, b, params.tri_count);
    let hit = closest_hit(ray, b, body_state[body].leaf_count, ignore_vertex, fan);
    if exit {
        atomicStore(&sources[exit_word(ignore_vertex)], select(hit.triangle + 2u, 1u, hit.triangle == NONE));
    }
    return Traced(hit, false, 0u, NONE);
}

// A cloth vertex's two rays in one walk of the BVH where the tuning says so (`Tuning::line_walks`:
// on a GPU, not on a software adapter).
const LINE_TRACES = LINE_WALKS;

fn trace_line(body: u32, ray: Ray, ignore_vertex: u32) -> TracedLine {
    let b = bodies[body];
    let fan = fan_to_pass(ignore_vertex, b, params.tri_count);
    let hits = closest_hits_line(ray, b, body_state[body].leaf_count, ignore_vertex, fan);
    return TracedLine(Traced(hits.front, false, 0u, NONE), Traced(hits.back, false, 0u, NONE));
}

// The workgroup's sources that `may_reach` turned away (with WORKGROUP_TALLIES).
var<workgroup> wg_unreached: atomic<u32>;

// `classify` asks it at most once a source: a no is counted here.
fn may_reach(body: u32, p: vec3<f32>, r: f32, ignore_vertex: u32) -> bool {
    // Another body's question by the leaf boxes alone; a self pair's by the triangles.
    let leaves = body_state[body].leaf_count;
    let near = other_near(p, r, ignore_vertex, ignore_vertex != NONE, bodies[body], leaves);
    if !near {
        if WORKGROUP_TALLIES {
            atomicAdd(&wg_unreached, 1u);
        } else {
            atomicAdd(&pairs.state.unreached, 1u);
        }
    }
    return near;
}

fn source_normal(v: u32) -> vec3<f32> {
    return vertex_in(VERTEX_NORMALS, v);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = linear_group(wid) * WG_SIZE + lid;
    if i < min(atomicLoad(&pairs.state.sources), params.source_capacity) {
        classify_source(i);
    }
    if WORKGROUP_TALLIES {
        workgroupBarrier();
        if lid == 0u {
            let n = atomicLoad(&wg_unreached);
            if n != 0u {
                atomicAdd(&pairs.state.unreached, n);
            }
        }
    }
}

// Classifies source `i` of the list, both rays.
fn classify_source(i: u32) {
    let source = vec2<u32>(atomicLoad(&sources[2u * i]), atomicLoad(&sources[2u * i + 1u]));
    let k = source.x;
    let pair = pairs.list[k / 2u];
    var a = pair.a;
    var b = pair.b;
    if (k & 1u) == 1u {
        a = pair.b;
        b = pair.a;
    }
    classify(a, source.y, b, k, pair.prediction, 3u, NONE, NONE, NONE);
}
