//! The per-frame scene data: where each body lives in the packed buffers, its box, the
//! triangle boxes and BVH nodes rebuilt every frame, and the segmented radix sort's parameters
//! (WGSL `shared/common.wgsl` and `shared/sort.wgsl`).

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

use super::{NONE, TILE, WG_SIZE};

/// Bits sorted by one radix-sort pass.
pub const RADIX_BITS: u32 = 4;
/// Buckets of one radix-sort pass.
pub const RADIX_BUCKETS: u32 = 1 << RADIX_BITS;
/// Passes of a full 32-bit radix sort: the most a sort runs (the buffers of its per-pass
/// uniforms and digit counts are sized for them).
pub const SORT_PASSES: u32 = 32 / RADIX_BITS;
/// Bits of the sort keys of a body of at most [`SHORT_KEY_TILES`] tiles ([`TILE`] triangles
/// each) and more than [`TINY_KEY_TRIANGLES`] triangles: the top 23 bits of its 30-bit Morton
/// codes (a Z-order on a grid of 2^23 cells, 256 or more a triangle), or
/// [`SHORT_DEGENERATE_KEY`] ([`key_form`]). A sort whose segments all hold such keys (or tiny
/// ones) runs [`SHORT_SORT_PASSES`] passes instead of [`SORT_PASSES`] ([`sort_passes`]).
pub const SHORT_KEY_BITS: u32 = 24;
/// The shift that takes a 30-bit Morton code to its short key (its top `SHORT_KEY_BITS - 1`
/// bits).
pub const SHORT_KEY_SHIFT: u32 = 30 - (SHORT_KEY_BITS - 1);
/// Sort key of a degenerate triangle of a body with short keys: after every short key.
pub const SHORT_DEGENERATE_KEY: u32 = (1 << SHORT_KEY_BITS) - 1;
/// Passes of the sort of short keys.
pub const SHORT_SORT_PASSES: u32 = SHORT_KEY_BITS / RADIX_BITS;
/// Bits of the sort keys of a body of at most [`TINY_KEY_TRIANGLES`] triangles: the top 15
/// bits of its 30-bit Morton codes (a grid of 2^15 cells, 16 or more a triangle), or
/// [`TINY_DEGENERATE_KEY`] ([`key_form`]). A sort whose segments all hold such keys runs
/// [`TINY_SORT_PASSES`] passes.
pub const TINY_KEY_BITS: u32 = 16;
/// The shift that takes a 30-bit Morton code to its tiny key (its top `TINY_KEY_BITS - 1`
/// bits).
pub const TINY_KEY_SHIFT: u32 = 30 - (TINY_KEY_BITS - 1);
/// Sort key of a degenerate triangle of a body with tiny keys: after every tiny key.
pub const TINY_DEGENERATE_KEY: u32 = (1 << TINY_KEY_BITS) - 1;
/// Passes of the sort of tiny keys.
pub const TINY_SORT_PASSES: u32 = TINY_KEY_BITS / RADIX_BITS;
// Every pass count is even, so that a sort ends on the side it started from; the short and
// tiny keys are whole digits, and their degenerate keys come after every code's key.
const _: () = assert!(
    SORT_PASSES.is_multiple_of(2)
        && SHORT_SORT_PASSES.is_multiple_of(2)
        && TINY_SORT_PASSES.is_multiple_of(2)
        && SHORT_KEY_BITS.is_multiple_of(RADIX_BITS)
        && TINY_KEY_BITS.is_multiple_of(RADIX_BITS)
        && SHORT_DEGENERATE_KEY > ((1 << 30) - 1) >> SHORT_KEY_SHIFT
        && TINY_DEGENERATE_KEY > ((1 << 30) - 1) >> TINY_KEY_SHIFT
);

/// The most sort tiles of a body with short keys ([`key_form`]): 32,768 triangles. Where
/// two triangles share a short key, the tree orders them by index, not by their finer codes: on
/// the bench's scenes, bodies of up to 6 tiles (cloth-layers, eight-sheets, mesh-scaling's 20k
/// triangle tori) walked the same nodes per ray within 0.05 %, and the armadillo scan (13 tiles,
/// triangles in no spatial order) 0.5 % more (74.02 -> 74.37) with short keys, which this
/// bound leaves it without. Short keys for every body of more than
/// [`TINY_KEY_TRIANGLES`] (4 runs alternated, 2026-12-08, `raycontact-bench --cpu --no-parry
/// --scene files,mesh-scaling --triangles 160000,640000 --implementations cpu-1,cpu-rayon`, the
/// armadillo pair as files) cut the CPU backend's `sort` stage by 7-28 % but lengthened the
/// armadillo pair's ray stage by 9-14 % and its `hierarchy` by 15-20 % (its frame 10-15 %),
/// and `mesh-scaling` 159k's `cpu-rayon` frame by 9-13 %; 641k's 2-4 % shorter.
pub const SHORT_KEY_TILES: u32 = 8;

/// The most triangles of a body with tiny keys ([`key_form`]): 2,048, half a tile, 16 cells or
/// more of the keys' grid a triangle. With tiny keys for every body of up to 8 tiles
/// (`raycontact-bench --no-parry --implementations gpu,cpu-rayon`, 2 runs) the GPU walk's nodes
/// per ray stayed within 0.5 % on bodies of 900 and 1,600 triangles (`resting-pile` 39.8 ->
/// 39.7, `hermann-tori` 44.5 -> 44.7), but rose 3 % on the Stanford bunny (3,674 triangles in a
/// scan's order, 80.4 -> 82.8) and 10 % on `cloth-layers`' bodies of 2 to 6 tiles (57.3 ->
/// 63.0): hence this bound. With it, on lavapipe (2 alternated pairs of `--implementations
/// gpu,gpu-refit,cpu-rayon --scene hermann-tori,tori-scaling,resting-pile,slow-pair,cloth-layers
/// --frames 12`), the sort of 64 tori took 4.91-5.03 ms instead of 7.52-7.53 and resting-pile's
/// 2.54-2.58 instead of 3.92-3.93 (frames 45.97-46.45 -> 43.28-43.44 and 33.43-34.47 ->
/// 32.20-32.38 ms), the nodes per ray within 0.3 %. The CPU backend's sort of the same keys, in
/// two byte passes instead of three, was not faster (64 tori 0.39-0.42 -> 0.44-0.50 ms of a
/// 8.8-9.0 ms frame, 3 alternated runs of `--cpu --no-parry --implementations cpu-rayon`).
pub const TINY_KEY_TRIANGLES: u32 = 2048;

/// How a body's sort keys are made from its 30-bit Morton codes: the rule of `morton.wgsl` and
/// its twin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyForm {
    /// The shift that takes a code to its key.
    pub shift: u32,
    /// The key of a degenerate triangle: after every code's key.
    pub degenerate: u32,
    /// Bits of the keys (every key is below `2^bits`).
    pub bits: u32,
}

/// The keys of a body of `triangles` triangles in `tiles` sort tiles: tiny ones
/// ([`TINY_KEY_BITS`]) up to [`TINY_KEY_TRIANGLES`] triangles, short ones ([`SHORT_KEY_BITS`])
/// up to [`SHORT_KEY_TILES`] tiles, else the whole codes (32 bits, degenerate triangles
/// [`DEGENERATE_KEY`]).
pub const fn key_form(triangles: u32, tiles: u32) -> KeyForm {
    if triangles <= TINY_KEY_TRIANGLES {
        KeyForm { shift: TINY_KEY_SHIFT, degenerate: TINY_DEGENERATE_KEY, bits: TINY_KEY_BITS }
    } else if tiles <= SHORT_KEY_TILES {
        KeyForm { shift: SHORT_KEY_SHIFT, degenerate: SHORT_DEGENERATE_KEY, bits: SHORT_KEY_BITS }
    } else {
        KeyForm { shift: 0, degenerate: DEGENERATE_KEY, bits: 32 }
    }
}

/// Passes of the frame's sort of Morton keys over `segments`: enough digits for the widest keys
/// ([`key_form`] of each segment's triangles and tiles), [`TINY_SORT_PASSES`] at least (the
/// digits past a narrower key's bits are 0, so the other segments' keys sort too).
pub fn sort_passes<'a>(segments: impl IntoIterator<Item = &'a SortSegment>) -> u32 {
    let bits = segments.into_iter().map(|s| key_form(s.count, s.tile_count).bits).max();
    bits.map_or(TINY_SORT_PASSES, |b| b.div_ceil(RADIX_BITS)).max(TINY_SORT_PASSES)
}
/// Bytes of workgroup memory a variable of `size` bytes takes, as WebGPU counts it against
/// `maxComputeWorkgroupStorageSize` (each variable rounded up to 16 bytes).
pub const fn workgroup_var_bytes(size: u32) -> u32 {
    size.next_multiple_of(16)
}
/// Workgroup memory of `workgroup_exclusive_scan` (WGSL `shared/sort.wgsl`) in a workgroup of
/// `group` invocations (`SCAN_GROUP`), in bytes: one word per invocation, then one per 16
/// invocations and the total.
pub const fn scan_workgroup_bytes(group: u32) -> u32 {
    workgroup_var_bytes(group * 4) + workgroup_var_bytes((group / 16 + 1) * 4)
}
/// Workgroup memory of `workgroup_exclusive_scan` in a workgroup of [`WG_SIZE`], in bytes.
pub const SCAN_WORKGROUP_BYTES: u32 = scan_workgroup_bytes(WG_SIZE);
/// Workgroup memory of `radix_scatter` in a workgroup of `group` invocations
/// ([`Tuning::barrier_group`](super::Tuning::barrier_group)), in bytes: the scan's; the
/// per-invocation digit counts of a tile, two 16-bit counts to a word (`RADIX_BUCKETS × group
/// / 2` words); where each digit's run of the tile starts, and that less the run's first rank
/// (`RADIX_BUCKETS` words each); and the next pass's digit counts by run, destination tile of
/// the run (a run spans at most two) and next digit (`RADIX_BUCKETS × 2 × RADIX_BUCKETS`
/// words).
pub const fn radix_scatter_workgroup_bytes(group: u32) -> u32 {
    workgroup_var_bytes(RADIX_BUCKETS * group / 2 * 4)
        + 2 * workgroup_var_bytes(RADIX_BUCKETS * 4)
        + workgroup_var_bytes(RADIX_BUCKETS * 2 * RADIX_BUCKETS * 4)
        + scan_workgroup_bytes(group)
}
/// Workgroup memory of `radix_tiles` in a workgroup of `group` invocations, in bytes: the
/// scan's; the count matrix as `radix_scatter`'s; where each digit's elements go
/// (`RADIX_BUCKETS` words).
pub const fn radix_tiles_workgroup_bytes(group: u32) -> u32 {
    workgroup_var_bytes(RADIX_BUCKETS * group / 2 * 4)
        + workgroup_var_bytes(RADIX_BUCKETS * 4)
        + scan_workgroup_bytes(group)
}
/// Words of the radix sort's digit counts per pass and tile: one per digit. The counts of all
/// [`SORT_PASSES`] passes live in one buffer, pass after pass (`SORT_PASSES × RADIX_BUCKETS ×
/// tiles` words), cleared before the sort: the first pass's are counted by `morton` (or
/// `radix_count`), each pass's scatter counts the next's.
pub const COUNTERS_PER_TILE: u32 = SORT_PASSES * RADIX_BUCKETS;

/// [`SortPass::flags`]: the values to sort are the elements' packed indices (the frame's first
/// pass: `values_in` is not read).
pub const SORT_IDENTITY_VALUES: u32 = 1;
/// [`SortPass::flags`]: count the next pass's digits of the scattered keys.
pub const SORT_COUNT_NEXT: u32 = 2;

// `radix_scatter` packs the counts of digits 2i and 2i + 1 of one invocation into one word, and
// so their ranks within the tile: they stay below 2^16 when a tile does.
const _: () = assert!(TILE < 1 << 16 && RADIX_BUCKETS.is_multiple_of(2));
/// Set in [`Node::child`] of a leaf; the low bits are then the body-local triangle index.
pub const LEAF_BIT: u32 = 0x8000_0000;

/// The vertex buffer holds three regions of `3 × vertex_count` floats (the packing's
/// [`FrameParams::vertex_count`], x y z per vertex): the positions (region 0), the previous
/// frame's positions and the vertex normals. One storage buffer, so that a kernel that reads
/// them all binds one (WebGPU's default limit is 8 storage buffers per stage).
pub const VERTEX_REGIONS: u32 = 3;
/// Region of the vertex buffer holding the previous frame's positions.
pub const VERTEX_PREVIOUS: u32 = 1;
/// Region of the vertex buffer holding the vertex normals.
pub const VERTEX_NORMALS: u32 = 2;
/// The triangle buffer holds three regions of `3 × tri_count` words (the packing's
/// [`FrameParams::tri_count`]): the packed vertex indices of each triangle (region 0), its
/// adjacency (the body-local neighbour across each edge, [`BOUNDARY`](super::BOUNDARY) or
/// [`NON_MANIFOLD`](super::NON_MANIFOLD)), and the triangles incident to each packed vertex
/// (the packing's `vertex_tris`: CSR, each triangle once per corner, so `3 × tri_count` in all);
/// then, after the regions, the fan words: `tri_count` words, of which word `tri_offset + p`
/// holds, for internal node `p` of a body's tree, the lowest packed vertex that every triangle
/// under the node uses, or [`NONE`](super::NONE) where none does (written by `fit`, for the
/// walks that ignore a vertex: [`TRIANGLE_WORDS`]); then the `vertex_count + 1` CSR offsets
/// into the incidence region (the packing's `vertex_tri_offsets`). One storage buffer, so that a
/// kernel that reads them binds one: `walk_contacts`, at WebGPU's limit of 8 storage buffers,
/// computes its sources' normals from the incidence.
pub const TRIANGLE_REGIONS: u32 = 3;
/// Words of the triangle buffer per packed triangle before the incidence's CSR offsets: the
/// [`TRIANGLE_REGIONS`] regions of three, then the fan word. The fan words start at word
/// `3 × TRIANGLE_REGIONS × tri_count`, the offsets at `TRIANGLE_WORDS × tri_count`.
///
/// Under a vertex of many triangles (a cone's apex, a cylinder's cap centre) the boxes of all of
/// them hold a ray's origin there, so a walk from that vertex (its own body's trace, a cloth's
/// self pair, which ignore it) enters every one of them, though each of its triangles is skipped
/// at its leaf: on the bench's `eight-sheets`, 13,606 nodes from a cap's centre against 43 a ray
/// on average. A walk passes a node whose fan word is the vertex it ignores, the same hits, when
/// that vertex has [`FAN_VALENCE`] triangles or more around it.
pub const TRIANGLE_WORDS: u32 = 3 * TRIANGLE_REGIONS + 1;
/// The fewest triangles around a vertex whose fan a walk that ignores it passes (its own body's
/// trace, a cloth's self pair: the ray's source vertex), reading the fan word of every internal
/// node whose box it enters ([`TRIANGLE_WORDS`]). Around a vertex of a regular mesh (6
/// triangles) the fan's subtrees hold a few nodes near the leaves, fewer than the words read to
/// pass them cost (on a GPU a 32-byte sector of another array for a few nodes of 32 bytes; on
/// lavapipe, which reads a word as a loop over its SIMD lanes, every ray that ignores a vertex
/// checking them made the ray stage 25-40 % slower on `cloth-layers` and `eight-sheets`). A
/// vertex of 32 triangles or more (a cone's apex, a cap's centre, a pole) has a fan of some 64
/// nodes that every walk from it enters.
pub const FAN_VALENCE: u32 = 32;
/// Region of the triangle buffer holding the adjacency.
pub const TRIANGLE_ADJACENCY: u32 = 1;
/// Region of the triangle buffer holding the triangles incident to each vertex.
pub const TRIANGLE_INCIDENT: u32 = 2;

/// Sort key of a degenerate triangle of a body without short keys (sorts after every 30-bit
/// Morton code; a smaller body's is [`SHORT_DEGENERATE_KEY`]).
pub const DEGENERATE_KEY: u32 = u32::MAX;

/// A triangle with `|e1 x e2|^2 <= DEGENERATE_SIN2 * |e1|^2 |e2|^2` (the sine of its angle at
/// the first vertex below 1e-6) is degenerate: zero area up to rounding.
pub const DEGENERATE_SIN2: f32 = 1.0e-12;
/// A vertex whose normal sum (the sum of its incident faces' `cross(b - a, c - a)`) is no longer
/// than `NORMAL_CANCELLED` times the sum of those cross products' L1 lengths has no normal (zero,
/// as a vertex with no area around it): its faces cancel up to rounding (a surface listed in both
/// orientations), and what rounding leaves of the sum would choose its rays' direction,
/// differently on every device. Faces that do not cancel stayed above 1e-3 in random soups.
pub const NORMAL_CANCELLED: f32 = 1.0e-5;
/// `1/3` rounded to f32, as the Morton kernel and its twin use it.
pub const ONE_THIRD: f32 = 1.0 / 3.0;

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
    /// Body flags: [`BODY_CLOTH`] for a cloth (0 for a volumetric body), with [`BODY_STATIC`]
    /// for a static one, [`BODY_FANS`] for one with a vertex of many triangles, and
    /// [`BODY_KEEP`] in a frame that leaves its frame data as it is.
    pub flags: u32,
    /// Half-thickness `e` of a cloth (0 for a volumetric body).
    pub half_thickness: f32,
    /// Mean triangle size of the body as added (the mean edge length,
    /// [`crate::internals::adjacency::mean_triangle_size`]): iterative detection's walks over it cross at
    /// most `ceil(confidence × threshold / mean_size)` edges (Eq. 1 of Lehericey et al. 2013).
    pub mean_size: f32,
    /// First edge of the body in the packed edge list ([`EdgeGpu`](super::EdgeGpu)).
    pub edge_offset: u32,
    /// Unique edges of the body.
    pub edge_count: u32,
}

/// [`BodyGpu::flags`] bit of a cloth (WGSL `BODY_CLOTH`).
pub const BODY_CLOTH: u32 = 1;
/// [`BodyGpu::flags`] bit of a static body (WGSL `BODY_STATIC`,
/// [`Scene::set_static`](crate::Scene::set_static)): the broad phase pairs no two of them.
pub const BODY_STATIC: u32 = 2;
/// [`BodyGpu::flags`] bit of a body whose frame data this frame's update leaves as it is (WGSL
/// `BODY_KEEP`): its positions did not change since its tree was last brought up to date, and
/// in a rebuild its tree was rebuilt at these positions. Its normals, box, triangle boxes,
/// keys and tree are what the frame's kernels would compute again, so `vertex_normals`,
/// `triangle_bounds`, `morton`, the sort, `hierarchy` and `fit` skip it. Set by the GPU scene
/// per frame; never in a packing.
pub const BODY_KEEP: u32 = 4;
/// [`BodyGpu::flags`] bit of a body with a vertex of [`FAN_VALENCE`] triangles or more and
/// fewer than [`FAN_MAX_TRIANGLES`] triangles (WGSL `BODY_FANS`): `fit` writes its tree's fan
/// words ([`TRIANGLE_WORDS`]), and its walks that ignore such a vertex pass its fan. Other bodies'
/// fan words are neither written nor read.
pub const BODY_FANS: u32 = 8;
/// Triangles of a body from which it gets no fan words ([`BODY_FANS`]): `fit` hands a subtree's
/// shared vertices on as one word, a triangle index plus one in 29 bits and a mask of its three
/// corners.
pub const FAN_MAX_TRIANGLES: u32 = 1 << 29;

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
///
/// On the GPU, where the tuning keeps child pairs
/// ([`Tuning::child_pairs`](crate::layout::Tuning::child_pairs): both tunings), the node buffer has
/// a last third after the two nodes a triangle of the trees, one node a triangle: a body's from
/// node `H + tri_offset` (`H` the third's first node), internal node `p`'s compact child pair in
/// node `p` and, in the body's last one (`tri_count - 1`, which no pair takes: a tree has fewer
/// internal nodes than its body has triangles), the pairs' grid ([`PairGrid`](super::PairGrid): its
/// corner in `min`, its step's bits in `child`). A pair holds both children's boxes in steps of the
/// grid, rounded outwards (each box word two children's 14-bit steps of one component, the left
/// child's high, bit 29 set: [`pair_word`](super::pair_word); the words are floats, normal ones, in
/// this struct) and their words (an internal child's index, [`LEAF_BIT`] `|` triangle for a leaf):
/// the left one's in `child`, the right one's in `escape`. `hierarchy` writes the words, `fit` the
/// boxes and the grid (of the body's box), and a walk's step reads both children's boxes and words
/// from one 32-byte record (WGSL `closest_hit`; the CPU twins of the pairs and of the walk that
/// reads them are [`cpu::child_pairs`](crate::cpu::child_pairs) and
/// [`cpu::closest_hit_paired`](crate::cpu::closest_hit_paired)). The first two thirds are what
/// [`FrameData::nodes`](crate::internals::FrameData) holds, the last
/// [`FrameData::child_pairs`](crate::internals::FrameData).
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
    /// Passes of the whole sort ([`SORT_PASSES`] or [`SHORT_SORT_PASSES`]). This pass's index
    /// is `shift / RADIX_BITS`: its digit counts are that block of the counts buffer
    /// ([`COUNTERS_PER_TILE`]).
    pub passes: u32,
    /// [`SORT_IDENTITY_VALUES`], [`SORT_COUNT_NEXT`].
    pub flags: u32,
}
