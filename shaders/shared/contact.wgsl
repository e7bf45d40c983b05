// Declarations shared by the pair and contact kernels.

// An unordered pair of packed bodies, tested in both directions (once when a == b: a
// self-collision pair), with its prediction distance. Mirrors `layout::BodyPair`.
struct BodyPair {
    a: u32,
    b: u32,
    prediction: f32,
    pad: u32,
}

// The reach of a pair with prediction distance `prediction` between bodies of half-thicknesses
// `ea` and `eb` (0 for a volumetric body): how far from a source vertex a ray looks for the other
// body, and how far the broad phase and `ray_sources` grow a box.
fn reach(prediction: f32, ea: f32, eb: f32) -> f32 {
    return max(prediction, ea + eb);
}

// Counters of a detection, zeroed at the start of each (but `pair_count` when the host supplies
// the pairs, and `stored`, which an iterative pass reads). Mirrors `layout::DetectState`;
// `DetectStateRead` is the same memory, read-only. `stored[side]`: the contacts stored on that
// ping-pong side of the contact buffers by the last detection that wrote it (`contact_args`).
struct DetectState {
    pair_count: atomic<u32>,
    sources: atomic<u32>,
    contact_count: atomic<u32>,
    walked: atomic<u32>,
    walk: WalkCounts,
    unreached: atomic<u32>,
    stored: array<u32, 2>,
    pad0: u32,
}

struct DetectStateRead {
    pair_count: u32,
    sources: u32,
    contact_count: u32,
    walked: u32,
    walk: WalkCountsRead,
    unreached: u32,
    stored: array<u32, 2>,
    pad0: u32,
}

// The pair-list buffer: the detection's counters, then the pairs (`layout::PAIRS_OFFSET`), one
// storage buffer, so that a kernel that appends pairs or contacts binds both. `PairListRead` is
// the same memory, read-only.
struct PairList {
    state: DetectState,
    list: array<BodyPair>,
}

struct PairListRead {
    state: DetectStateRead,
    list: array<BodyPair>,
}

// Counters of walks: rays per outcome, then BVH fallback casts and their hits. Mirrors
// `layout::WalkCounts`; `WalkCountsRead` is the same memory, read-only.
struct WalkCounts {
    outcomes: array<atomic<u32>, 8>,
    fallback_casts: atomic<u32>,
    fallback_hits: atomic<u32>,
    pad0: u32,
    pad1: u32,
}

struct WalkCountsRead {
    outcomes: array<u32, 8>,
    fallback_casts: u32,
    fallback_hits: u32,
    pad0: u32,
    pad1: u32,
}

// Mirrors `layout::DetectParams`.
struct DetectParams {
    pair_capacity: u32,
    contact_capacity: u32,
    body_count: u32,
    self_collision: u32,
    prediction: f32,
    walk_fallback: u32,
    walk_reach: f32,
    flags: u32,
    source_capacity: u32,
    vertex_count: u32,
    tri_count: u32,
    side: u32,
}


// A contact found by a ray from `source_vertex` of `source_body` that hit `target_triangle` of
// `target_body` at barycentrics (u, v). Mirrors `layout::ContactGpu`.
struct Contact {
    source_body: u32,
    source_vertex: u32,
    target_body: u32,
    target_triangle: u32,
    source_point: vec3<f32>,
    u: f32,
    target_point: vec3<f32>,
    v: f32,
    normal: vec3<f32>,
    depth: f32,
    ray_length: f32,
    weight: f32,
    flags: u32,
    pair: u32,
    exit_triangle: u32,
    walk_steps: u32,
    pad0: u32,
    pad1: u32,
}

// Contact flags. Mirror `layout::contact_flags`.
const CONTACT_COLLISION: u32 = 1u;
const CONTACT_PREDICTION: u32 = 2u;
const CONTACT_INWARD_RAY: u32 = 4u;
const CONTACT_OUTWARD_RAY: u32 = 8u;
const CONTACT_INVERTED: u32 = 16u;
const CONTACT_WALKED: u32 = 32u;
const CONTACT_EDGE: u32 = 64u;
const CONTACT_UNTANGLE: u32 = 128u;
