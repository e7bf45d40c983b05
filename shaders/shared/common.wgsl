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
