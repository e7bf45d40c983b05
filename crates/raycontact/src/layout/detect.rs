//! Detection: the pair list, the counters and parameters of a detection, and the contacts
//! it writes (WGSL `shared/contact.wgsl`).

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

use super::WalkCounts;

/// Volumetric self-collision: the second inward-facing hit is searched from `t1 (1 + SELF_HIT_GAP)`
/// past the first at `t1`, so that the first triangle's neighbours across an edge it shares
/// with the ray are not taken for a second surface.
pub const SELF_HIT_GAP: f32 = 1e-4;

/// A cloth's self pair asks whether its rays can find anything (a triangle without the source
/// vertex within the reach of the vertex: WGSL `may_reach` with that vertex ignored) before
/// casting them, where this many of the cloth's mean edge lengths (`BodyGpu::mean_size`)
/// exceed the reach: on a mesh that coarse the triangles next to a vertex's own lie beyond the
/// reach (on a flat grid with diagonals, the nearest lies `0.62` mean edges away, on equilateral
/// triangles `0.87`), so the answer is often no. On a finer one it is almost always yes, and
/// the question would only add to the rays.
pub const SELF_REACH_SIZE: f32 = 0.6;

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
    /// Sources of a full pass whose rays classified by their re-projected length were not cast:
    /// the target had nothing within the reach of the vertex (WGSL `may_reach` said no; asked
    /// once a source). 0 in an iterative pass, which casts or walks every ray.
    pub unreached: u32,
    /// Contacts stored on each ping-pong side of the contact buffers by the last detection that
    /// wrote it (`min(contact_count, capacity)`, written by `contact_args` with the indirect
    /// arguments): the iterative pass walks that many of the other side's contacts. Not reset
    /// by an iterative pass, which reads it.
    pub stored: [u32; 2],
    /// Padding.
    pub pad0: u32,
}

/// Bytes of the [`DetectState`] at the head of the pair-list buffer: the pairs
/// ([`BodyPair`]) follow it (WGSL `PairList`), so that a kernel that appends pairs or contacts
/// binds the counters and the pairs as one storage buffer.
pub const PAIRS_OFFSET: u64 = std::mem::size_of::<DetectState>() as u64;

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
    /// Iterative detection: what a walk that does not hit does
    /// ([`WALK_FALLBACK_BVH`](super::WALK_FALLBACK_BVH) or
    /// [`WALK_FALLBACK_DROP`](super::WALK_FALLBACK_DROP)).
    pub walk_fallback: u32,
    /// Iterative detection: `confidence × displacement threshold`, the reach of a walk (its
    /// steps are this over the target's [`BodyGpu::mean_size`](super::BodyGpu::mean_size)).
    pub walk_reach: f32,
    /// Bit 0 ([`DETECT_REMEMBER_EXIT`]): trace each volumetric source body to where the ray
    /// leaves it (unbounded), so that its contacts remember that triangle for the next frames'
    /// walks. Bit 1 ([`DETECT_NO_INVERSION`]): no inversion handling. Bit 2
    /// ([`DETECT_BROAD_IN_TILES`]): `pair_tiles` runs the broad phase.
    pub flags: u32,
    /// Capacity of the list of source vertices (`ray_sources`).
    pub source_capacity: u32,
    /// Packed vertices: the size of a region of the vertex buffer
    /// ([`VERTEX_REGIONS`](super::VERTEX_REGIONS)).
    pub vertex_count: u32,
    /// Packed triangles: the size of a region of the triangle buffer
    /// ([`TRIANGLE_REGIONS`](super::TRIANGLE_REGIONS)).
    pub tri_count: u32,
    /// The ping-pong side of the contact buffers this detection writes (0 or 1; an iterative
    /// pass reads the other).
    pub side: u32,
}

/// [`DetectParams::flags`] bit: remember where each ray leaves its source body.
pub const DETECT_REMEMBER_EXIT: u32 = 1;
/// [`DetectParams::flags`] bit: no inversion handling (cloth against cloth hits are classified
/// by their re-projected length alone, never flagged `INVERTED`).
pub const DETECT_NO_INVERSION: u32 = 2;
/// [`DetectParams::flags`] bit: `pair_tiles` runs the broad phase's test over every pair of
/// bodies in its one workgroup before the layout, and `broad_phase` is not dispatched (a scene
/// of at most [`BROAD_IN_TILES_BODIES`] bodies whose pairs are found on the GPU).
pub const DETECT_BROAD_IN_TILES: u32 = 4;
/// The most bodies whose broad phase `pair_tiles` runs itself ([`DETECT_BROAD_IN_TILES`]): up to
/// 64 × 64 pair tests, 64 per invocation of its one workgroup, cheaper than a dispatch of their
/// own.
pub const BROAD_IN_TILES_BODIES: u32 = 64;

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
    /// From an edge–triangle crossing (the intersection analysis): pushes an end of the
    /// crossing edge out through the crossed triangle.
    pub const EDGE: u32 = 64;
    /// An untangling contact (full intersection analysis): a cloth vertex on the wrong side of
    /// another cloth (or of itself) pushed back through it.
    pub const UNTANGLE: u32 = 128;
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
    /// [`NONE`](super::NONE) when not traced; iterative detection walks from it in the next
    /// frames.
    pub exit_triangle: u32,
    /// Edges the walk to `target_triangle` crossed (iterative detection; 0 in a full pass).
    pub walk_steps: u32,
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
}

const _: () = assert!(std::mem::size_of::<ContactGpu>() == 96);
