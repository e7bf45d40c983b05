//! Data layout shared by the WGSL kernels and their CPU twins: constants, and the `#[repr(C)]`
//! Pod structs that mirror WGSL structs field for field.
//!
//! This module is the one source of truth for workgroup sizes and tile sizes: the host prepends
//! [`wgsl_prelude`] to every kernel, and the integration tests check every struct here against
//! naga's reflection of the WGSL declaration of the same name.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

/// Invocations per workgroup of every kernel.
pub const WG_SIZE: u32 = 256;
/// Elements handled by one invocation of a tiled kernel.
pub const ITEMS: u32 = 16;
/// Elements in a tile: one workgroup of a tiled kernel handles one tile of one body.
pub const TILE: u32 = WG_SIZE * ITEMS;
/// Bits sorted by one radix-sort pass.
pub const RADIX_BITS: u32 = 4;
/// Buckets of one radix-sort pass.
pub const RADIX_BUCKETS: u32 = 1 << RADIX_BITS;
/// Passes of a full 32-bit radix sort.
pub const SORT_PASSES: u32 = 32 / RADIX_BITS;
/// Set in [`Node::child`] of a leaf; the low bits are then the body-local triangle index.
pub const LEAF_BIT: u32 = 0x8000_0000;
/// "No node / no triangle".
pub const NONE: u32 = u32::MAX;
/// Sort key of a degenerate triangle (sorts after every 30-bit Morton code).
pub const DEGENERATE_KEY: u32 = u32::MAX;
/// Entries of the short traversal stack of a ray query (see `closest_hit` in
/// `shaders/shared/bvh.wgsl`); past it a query falls back to a stackless walk, never misses.
pub const SHORT_STACK: u32 = 16;
/// Workgroups per dispatch along x; larger dispatches spill into y.
pub const MAX_GROUPS_X: u32 = 65535;
/// A triangle with `|e1 x e2|^2 <= DEGENERATE_SIN2 * |e1|^2 |e2|^2` (the sine of its angle at
/// the first vertex below 1e-6) is degenerate: zero area up to rounding.
pub const DEGENERATE_SIN2: f32 = 1.0e-12;
/// `1/3` rounded to f32, as the Morton kernel and its twin use it.
pub const ONE_THIRD: f32 = 1.0 / 3.0;
/// Volumetric self-collision: the second inward-facing hit is searched from `t1 (1 + SELF_HIT_GAP)`
/// past the first at `t1`, so that the first triangle's neighbours across an edge it shares
/// with the ray are not taken for a second surface.
pub const SELF_HIT_GAP: f32 = 1e-4;
/// Dynamic-offset stride of per-pass uniforms (the WebGPU minimum uniform offset alignment).
pub const UNIFORM_STRIDE: u64 = 256;

/// WGSL source of the constants above, prepended to every kernel.
pub fn wgsl_prelude() -> String {
    format!(
        "const WG_SIZE: u32 = {WG_SIZE}u;\n\
         const ITEMS: u32 = {ITEMS}u;\n\
         const TILE: u32 = {TILE}u;\n\
         const RADIX_BUCKETS: u32 = {RADIX_BUCKETS}u;\n\
         const RADIX_MATRIX: u32 = {matrix}u;\n\
         const LEAF_BIT: u32 = {LEAF_BIT:#x}u;\n\
         const NONE: u32 = {NONE:#x}u;\n\
         const DEGENERATE_KEY: u32 = {DEGENERATE_KEY:#x}u;\n\
         const MAX_GROUPS_X: u32 = {MAX_GROUPS_X}u;\n\
         const SHORT_STACK: u32 = {SHORT_STACK}u;\n\
         const DEGENERATE_SIN2: f32 = {DEGENERATE_SIN2:e};\n\
         const ONE_THIRD: f32 = {third};\n\
         const SELF_HIT_GAP: f32 = {gap};\n\
         const BODY_CLOTH: u32 = {BODY_CLOTH}u;\n\
         const SELF_CLOTH: u32 = {SELF_CLOTH}u;\n\
         const SELF_VOLUMETRIC: u32 = {SELF_VOLUMETRIC}u;\n\
         const DETECT_REMEMBER_EXIT: u32 = {DETECT_REMEMBER_EXIT}u;\n{walk}",
        matrix = RADIX_BUCKETS * WG_SIZE,
        third = bits_literal(ONE_THIRD),
        gap = bits_literal(SELF_HIT_GAP),
        walk = walk_prelude(),
    )
}

/// A WGSL literal for exactly this f32 (Rust's shortest round-trip form).
fn bits_literal(x: f32) -> String {
    format!("{x:?}f")
}

/// Where a body lives in the packed scene buffers (WGSL `BodyGpu`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BodyGpu {
    /// First vertex of the body in the packed vertex buffers.
    pub vertex_offset: u32,
    /// Vertices of the body.
    pub vertex_count: u32,
    /// First triangle of the body in the packed triangle buffers.
    pub tri_offset: u32,
    /// Triangles of the body.
    pub tri_count: u32,
    /// First node of the body's BVH (`2 * tri_offset`); the body owns `2 * tri_count` nodes.
    pub node_offset: u32,
    /// First tile of the body.
    pub tile_offset: u32,
    /// Tiles of the body: `ceil(tri_count / TILE)`.
    pub tile_count: u32,
    /// Body flags: [`BODY_CLOTH`] for a cloth, 0 for a volumetric body.
    pub flags: u32,
    /// Half-thickness `e` of a cloth (0 for a volumetric body).
    pub half_thickness: f32,
    /// Mean triangle size of the body as added (the mean edge length,
    /// [`crate::adjacency::mean_triangle_size`]): iterative detection's walks over it cross at
    /// most `ceil(confidence × threshold / mean_size)` edges (Eq. 1 of Lehericey et al. 2013).
    pub mean_size: f32,
}

/// [`BodyGpu::flags`] bit of a cloth (WGSL `BODY_CLOTH`).
pub const BODY_CLOTH: u32 = 1;

/// Per-frame state of a body, built on the GPU (WGSL `BodyState` / `BodyStateRead`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct BodyState {
    /// Bitwise complement of the ordered keys of the box minimum.
    pub min_key: [u32; 3],
    /// Non-degenerate triangles: the leaves of the body's BVH.
    pub leaf_count: u32,
    /// Ordered keys of the box maximum.
    pub max_key: [u32; 3],
    /// Degenerate triangles, kept out of the BVH.
    pub degenerate_count: u32,
}

impl BodyState {
    /// The body's box (over its non-degenerate triangles), or `None` when it has none.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        if self.leaf_count == 0 {
            return None;
        }
        let lo = Vec3::new(
            key_to_float(!self.min_key[0]),
            key_to_float(!self.min_key[1]),
            key_to_float(!self.min_key[2]),
        );
        let hi = Vec3::new(
            key_to_float(self.max_key[0]),
            key_to_float(self.max_key[1]),
            key_to_float(self.max_key[2]),
        );
        Some((lo, hi))
    }
}

/// Order-preserving map from a float to a `u32` key (WGSL `float_to_key`).
/// `-0.0` maps to the key of `+0.0`.
pub fn float_to_key(f: f32) -> u32 {
    let b = match f.to_bits() {
        0x8000_0000 => 0,
        b => b,
    };
    if b & 0x8000_0000 != 0 { !b } else { b | 0x8000_0000 }
}

/// Inverse of [`float_to_key`].
pub fn key_to_float(k: u32) -> f32 {
    if k & 0x8000_0000 != 0 { f32::from_bits(k ^ 0x8000_0000) } else { f32::from_bits(!k) }
}

/// Box of a triangle (WGSL `TriBox`); `flags` bit 0 marks a degenerate triangle.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct TriBox {
    /// Minimum corner.
    pub min: Vec3,
    /// Bit 0: degenerate.
    pub flags: u32,
    /// Maximum corner.
    pub max: Vec3,
    /// Padding.
    pub pad: u32,
}

/// Node of the stackless BVH (WGSL `Node`), 32 bytes.
///
/// Body-local numbering: internal nodes `0 ..= n-2` (the root is 0), leaves `n-1 ..= 2n-2` in
/// Morton order, where `n` is the body's leaf count; with `n == 1` the root is the only leaf.
/// A depth-first walk needs no stack: from a node whose box the ray hits go to `child` (an
/// internal node) or test the triangle (a leaf) and go to `escape`; from any other node go to
/// `escape`. [`NONE`] ends the walk.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Node {
    /// Minimum corner of the box.
    pub min: Vec3,
    /// Internal node: the body-local index of its first child. Leaf: [`LEAF_BIT`] | triangle.
    pub child: u32,
    /// Maximum corner of the box.
    pub max: Vec3,
    /// The next node in depth-first order once this subtree is done, or [`NONE`].
    pub escape: u32,
}

impl Node {
    /// Whether the node is a leaf.
    pub fn is_leaf(&self) -> bool {
        self.child & LEAF_BIT != 0 && self.child != NONE
    }

    /// The body-local triangle of a leaf.
    pub fn triangle(&self) -> Option<u32> {
        self.is_leaf().then_some(self.child & !LEAF_BIT)
    }
}

/// Counts of the packed scene (WGSL `FrameParams`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct FrameParams {
    /// Vertices of all bodies.
    pub vertex_count: u32,
    /// Triangles of all bodies.
    pub tri_count: u32,
    /// Tiles of all bodies.
    pub tile_count: u32,
    /// Bodies.
    pub body_count: u32,
}

/// A segment of a segmented radix sort (WGSL `SortSegment`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct SortSegment {
    /// First element; segments are packed in order from 0.
    pub offset: u32,
    /// Elements.
    pub count: u32,
    /// First tile.
    pub tile_offset: u32,
    /// Tiles: `ceil(count / TILE)`.
    pub tile_count: u32,
}

/// Parameters of one radix-sort pass (WGSL `SortPass`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct SortPass {
    /// Bit position of the digit.
    pub shift: u32,
    /// Tiles of all segments.
    pub tile_count: u32,
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
}

/// A ray segment `origin + t * dir`, `t` in `[tmin, tmax]` (WGSL `Ray`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Ray {
    /// Origin.
    pub origin: Vec3,
    /// Smallest accepted `t`.
    pub tmin: f32,
    /// Direction (need not be normalised; `t` is in units of it).
    pub dir: Vec3,
    /// Largest accepted `t`.
    pub tmax: f32,
}

impl Ray {
    /// A ray from `origin` along `dir` over `[0, inf)`.
    pub fn new(origin: Vec3, dir: Vec3) -> Self {
        Self { origin, tmin: 0.0, dir, tmax: f32::INFINITY }
    }
}

/// Closest hit of a ray (WGSL `RayHit`). A miss has `triangle == NONE` and `t == inf`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct RayHit {
    /// Ray parameter of the hit.
    pub t: f32,
    /// Body-local triangle index, or [`NONE`].
    pub triangle: u32,
    /// Barycentric weight of the triangle's second vertex.
    pub u: f32,
    /// Barycentric weight of the triangle's third vertex.
    pub v: f32,
    /// BVH nodes whose box was tested.
    pub nodes_visited: u32,
    /// Triangles tested.
    pub triangles_tested: u32,
    /// 1 when the short traversal stack overflowed and the query finished with a stackless walk
    /// (it still finds the closest hit).
    pub fallback: u32,
    /// Padding.
    pub pad: u32,
}

impl RayHit {
    /// A miss, before any node is visited.
    pub const MISS: RayHit = RayHit {
        t: f32::INFINITY,
        triangle: NONE,
        u: 0.0,
        v: 0.0,
        nodes_visited: 0,
        triangles_tested: 0,
        fallback: 0,
        pad: 0,
    };

    /// Whether the ray hit a triangle.
    pub fn is_hit(&self) -> bool {
        self.triangle != NONE
    }
}

/// Parameters of a ray-cast query (WGSL `RaycastParams`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct RaycastParams {
    /// Packed index of the body.
    pub body: u32,
    /// Rays in the batch.
    pub ray_count: u32,
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
}

/// An unordered pair of packed bodies (WGSL `BodyPair`); the narrow phase tests it both ways.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BodyPair {
    /// Packed index of the first body.
    pub a: u32,
    /// Packed index of the second body (`a` itself for a self-collision pair).
    pub b: u32,
    /// Prediction distance of the pair: outward rays find predictions up to this length.
    pub prediction: f32,
    /// Padding.
    pub pad: u32,
}

/// Counters of a detection (WGSL `DetectState`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct DetectState {
    /// Pairs found (or given), including any past the capacity.
    pub pair_count: u32,
    /// Source vertices of the narrow phase (those within reach of the other body's box, by
    /// `ray_sources`), including any past the capacity.
    pub sources: u32,
    /// Contacts found, including any past the capacity.
    pub contact_count: u32,
    /// Rays of the last frame's contacts re-cast by iterative detection (0 in a full pass).
    pub walked: u32,
    /// Outcomes of the walks of iterative detection, and its fallback casts.
    pub walk: WalkCounts,
}

/// Parameters of a detection (WGSL `DetectParams`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct DetectParams {
    /// Capacity of the pair list.
    pub pair_capacity: u32,
    /// Capacity of the contact buffer.
    pub contact_capacity: u32,
    /// Packed bodies.
    pub body_count: u32,
    /// Which self-collision pairs the broad phase adds: [`SELF_CLOTH`] and [`SELF_VOLUMETRIC`].
    pub self_collision: u32,
    /// Prediction distance of the pairs the broad phase finds.
    pub prediction: f32,
    /// Iterative detection: what a walk that does not hit does ([`WALK_FALLBACK_BVH`] or
    /// [`WALK_FALLBACK_DROP`]).
    pub walk_fallback: u32,
    /// Iterative detection: `confidence × displacement threshold`, the reach of a walk (its
    /// steps are this over the target's [`BodyGpu::mean_size`]).
    pub walk_reach: f32,
    /// Bit 0: trace each volumetric source body to where the ray leaves it (unbounded), so that
    /// its contacts remember that triangle for the next frames' walks.
    pub flags: u32,
    /// Capacity of the list of source vertices (`ray_sources`).
    pub source_capacity: u32,
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
    /// Padding.
    pub pad2: u32,
}

/// [`DetectParams::flags`] bit: remember where each ray leaves its source body.
pub const DETECT_REMEMBER_EXIT: u32 = 1;

/// [`DetectParams::self_collision`] bit: the broad phase adds (C, C) for every cloth C.
pub const SELF_CLOTH: u32 = 1;
/// [`DetectParams::self_collision`] bit: the broad phase adds (V, V) for every volumetric V.
pub const SELF_VOLUMETRIC: u32 = 2;

/// Bits of [`crate::Contact::flags`] and [`ContactGpu::flags`] (WGSL `CONTACT_*`).
pub mod contact_flags {
    /// A collision: the source vertex is in contact with the target body (inside it, or
    /// closer to a cloth than the thicknesses allow).
    pub const COLLISION: u32 = 1;
    /// A prediction: a surface within the pair's prediction distance, not yet in contact.
    pub const PREDICTION: u32 = 2;
    /// Found by the inward ray (along minus the source vertex's normal).
    pub const INWARD_RAY: u32 = 4;
    /// Found by the outward ray (along the source vertex's normal).
    pub const OUTWARD_RAY: u32 = 8;
    /// The source vertex changed side of the hit triangle since the previous frame (cloth
    /// against cloth): the normal is flipped and the contact is a collision.
    pub const INVERTED: u32 = 16;
    /// Found by walking the triangle adjacency from the previous hit (iterative detection).
    pub const WALKED: u32 = 32;
}

/// A contact as the GPU writes it (WGSL `Contact`), 96 bytes: a ray from `source_vertex` of
/// `source_body` hit `target_triangle` of `target_body` at barycentrics (`u`, `v`). Bodies are
/// packed indices here; [`crate::Contact`] names them by [`crate::BodyId`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ContactGpu {
    /// Packed index of the body the ray starts from.
    pub source_body: u32,
    /// Body-local vertex the ray starts from.
    pub source_vertex: u32,
    /// Packed index of the body the ray hit.
    pub target_body: u32,
    /// Body-local triangle the ray hit.
    pub target_triangle: u32,
    /// The source vertex.
    pub source_point: Vec3,
    /// Barycentric weight of the hit triangle's second vertex.
    pub u: f32,
    /// The hit point on the target body.
    pub target_point: Vec3,
    /// Barycentric weight of the hit triangle's third vertex.
    pub v: f32,
    /// Unit direction that resolves the contact for the source vertex (see [`crate::Contact`]).
    pub normal: Vec3,
    /// Penetration depth along `normal` (negative for a prediction).
    pub depth: f32,
    /// Length of the ray from the source vertex to the hit.
    pub ray_length: f32,
    /// `|cos α|` between the ray and the hit triangle's normal.
    pub weight: f32,
    /// [`contact_flags`].
    pub flags: u32,
    /// The directed pair that found it: `2 k` for `pairs[k].a -> pairs[k].b`, `2 k + 1` for the
    /// reverse, in the frame's pair list.
    pub pair: u32,
    /// The source body's triangle where the ray leaves it (Hermann's second condition), or
    /// [`NONE`] when not traced; iterative detection walks from it in the next frames.
    pub exit_triangle: u32,
    /// Edges the walk to `target_triangle` crossed (iterative detection; 0 in a full pass).
    pub walk_steps: u32,
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
}

/// Workgroup counts of a dispatch of `groups` workgroups, spilling into y past [`MAX_GROUPS_X`].
pub fn dispatch_size(groups: u32) -> (u32, u32) {
    if groups <= MAX_GROUPS_X { (groups.max(1), 1) } else { (MAX_GROUPS_X, groups.div_ceil(MAX_GROUPS_X)) }
}

/// Tiles needed for `n` elements.
pub fn tiles_for(n: u32) -> u32 {
    n.div_ceil(TILE)
}

/// Adjacency entry of an edge used by one triangle only (no neighbour across it).
pub const BOUNDARY: u32 = 0xFFFF_FFFE;
/// Adjacency entry of an edge used by three or more triangles (or twice by the same degenerate
/// triangle): no single neighbour across it.
pub const NON_MANIFOLD: u32 = 0xFFFF_FFFD;

/// Outcome of a walk ([`WalkHit::outcome`]): the walk reached a triangle the ray hits within
/// `[tmin, tmax]`.
pub const WALK_HIT: u32 = 0;
/// Outcome of a walk: the edge to cross is a boundary or non-manifold edge.
pub const WALK_BOUNDARY: u32 = 1;
/// Outcome of a walk: the next triangle is one of the last [`WALK_HISTORY`] visited. The edge
/// choice depends only on the ray and the triangle, so a revisit means the walk would cycle
/// forever (a ping-pong across one edge is the shortest such cycle).
pub const WALK_LOOP: u32 = 2;
/// Outcome of a walk: it would have to cross more than `max_steps` edges.
pub const WALK_STEPS: u32 = 3;
/// Outcome of a walk: the ray's line crosses the current triangle, but behind `tmin` or beyond
/// `tmax` (the paper's "ray behind triangle"): the walk stops there, a miss.
pub const WALK_RANGE: u32 = 4;
/// Outcome of a walk: the ray is parallel to the current triangle's plane (or the triangle is
/// degenerate): no edge can be chosen.
pub const WALK_PARALLEL: u32 = 5;
/// Outcome of a walk: the ray had no start triangle ([`NONE`]).
pub const WALK_NO_START: u32 = 6;
/// Outcome codes (the slots of [`WalkCounts::outcomes`]; the last slot is unused).
pub const WALK_OUTCOMES: u32 = 8;
/// Triangles a walk remembers to detect a loop: cycles of up to this length end as
/// [`WALK_LOOP`]; longer ones run out of steps.
pub const WALK_HISTORY: u32 = 8;
/// Largest `max_steps` of a walk (llvmpipe caps every shader loop at 65,535 iterations).
pub const MAX_WALK_STEPS: u32 = 1 << 15;
/// [`WalkParams::fallback`]: cast the ray through the BVH when the walk does not hit.
pub const WALK_FALLBACK_BVH: u32 = 0;
/// [`WalkParams::fallback`]: drop the ray until the next full pass (the paper's behaviour).
pub const WALK_FALLBACK_DROP: u32 = 1;

/// WGSL source of the walk's constants, part of [`wgsl_prelude`].
fn walk_prelude() -> String {
    format!(
        "const BOUNDARY: u32 = {BOUNDARY:#x}u;\n\
         const NON_MANIFOLD: u32 = {NON_MANIFOLD:#x}u;\n\
         const WALK_HIT: u32 = {WALK_HIT}u;\n\
         const WALK_BOUNDARY: u32 = {WALK_BOUNDARY}u;\n\
         const WALK_LOOP: u32 = {WALK_LOOP}u;\n\
         const WALK_STEPS: u32 = {WALK_STEPS}u;\n\
         const WALK_RANGE: u32 = {WALK_RANGE}u;\n\
         const WALK_PARALLEL: u32 = {WALK_PARALLEL}u;\n\
         const WALK_NO_START: u32 = {WALK_NO_START}u;\n\
         const WALK_OUTCOMES: u32 = {WALK_OUTCOMES}u;\n\
         const WALK_HISTORY: u32 = {WALK_HISTORY}u;\n\
         const MAX_WALK_STEPS: u32 = {MAX_WALK_STEPS}u;\n\
         const WALK_FALLBACK_BVH: u32 = {WALK_FALLBACK_BVH}u;\n\
         const WALK_FALLBACK_DROP: u32 = {WALK_FALLBACK_DROP}u;\n"
    )
}

/// Result of one walk (WGSL `WalkHit`), 32 bytes: the hit the walk found or, when it did not
/// hit and the fallback is the BVH, the BVH's closest hit; with how the walk ended.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct WalkHit {
    /// Ray parameter of the hit; `inf` on a miss.
    pub t: f32,
    /// Body-local triangle hit, or [`NONE`].
    pub triangle: u32,
    /// Barycentric weight of the triangle's second vertex.
    pub u: f32,
    /// Barycentric weight of the triangle's third vertex.
    pub v: f32,
    /// How the walk ended: [`WALK_HIT`], [`WALK_BOUNDARY`], [`WALK_LOOP`], [`WALK_STEPS`],
    /// [`WALK_RANGE`], [`WALK_PARALLEL`] or [`WALK_NO_START`].
    pub outcome: u32,
    /// Edges the walk crossed (triangles tested: `steps + 1`, none without a start).
    pub steps: u32,
    /// The triangle the walk ended on (the hit, or where it stopped), or [`NONE`] without a
    /// start.
    pub last: u32,
    /// 1 when `t`, `triangle`, `u`, `v` come from the BVH fallback, 0 when from the walk.
    pub bvh: u32,
}

impl WalkHit {
    /// Whether the ray hit a triangle (by the walk or by the fallback).
    pub fn is_hit(&self) -> bool {
        self.triangle != NONE
    }
}

/// Counters of a batch of walks (WGSL `WalkCounts`, atomics there), 48 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct WalkCounts {
    /// Rays per outcome, indexed by the outcome code ([`WALK_HIT`] ...).
    pub outcomes: [u32; 8],
    /// Rays cast through the BVH because their walk did not hit (fallback [`WALK_FALLBACK_BVH`]).
    pub fallback_casts: u32,
    /// Of those, the rays the BVH found a hit for.
    pub fallback_hits: u32,
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
}

impl WalkCounts {
    /// The counters of these walk results, as the kernel counts them.
    pub fn of(hits: &[WalkHit]) -> Self {
        let mut c = WalkCounts::default();
        for h in hits {
            c.add(h);
        }
        c
    }

    /// Counts one walk result.
    pub fn add(&mut self, h: &WalkHit) {
        if let Some(slot) = self.outcomes.get_mut(h.outcome as usize) {
            *slot += 1;
        }
        if h.bvh != 0 {
            self.fallback_casts += 1;
            self.fallback_hits += u32::from(h.is_hit());
        }
    }

    /// Adds another set of counters.
    pub fn add_counts(&mut self, other: &WalkCounts) {
        for (a, b) in self.outcomes.iter_mut().zip(other.outcomes) {
            *a += b;
        }
        self.fallback_casts += other.fallback_casts;
        self.fallback_hits += other.fallback_hits;
    }

    /// Rays whose walk ended with `outcome`.
    pub fn outcome(&self, outcome: u32) -> u32 {
        self.outcomes.get(outcome as usize).copied().unwrap_or(0)
    }

    /// Rays counted.
    pub fn total(&self) -> u32 {
        self.outcomes.iter().sum()
    }
}

/// Parameters of a batch of walks (WGSL `WalkParams`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct WalkParams {
    /// Packed index of the body.
    pub body: u32,
    /// Rays in the batch.
    pub ray_count: u32,
    /// Most edges one walk crosses (at most [`MAX_WALK_STEPS`]).
    pub max_steps: u32,
    /// [`WALK_FALLBACK_BVH`] or [`WALK_FALLBACK_DROP`].
    pub fallback: u32,
}

const _: () = assert!(std::mem::size_of::<ContactGpu>() == 96);
