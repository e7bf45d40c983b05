//! Edge–triangle crossings, their contour and the global intersection analysis (WGSL
//! `shared/intersect.wgsl`): the unique edges of every body, the crossing records, the contour's
//! per-crossing state and loop records, the per-vertex regions, and the parameters and counters
//! of these stages.
//!
//! Every per-frame array that the stages accumulate into with atomics starts as zeros (the host
//! clears it), so its fields are stored in encodings where 0 means "nothing yet": a union-find
//! parent `p` as `!p` (0: the element is a root), a minimum `m` as `!m` reduced with `atomicMax`
//! (0: none), a link or an index `i` as `i + 1` (0: none). The `decode_*` helpers undo them.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

/// Crossings of one edge kept sorted in registers by the `crossings` kernel: an edge with more
/// crossings against one body is traced again for the next ones (counted in
/// [`IntersectState::multi_pass`]).
pub const MAX_EDGE_HITS: u32 = 8;

/// An edge whose direction `d` and a triangle whose normal `n` (unnormalised) satisfy
/// `dot(d, n)² <= CROSSING_PARALLEL_SIN2 |d|² |n|²` (less than 1e-5 rad from the triangle's plane)
/// do not cross: a segment in (or rounding-close to) the plane of a triangle touches it at most,
/// as a cloth's edges do with the coplanar triangles of a flat region of the same cloth.
pub const CROSSING_PARALLEL_SIN2: f32 = 1.0e-10;

/// [`IntersectParams::mode`]: crossings and the contacts of their edges.
pub const INTERSECT_CROSSINGS: u32 = 1;
/// [`IntersectParams::mode`]: crossings, contour, global intersection analysis and all their
/// contacts.
pub const INTERSECT_FULL: u32 = 2;

/// [`CrossingGpu::flags`]: the edge runs from the triangle's back to its front
/// (`dot(b - a, n) > 0` for the edge `a -> b` and the triangle's normal `n`), so its first
/// vertex `a` is on the back side.
pub const CROSSING_FORWARD: u32 = 1;
/// [`CrossingGpu::flags`]: no crossing of the same edge with the same body lies between this one
/// and the edge's first vertex (that vertex is on this crossing's side).
pub const CROSSING_FIRST: u32 = 2;
/// [`CrossingGpu::flags`]: no crossing of the same edge with the same body lies between this one
/// and the edge's second vertex.
pub const CROSSING_LAST: u32 = 4;
/// [`CrossingGpu::flags`] (full analysis): the analysis put the edge's first vertex on the wrong
/// side of the target body; its contact pushes that vertex through the triangle.
pub const CROSSING_WRONG_A: u32 = 8;
/// [`CrossingGpu::flags`] (full analysis): as [`CROSSING_WRONG_A`], for the second vertex.
pub const CROSSING_WRONG_B: u32 = 16;

/// [`LoopGpu::flags`]: the loop is closed (its last crossing links back to its first); an open
/// polyline ends where a boundary (or non-manifold) edge of a cloth cuts it.
pub const LOOP_CLOSED: u32 = 1;

/// An edge of a body (WGSL `Edge`): the unique edges of its triangles, in order of their
/// (lower, higher) vertex index, from the lower vertex `a` to the higher `b`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct EdgeGpu {
    /// Packed index of the lower vertex (body-local in a body's own list,
    /// [`crate::internals::adjacency::unique_edges`]).
    pub a: u32,
    /// Packed index of the higher vertex.
    pub b: u32,
    /// The lower-indexed triangle of the body that uses the edge (body-local).
    pub t0: u32,
    /// The other triangle that uses it (body-local), or [`BOUNDARY`](super::BOUNDARY) (the
    /// edge borders one triangle), or [`NON_MANIFOLD`](super::NON_MANIFOLD) (three or more).
    pub t1: u32,
}

/// Parameters of the intersection stages (WGSL `IntersectParams`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct IntersectParams {
    /// [`INTERSECT_CROSSINGS`] or [`INTERSECT_FULL`].
    pub mode: u32,
    /// Capacity of the crossing buffer.
    pub crossing_capacity: u32,
    /// Capacity of the list of (directed pair, edge) entries `crossings` traces.
    pub edge_source_capacity: u32,
    /// Entries of the contour's hash table minus one (a power of two minus one).
    pub table_mask: u32,
    /// Packed edges of all bodies.
    pub edge_count: u32,
    /// Packed vertices of all bodies.
    pub vertex_count: u32,
    /// Packed bodies.
    pub body_count: u32,
    /// Capacity of the contact buffer (edge and untangling contacts are appended to it).
    pub contact_capacity: u32,
    /// Capacity of the pair list.
    pub pair_capacity: u32,
    /// Packed triangles of all bodies (where the triangle buffer's regions start).
    pub tri_count: u32,
    /// Padding.
    pub pad1: u32,
    /// Padding.
    pub pad2: u32,
}

/// Counters of the intersection stages (WGSL `IntersectState`), zeroed at the start of each
/// detection.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct IntersectState {
    /// Pairs of the detection (its pair count, clamped to the capacity), copied by `edge_tiles`.
    pub pairs: u32,
    /// (Directed pair, edge) entries listed by `edge_sources`, including any past the capacity.
    pub edge_sources: u32,
    /// Crossings found, including any past the capacity.
    pub crossings: u32,
    /// Contour loops (and open polylines) walked.
    pub loops: u32,
    /// Edges traced more than once because they cross one body more than [`MAX_EDGE_HITS`]
    /// times.
    pub multi_pass: u32,
    /// Edge contacts appended (including any past the contact capacity).
    pub edge_contacts: u32,
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
}

/// A crossing (WGSL `Crossing`), 64 bytes: edge `edge` of `source_body` crosses triangle
/// `triangle` of `target_body` at `point = a + t (b - a)`, barycentrics (`u`, `v`) on the
/// triangle. Bodies are packed indices.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct CrossingGpu {
    /// Packed index of the body whose edge crosses.
    pub source_body: u32,
    /// Packed index of the body whose triangle is crossed.
    pub target_body: u32,
    /// Body-local edge of the source body.
    pub edge: u32,
    /// Body-local triangle of the target body.
    pub triangle: u32,
    /// The crossing point.
    pub point: Vec3,
    /// Parameter along the edge, from its vertex `a` (0) to `b` (1).
    pub t: f32,
    /// Barycentric weight of the triangle's second vertex.
    pub u: f32,
    /// Barycentric weight of the triangle's third vertex.
    pub v: f32,
    /// Parameter of the other end of the part of the edge behind the triangle: the next
    /// crossing of the edge with the same body on the back side, or the back-side vertex (0 or 1).
    pub inside_t: f32,
    /// `CROSSING_*` flags.
    pub flags: u32,
    /// The directed pair that found it (`2 k` for `pairs[k].a -> pairs[k].b`, `2 k + 1` for the
    /// reverse).
    pub pair: u32,
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
    /// Padding.
    pub pad2: u32,
}

const _: () = assert!(std::mem::size_of::<CrossingGpu>() == 64);

/// The contour's state of one crossing (WGSL `ContourNode` / `ContourRead`), 32 bytes, in the
/// zero-based encodings of the module documentation.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct ContourGpu {
    /// Union-find parent over the crossings (`!parent`, 0 for a root).
    pub parent: u32,
    /// At a root: `!min` of the high words of its crossings' canonical keys.
    pub key_hi: u32,
    /// At a root: `!min` of the low words of the keys whose high word is the minimum.
    pub key_lo: u32,
    /// The neighbour through the edge's triangle `t0`, then `t1`: half-incidence
    /// `2 slot + side` of the neighbour, plus one (0: none).
    pub links: [u32; 2],
    /// Index of the crossing's loop record plus one (0: not walked).
    pub loop_id: u32,
    /// Position of the crossing along its loop, from the loop's start.
    pub rank: u32,
    /// Padding.
    pub pad: u32,
}

/// A loop of the contour (WGSL `Loop`), 48 bytes: `count` crossings of one pair joined in a
/// closed loop or an open polyline, walked from the crossing `start`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct LoopGpu {
    /// Index of the (undirected) pair in the pair list.
    pub pair: u32,
    /// Slot of the first crossing.
    pub start: u32,
    /// Crossings.
    pub count: u32,
    /// [`LOOP_CLOSED`].
    pub flags: u32,
    /// Length of the polyline through the crossing points.
    pub length: f32,
    /// Regions (root packed vertices) of the pair's first body: on the front and the back side
    /// of the other body's triangles, from the first crossing of an edge of that body whose both
    /// ends are next to the loop ([`NONE`](super::NONE): none).
    pub regions_a: [u32; 2],
    /// Regions of the pair's second body, as `regions_a` (for a self pair, the first such pair
    /// of regions that differs from `regions_a`).
    pub regions_b: [u32; 2],
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
    /// Padding.
    pub pad2: u32,
}

/// The region state of one packed vertex (WGSL `Region` / `RegionRead`), 16 bytes, in the
/// zero-based encodings of the module documentation.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct RegionGpu {
    /// Union-find parent over the packed vertices (`!parent`, 0 for a root); after the
    /// analysis every vertex points at its region's root, the lowest vertex of the region.
    pub parent: u32,
    /// At a root: `!body` of the lowest packed body whose other side the region is on the
    /// wrong side of (0: none).
    pub other: u32,
    /// At a root: the region's area in fixed point ([`area_unit`]), low word.
    pub area_lo: u32,
    /// High word of the area.
    pub area_hi: u32,
}

/// The fixed-point unit of region areas of a body of mean triangle size `mean_size`: areas are
/// summed in integer multiples of it (deterministically, in any order), and compared within
/// one body.
pub fn area_unit(mean_size: f32) -> f32 {
    let m = if mean_size > 0.0 && mean_size < 3.0e38 { mean_size } else { 1.0 };
    (m * m * AREA_UNIT_SCALE).max(f32::MIN_POSITIVE)
}

/// Fixed-point steps per squared mean triangle size.
pub const AREA_UNIT_SCALE: f32 = 1.0 / 65536.0;

/// A union-find parent stored as `!parent` (0: the element `i` is its own root).
pub fn decode_parent(stored: u32, i: u32) -> u32 {
    if stored == 0 { i } else { !stored }
}

/// A link or index stored plus one (0: none).
pub fn decode_index(stored: u32) -> Option<u32> {
    stored.checked_sub(1)
}

/// A minimum stored as `!min` (0: none).
pub fn decode_min(stored: u32) -> Option<u32> {
    (stored != 0).then_some(!stored)
}

impl RegionGpu {
    /// The region's area at a root, in fixed-point steps.
    pub fn area_steps(&self) -> u64 {
        (u64::from(self.area_hi) << 32) | u64::from(self.area_lo)
    }
}
