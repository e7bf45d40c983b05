// Shared declarations of raycontact's kernels. Constants (WG_SIZE, TILE, ITEMS, RADIX_BUCKETS,
// LEAF_BIT, NONE, DEGENERATE_KEY, MAX_GROUPS_X, ...) are prepended by the host from
// `raycontact::layout` (`layout::wgsl_prelude`), their one source of truth.

// +infinity, made when the shader runs: WGSL makes a constant expression that evaluates to an
// infinity a shader-creation error (Chrome's Tint rejects `bitcast<f32>(0x7f800000u)`), not a
// value read from a variable.
var<private> INFINITY_BITS: u32 = 0x7f800000u;

fn infinity() -> f32 {
    return bitcast<f32>(INFINITY_BITS);
}

// Where a body lives in the packed buffers. Mirrors `layout::BodyGpu`.
struct BodyGpu {
    vertex_offset: u32,
    vertex_count: u32,
    tri_offset: u32,
    tri_count: u32,
    node_offset: u32,
    tile_offset: u32,
    tile_count: u32,
    flags: u32,
    half_thickness: f32,
    mean_size: f32,
    edge_offset: u32,
    edge_count: u32,
}

// Per-frame state of a body, rebuilt on the GPU. Mirrors `layout::BodyState`.
// `min_key` holds the bitwise complement of the ordered key of the minimum, so that both
// ends of the box reduce with atomicMax from a zero-filled buffer.
struct BodyState {
    min_key: array<atomic<u32>, 3>,
    leaf_count: atomic<u32>,
    max_key: array<atomic<u32>, 3>,
    degenerate_count: atomic<u32>,
}

// Same memory as BodyState, for kernels that only read it.
struct BodyStateRead {
    min_key: array<u32, 3>,
    leaf_count: u32,
    max_key: array<u32, 3>,
    degenerate_count: u32,
}

// Axis-aligned box of a triangle; `flags` bit 0 = degenerate. Mirrors `layout::TriBox`.
struct TriBox {
    min: vec3<f32>,
    flags: u32,
    max: vec3<f32>,
    pad: u32,
}

// Node of the stackless BVH. Mirrors `layout::Node`.
// Internal node: `child` = body-local index of its first (left) child.
// Leaf: `child` = LEAF_BIT | body-local triangle index.
// `escape` = body-local index of the next node in depth-first order once this subtree is done
// (its right sibling, or the right sibling of its nearest ancestor that is a left child); NONE ends.
struct Node {
    min: vec3<f32>,
    child: u32,
    max: vec3<f32>,
    escape: u32,
}

// Counts of the packed scene. Mirrors `layout::FrameParams`.
struct FrameParams {
    vertex_count: u32,
    tri_count: u32,
    tile_count: u32,
    body_count: u32,
}

// Linear workgroup index of a 2D dispatch (x is capped at MAX_GROUPS_X).
fn linear_group(wid: vec3<u32>) -> u32 {
    return wid.x + wid.y * MAX_GROUPS_X;
}

// Workgroup counts (x, y) of a dispatch of `groups` workgroups, y spilling past MAX_GROUPS_X
// (the host's `layout::dispatch_size`, but 0 stays 0).
fn dispatch_xy(groups: u32) -> vec2<u32> {
    if groups > MAX_GROUPS_X {
        return vec2<u32>(MAX_GROUPS_X, (groups + MAX_GROUPS_X - 1u) / MAX_GROUPS_X);
    }
    return vec2<u32>(groups, 1u);
}

// Order-preserving map of a float to an unsigned key (total order for non-NaN values).
// -0 maps to the key of +0, so that the key does not depend on which zero a min/max returned.
fn float_to_key(f: f32) -> u32 {
    var b = bitcast<u32>(f);
    if b == 0x80000000u {
        b = 0u;
    }
    if (b & 0x80000000u) != 0u {
        return ~b;
    }
    return b | 0x80000000u;
}

fn key_to_float(k: u32) -> f32 {
    if (k & 0x80000000u) != 0u {
        return bitcast<f32>(k ^ 0x80000000u);
    }
    return bitcast<f32>(~k);
}

fn body_min(s: BodyStateRead) -> vec3<f32> {
    return vec3<f32>(key_to_float(~s.min_key[0]), key_to_float(~s.min_key[1]), key_to_float(~s.min_key[2]));
}

fn body_max(s: BodyStateRead) -> vec3<f32> {
    return vec3<f32>(key_to_float(s.max_key[0]), key_to_float(s.max_key[1]), key_to_float(s.max_key[2]));
}

// The first fan word of a triangle buffer of `tri_count` packed triangles (after its regions:
// `layout::TRIANGLE_WORDS`); body `b`'s internal node p's is `fan_words(..) + b.tri_offset + p`.
fn fan_words(tri_count: u32) -> u32 {
    return 3u * TRIANGLE_REGIONS * tri_count;
}

// The grid of a body's compact child pairs (`layout::Node`'s doc; CPU twin:
// `raycontact::internals::layout::PairGrid`): `step`, a power of two, and the grid's corner in
// steps, `origin` (whole numbers). A box component is stored as its count q of steps from the
// corner, at most PAIR_Q_MAX, and read as (origin + q) * step: exact (a whole number under 2^24
// times a power of two), so a kernel and its twin read the same floats. `pair_grid` chooses
// the step so that every box within the body's box takes at most PAIR_Q_MAX steps.
struct PairGrid {
    origin: vec3<f32>,
    step: f32,
}

// The smallest e with 2^e >= x for a finite x > 0 (the exponent of a subnormal's bound: -126).
fn ceil_log2(x: f32) -> i32 {
    let b = bitcast<u32>(x);
    return i32((b >> 23u) & 0xffu) - 127 + select(0, 1, (b & 0x7fffffu) != 0u);
}

// The grid of a body whose box is lo..hi (`body_min`, `body_max`): a step of at least 1/8192
// of the longest side, so that the box spans at most 8192 + 2 steps, and of at least
// 2^-23 of the farthest coordinate from 0, so that the corner and every point in steps stay
// under 2^24; at least 2^-100.
fn pair_grid(lo: vec3<f32>, hi: vec3<f32>) -> PairGrid {
    let side = max(hi.x - lo.x, max(hi.y - lo.y, hi.z - lo.z));
    let far = max(max(abs(lo.x), abs(hi.x)), max(max(abs(lo.y), abs(hi.y)), max(abs(lo.z), abs(hi.z))));
    let e = max(max(ceil_log2(side) - 13, ceil_log2(far) - 23), -100);
    let step = bitcast<f32>(u32(e + 127) << 23u);
    // lo / step, exactly (`pair_steps`).
    return PairGrid(floor(lo * bitcast<f32>(u32(127 - e) << 23u)), step);
}

// The steps of box component v (within the grid's box) on axis d: rounded down for a minimum
// (`up` false), up for a maximum, so that the component read back (`pair_side`) holds v's side
// of the box. Exact: v / step is v times the step's inverse (a power of two made from its bits;
// a WGSL division may be off by 2.5 ulp), its floor or ceiling a whole number under 2^24, and
// the corner's whole number of steps taken from that one (not from v / step, whose difference
// with it may round up to a whole number) leaves a whole number under 2^14. (A subnormal v
// flushed to zero is off by less than its own size.)
fn pair_steps(g: PairGrid, d: u32, v: f32, up: bool) -> u32 {
    let s = v * bitcast<f32>(0x7f000000u - bitcast<u32>(g.step));
    return u32(clamp(select(floor(s), ceil(s), up) - g.origin[d], 0.0, f32(PAIR_Q_MAX)));
}

// A word of a compact child pair: the left child's steps (bits 15..28) and the right child's
// (bits 0..13) of one box component, with bit 29 set, so that the word read as a float is a
// normal positive number (`layout::Node` holds the pair's box words as floats).
fn pair_word(left: u32, right: u32) -> u32 {
    return 0x20000000u | (left << 15u) | right;
}

// The corner that three box words (`pair_word`) hold for the child whose steps are at bit
// `shift` of each (15: the left child, 0: the right): (origin + steps) * step on each axis.
fn pair_side(g: PairGrid, words: vec3<u32>, shift: u32) -> vec3<f32> {
    return (g.origin + vec3<f32>((words >> vec3<u32>(shift)) & vec3<u32>(PAIR_Q_MAX))) * g.step;
}

// The boxes of both children of a compact child pair `p` (the left child's min, max, then the
// right's), in grid `g`.
fn pair_boxes(g: PairGrid, p: Node) -> array<vec3<f32>, 4> {
    let lo = bitcast<vec3<u32>>(p.min);
    let hi = bitcast<vec3<u32>>(p.max);
    return array<vec3<f32>, 4>(pair_side(g, lo, 15u), pair_side(g, hi, 15u), pair_side(g, lo, 0u), pair_side(g, hi, 0u));
}

// The grid of a tree without child pairs (one leaf, or a tuning that keeps none).
const ONE_LEAF_GRID = PairGrid(vec3<f32>(0.0), 1.0);
