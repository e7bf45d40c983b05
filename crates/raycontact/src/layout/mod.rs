//! Data layout shared by the WGSL kernels and their CPU twins: constants, and the `#[repr(C)]`
//! Pod structs that mirror WGSL structs field for field.
//!
//! This module is the one source of truth for workgroup sizes and tile sizes: the host prepends
//! [`wgsl_prelude`] to every kernel, and the integration tests check every struct here against
//! naga's reflection of the WGSL declaration of the same name.
//!
//! The items live in submodules by concern and are all re-exported here:
//! - `frame`: the per-frame scene data (bodies, triangle boxes, BVH nodes, the radix sort);
//! - `query`: ray casts and walks over the triangle adjacency;
//! - `detect`: pairs, detection counters and parameters, contacts;
//! - `intersect`: edges, crossings, the contour, regions (the intersection analysis);
//! - `prelude`: the WGSL source of the constants, [`wgsl_prelude`].

mod detect;
mod frame;
mod intersect;
mod pair_grid;
mod prelude;
mod query;
mod response;

pub use detect::*;
pub use frame::*;
pub use intersect::*;
pub use pair_grid::*;
pub use prelude::wgsl_prelude;
pub use query::*;
pub use response::*;

/// Invocations per workgroup of every kernel.
pub const WG_SIZE: u32 = 256;
/// Elements in a tile: the unit the packing splits each body's triangles into (tiles never
/// straddle two bodies), one workgroup of the radix sort's kernels, and one or more workgroups
/// of the other per-triangle kernels ([`Tuning::tile_split`]).
pub const TILE: u32 = 4096;
/// Elements one invocation of a radix sort kernel handles (one workgroup sorts one tile).
pub const SORT_ITEMS: u32 = TILE / WG_SIZE;
// `ray_sources` keeps one bit per item of an invocation in a u32 (items are at most SORT_ITEMS).
const _: () = assert!(SORT_ITEMS <= 32);

/// Work per invocation of the per-triangle kernels (`morton`, `triangle_bounds`, `hierarchy`,
/// `fit`) and of `ray_sources` (source vertices of one directed pair), chosen per adapter kind:
/// the one source of the WGSL constant `ITEMS` (and `TILE_SPLIT`) prepended to every kernel
/// ([`wgsl_prelude`]) and of the host's dispatch sizes.
///
/// A software adapter (lavapipe: a workgroup runs on one CPU thread, looping over SIMD-wide
/// slices of its invocations) wants few large workgroups: 16 triangles per invocation, one
/// workgroup per tile. A GPU wants one triangle per invocation, so that a per-triangle stage of
/// 55k triangles launches 216 workgroups instead of 14 (a GPU has 100+ compute units). The
/// kernels' results do not depend on it (tests run both).
///
/// It also sizes the workgroups of the two kernels whose workgroups take a run of a body's
/// items and meet at barriers (`barrier_group`, the WGSL constant `BARRIER_GROUP`): the radix
/// sort's scatter (one tile, whatever the body's size) and `ray_sources` (`barrier_group ×
/// items` source vertices of one directed pair). llvmpipe runs a kernel with barriers as one
/// coroutine per SIMD slice of the workgroup, switched at every barrier: the scatter's twelve
/// barriers a pass cost 256 invocations' worth of switches even where a body of 900 triangles
/// gives work to 57 of them. A GPU keeps the full width, for its parallelism.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tuning {
    /// Triangles per invocation of a per-triangle kernel, and vertices per invocation of
    /// `vertex_normals`: a power of two, at most [`SORT_ITEMS`].
    pub items: u32,
    /// Invocations of a workgroup of the radix sort's scatter (each places `TILE /
    /// barrier_group` elements) and of `ray_sources` (each tests `items` source vertices): a
    /// power of two from [`RADIX_BUCKETS`] to [`WG_SIZE`].
    pub barrier_group: u32,
    /// Most sort tiles whose sort is one dispatch (when every body has at most [`TILE`]
    /// triangles, each body's keys are sorted whole in its workgroup; the frame's sort is then 1
    /// dispatch of `radix_tiles` instead of one of `radix_scatter` a pass). On lavapipe a
    /// workgroup's passes run slower than one dispatch a pass once the dispatches' fixed cost is
    /// spread over enough tiles (not explained). Measured at 6 passes (`raycontact-bench
    /// --no-parry --implementations gpu --scene tori-scaling --tori 8,16,32,64 --frames 12`,
    /// 3 runs each, a scratch build sorting every scene of one-tile bodies in one dispatch),
    /// `radix_scatter`'s 6 dispatches against `radix_tiles`' one (which reads no digit counts
    /// and makes no atomic operation): of 8 tiles 2.11–2.56 ms and 1.89–2.29, of 16
    /// 4.01–4.94 and 3.64–4.55, of 32 7.64–9.26 and 8.41–8.70, of 64 14.46–16.44 and
    /// 14.79–19.60.
    pub whole_sort_tiles: u32,
    /// Whether the narrow phase walks a cloth vertex's two rays along its normal (on one body,
    /// with the same bounds) together, one walk of the BVH for both (`shared/bvh_line.wgsl`), or
    /// one after the other (the WGSL constant `LINE_WALKS`). The same hits either way. Together,
    /// each node is read once for both rays: on the bench's cloth scenes the nodes read per ray
    /// fall by a sixth (cloth-layers, 58.2 -> 48.1) to over a quarter (eight-sheets, 59.9 ->
    /// 43.4), the traffic a GPU's ray stage is bound by. On lavapipe, which reads no faster for
    /// reading less, the walk's larger state and the two rays' tests in every SIMD slice made the
    /// ray stage slower instead (cloth-layers 147-148 -> 154-155 ms, eight-sheets 91-98 ->
    /// 105-107).
    pub line_walks: bool,
    /// Whether `fit` writes the fan words of the bodies with [`BODY_FANS`] and the narrow
    /// phase's walks that ignore a vertex of [`FAN_VALENCE`] triangles or more pass its fan
    /// ([`TRIANGLE_WORDS`]; the WGSL constant `FAN_WALKS`). The same hits either way. On a GPU,
    /// where one invocation's walk is the ray stage's serial floor, the walk from a vertex of
    /// many triangles enters the box of each: on the bench's `eight-sheets` the cylinder cap's
    /// centre's traces visit 4,624 nodes instead of 13,606 (the longest source), on
    /// `cloth-layers` the body's 406 instead of 753. On lavapipe, which runs a ray stage by its
    /// total work, the check of every entered node made the ray stage 2-8 % slower on
    /// `cloth-layers` (5 alternated runs of `raycontact-bench --no-parry --implementations gpu
    /// --scene cloth-layers`: 160.6 / 154.1 / 153.7 ms without, 169.0 / 159.0 / 156.2 with), and
    /// the fan words add 30-40 % to `fit` (cloth-layers 6.6-7.3 ms -> 8.6-9.5).
    pub fan_walks: bool,
    /// Whether the node buffer holds the compact child pairs ([`Node`]'s doc; the WGSL constant
    /// `CHILD_PAIRS`): `hierarchy` writes each internal node's two children's words and `fit`
    /// their boxes, in 14-bit steps of the body's grid rounded outwards, into a last third of
    /// the buffer, and each step of a walk (`closest_hit`, `closest_hits_line`) reads both
    /// children's boxes and words from that one 32-byte record (8 words), instead of the left
    /// child's node and then, through its escape link, the right one's (14 words in two
    /// dependent fetches). The same hits either way; the rounded boxes add a few nodes visited
    /// (0.2-0.4 % on the ray tests' sphere, torus and bunny). The node buffer then takes 96
    /// bytes a triangle instead of 64, the most of any buffer: under WebGPU's default binding
    /// limit (128 MiB) a packing holds about 1.4 million triangles instead of two. On lavapipe,
    /// which reads a storage buffer a word and a lane at a time (the README), the ray stage took
    /// 3-41 % less on the suite's scenes and the armadillo pair, `fit` (which writes each box
    /// word once more) up to 63 % more, and the rebuilding frame 5-28 % less on the scenes of
    /// 40k triangles or more but the largest (3 alternated runs of `raycontact-bench --no-parry
    /// --implementations gpu,gpu-refit --tuning software`, then `software,child_pairs=true`, with
    /// the armadillo pair; medians: `cloth-layers` 445.7 -> 323.0 ms, the armadillo pair 271.4
    /// -> 223.1, `mesh-scaling` 159k 213.3 -> 175.1, 641k 733.0 -> 737.7; the small scenes,
    /// whose frames are mostly the dispatches' fixed cost, within the run-to-run noise of the
    /// VM, on which `cpu-rayon`'s frames moved as much). Not measured on a GPU, where a step
    /// becomes one 32-byte sector instead of two dependent ones.
    pub child_pairs: bool,
    /// Whether iterative detection (`walk_contacts`) tallies its counters (the walk outcomes,
    /// the fallback casts and the contacts walked), and the narrow phase its sources that
    /// `may_reach` turned away ([`DetectState::unreached`]), per workgroup, in workgroup memory,
    /// and adds them to the detection state once per workgroup after a barrier (the WGSL
    /// constant `WORKGROUP_TALLIES`), or adds each count with its own atomic. The same counts
    /// either way. Tallied, the state's few words take at most 11 atomics per workgroup instead
    /// of one to four from every invocation, which a GPU would serialise on one address (unless
    /// its compiler aggregates them per SIMD group itself). On lavapipe, whose barrier switches
    /// between the coroutines of every SIMD slice of the workgroup, the tally was no faster: in
    /// 10 runs of `raycontact-bench --no-parry --implementations gpu-walk --scene
    /// resting-pile,slow-pair` (40 or 60 frames), alternated with the build without it,
    /// resting-pile's iterative frame (6.8–9.6 ms) was slower in 7 of them, by 4–20 %, and
    /// slow-pair's (1.3–2.3 ms) moved within its noise.
    pub workgroup_tallies: bool,
}

impl Tuning {
    /// For a software adapter: 16 triangles per invocation, one workgroup per tile; the sort's
    /// scatter and the source listing in workgroups of 32 (for the scatter, the fastest of 16,
    /// 32, 64 and 256 on lavapipe); the sort one dispatch for up to 16 tiles; a cloth vertex's
    /// rays walked one after the other; no fan passed; the compact child pairs; iterative
    /// detection's counters added one by one.
    pub const SOFTWARE: Tuning = Tuning {
        items: 16,
        barrier_group: 32,
        whole_sort_tiles: 16,
        line_walks: false,
        fan_walks: false,
        child_pairs: true,
        workgroup_tallies: false,
    };
    /// For a GPU: one triangle per invocation, 16 workgroups per tile; the sort's scatter and
    /// the source listing in workgroups of [`WG_SIZE`]; the sort one dispatch whenever every
    /// body fits in a tile; a cloth vertex's two rays walked together; the fans of vertices of
    /// many triangles passed; the compact child pairs; iterative detection's counters tallied per
    /// workgroup.
    pub const GPU: Tuning = Tuning {
        items: 1,
        barrier_group: WG_SIZE,
        whole_sort_tiles: u32::MAX,
        line_walks: true,
        fan_walks: true,
        child_pairs: true,
        workgroup_tallies: true,
    };

    /// The tuning for an adapter of this kind ([`Tuning::SOFTWARE`] for `DeviceType::Cpu`,
    /// [`Tuning::GPU`] otherwise).
    pub fn for_device_type(kind: wgpu::DeviceType) -> Self {
        if kind == wgpu::DeviceType::Cpu { Tuning::SOFTWARE } else { Tuning::GPU }
    }

    /// Workgroups of a per-triangle kernel per tile.
    pub const fn tile_split(&self) -> u32 {
        TILE / (WG_SIZE * self.items)
    }

    /// Workgroups of a per-triangle kernel over `tiles` tiles.
    pub const fn tile_groups(&self, tiles: u32) -> u32 {
        tiles * self.tile_split()
    }

    /// What [`Tuning::is_valid`] asks, in words.
    pub fn requirements() -> String {
        format!(
            "items must be a power of two from 1 to {SORT_ITEMS}, barrier_group one from \
             {RADIX_BUCKETS} to {WG_SIZE}"
        )
    }

    /// Whether the kernels can be built with it: `items` a power of two from 1 to
    /// [`SORT_ITEMS`], `barrier_group` one from [`RADIX_BUCKETS`] to [`WG_SIZE`].
    pub const fn is_valid(&self) -> bool {
        self.items.is_power_of_two()
            && self.items <= SORT_ITEMS
            && self.barrier_group.is_power_of_two()
            && self.barrier_group >= RADIX_BUCKETS
            && self.barrier_group <= WG_SIZE
    }
}

impl Default for Tuning {
    /// [`Tuning::SOFTWARE`].
    fn default() -> Self {
        Tuning::SOFTWARE
    }
}

/// "No node / no triangle".
pub const NONE: u32 = u32::MAX;

/// Workgroups per dispatch along x; larger dispatches spill into y.
pub const MAX_GROUPS_X: u32 = 65535;

/// Dynamic-offset stride of per-pass uniforms (the WebGPU minimum uniform offset alignment).
pub const UNIFORM_STRIDE: u64 = 256;

/// Workgroup counts of a dispatch of `groups` workgroups, spilling into y past [`MAX_GROUPS_X`].
pub fn dispatch_size(groups: u32) -> (u32, u32) {
    if groups <= MAX_GROUPS_X { (groups.max(1), 1) } else { (MAX_GROUPS_X, groups.div_ceil(MAX_GROUPS_X)) }
}

/// Tiles needed for `n` elements.
pub fn tiles_for(n: u32) -> u32 {
    n.div_ceil(TILE)
}
