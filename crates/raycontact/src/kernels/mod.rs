//! The WGSL kernels: their sources, assembled with the shared includes and the
//! [`layout::wgsl_prelude`], and their bind-group layouts.
//!
//! Every kernel `k` lives in `shaders/k.wgsl`, has a CPU twin `raycontact::internals::cpu::k` (the radix
//! sort's three kernels share [`crate::cpu::radix_sort`]), and its pipeline is labelled
//! `raycontact.k`. [`Kernel::bindings`] is the one description of each bind-group layout: the
//! host builds its layouts from it, and a test checks it against naga's reflection of the WGSL.

use crate::layout;

/// The text of a file under `shaders/`, from the directory that the build script found and
/// checked (`RAYCONTACT_SHADERS`, relative to this crate's directory: the workspace's `shaders/`
/// in a checkout, the crate's own `shaders/` in the package).
macro_rules! shader {
    ($file:literal) => {
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", env!("RAYCONTACT_SHADERS"), "/", $file))
    };
}

/// How a kernel binds a buffer at `@group(0) @binding(i)`, where `i` is the position in
/// [`Kernel::bindings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// `var<uniform>`.
    Uniform,
    /// `var<uniform>` bound with a dynamic offset (one slot per pass).
    UniformDynamic,
    /// `var<storage, read>`.
    Storage,
    /// `var<storage, read_write>`.
    StorageMut,
}

impl Binding {
    /// The bind-group layout entry of a compute kernel's binding number `binding` of this kind.
    pub fn layout_entry(self, binding: u32) -> wgpu::BindGroupLayoutEntry {
        wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match self {
                    Binding::Uniform | Binding::UniformDynamic => wgpu::BufferBindingType::Uniform,
                    Binding::Storage => wgpu::BufferBindingType::Storage { read_only: true },
                    Binding::StorageMut => wgpu::BufferBindingType::Storage { read_only: false },
                },
                has_dynamic_offset: self == Binding::UniformDynamic,
                min_binding_size: None,
            },
            count: None,
        }
    }

    /// Whether the kernel may write through this binding.
    pub fn writes(self) -> bool {
        matches!(self, Binding::StorageMut)
    }
}

/// Every kernel of raycontact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Area-weighted vertex normals and the bodies' boxes, [`layout::Tuning::items`] vertices per
    /// invocation.
    VertexNormals,
    /// Triangle boxes and degenerate flags (a refit's).
    TriangleBounds,
    /// A rebuild's per-triangle pass: triangle boxes, degenerate flags, Morton codes, leaf counts
    /// and the sort's first digit counts.
    Morton,
    /// Radix sort: per-tile digit histograms of the first pass (the standalone sorter's).
    RadixCount,
    /// Radix sort: one pass, its counts scanned per segment and the next pass's counted.
    RadixScatter,
    /// Radix sort of one-tile segments: every pass in the segment's workgroup.
    RadixTiles,
    /// Karras hierarchy with escape links.
    Hierarchy,
    /// Bottom-up box fitting.
    Fit,
    /// Closest-hit ray casts against a list of bodies.
    Raycast,
    /// Any-hit (occlusion) ray casts against a list of bodies.
    RaycastAnyhit,
    /// All-hits ray casts against a list of bodies, up to a cap per ray, sorted by `t`.
    RaycastAll,
    /// Pairs of bodies whose boxes overlap.
    BroadPhase,
    /// Workgroup layout of `ray_sources` over the directed pairs (`ITEMS` source vertices an
    /// invocation), and its dispatch (and, for a scene of few bodies, the broad phase before it).
    PairTiles,
    /// The source vertices within reach of the other body's box, listed.
    RaySources,
    /// Indirect dispatch of the narrow phase over the listed source vertices.
    SourceArgs,
    /// Inward and outward rays from every source vertex: contacts and predictions.
    NarrowPhase,
    /// Indirect dispatch arguments over the contacts, for a GPU consumer.
    ContactArgs,
    /// Iterative ray casts: walks over the triangle adjacency, BVH fallback.
    Walk,
    /// Iterative detection: last frame's contacts re-cast by walking from their hits.
    WalkContacts,
    /// Contact response: penalty forces of the contacts, summed per vertex in fixed point.
    Response,
    /// Workgroup layout of the (directed pair, edge) invocations of `edge_sources`, and their dispatch.
    EdgeTiles,
    /// The edges within the other body's box, listed for `crossings`.
    EdgeSources,
    /// Indirect dispatches of the intersection stages from their counters.
    IntersectArgs,
    /// Edge–triangle crossings: every crossing of each listed edge with the other body.
    Crossings,
    /// The contour's links between crossings of the same triangle pair; crossed edges marked.
    CrossingLinks,
    /// Union-find of the linked crossings into loops.
    ContourHook,
    /// Loop roots, and the high words of the loops' least keys.
    ContourCompress,
    /// The low words of the loops' least keys: each loop's start.
    ContourStart,
    /// Flood fill: union-find of the vertices over the edges no surface crosses.
    RegionsHook,
    /// Region roots of the vertices and the regions' areas in fixed point.
    RegionAreas,
    /// The regions on the wrong side of another body, from each crossing.
    WrongSide,
    /// Each loop walked from its start: ranks, count, length, regions.
    ContourWalk,
    /// Contacts from edge–triangle crossings.
    EdgeContacts,
    /// Untangling contacts of cloth vertices on the wrong side.
    UntangleContacts,
}

use Binding::{Storage as R, StorageMut as W, Uniform as U, UniformDynamic as UD};

impl Kernel {
    /// All kernels.
    pub const ALL: [Kernel; 34] = [
        Kernel::VertexNormals,
        Kernel::TriangleBounds,
        Kernel::Morton,
        Kernel::RadixCount,
        Kernel::RadixScatter,
        Kernel::RadixTiles,
        Kernel::Hierarchy,
        Kernel::Fit,
        Kernel::Raycast,
        Kernel::BroadPhase,
        Kernel::PairTiles,
        Kernel::RaySources,
        Kernel::SourceArgs,
        Kernel::NarrowPhase,
        Kernel::ContactArgs,
        Kernel::Walk,
        Kernel::WalkContacts,
        Kernel::Response,
        Kernel::EdgeTiles,
        Kernel::EdgeSources,
        Kernel::IntersectArgs,
        Kernel::Crossings,
        Kernel::CrossingLinks,
        Kernel::ContourHook,
        Kernel::ContourCompress,
        Kernel::ContourStart,
        Kernel::RegionsHook,
        Kernel::RegionAreas,
        Kernel::WrongSide,
        Kernel::ContourWalk,
        Kernel::EdgeContacts,
        Kernel::UntangleContacts,
        Kernel::RaycastAnyhit,
        Kernel::RaycastAll,
    ];

    /// The kernel's name: its file `shaders/<name>.wgsl`, its CPU twin, its pipeline label
    /// `raycontact.<name>`.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::VertexNormals => "vertex_normals",
            Kernel::TriangleBounds => "triangle_bounds",
            Kernel::Morton => "morton",
            Kernel::RadixCount => "radix_count",
            Kernel::RadixScatter => "radix_scatter",
            Kernel::RadixTiles => "radix_tiles",
            Kernel::Hierarchy => "hierarchy",
            Kernel::Fit => "fit",
            Kernel::Raycast => "raycast",
            Kernel::RaycastAnyhit => "raycast_anyhit",
            Kernel::RaycastAll => "raycast_all",
            Kernel::BroadPhase => "broad_phase",
            Kernel::PairTiles => "pair_tiles",
            Kernel::RaySources => "ray_sources",
            Kernel::SourceArgs => "source_args",
            Kernel::NarrowPhase => "narrow_phase",
            Kernel::ContactArgs => "contact_args",
            Kernel::Walk => "walk",
            Kernel::WalkContacts => "walk_contacts",
            Kernel::Response => "response",
            Kernel::EdgeTiles => "edge_tiles",
            Kernel::EdgeSources => "edge_sources",
            Kernel::IntersectArgs => "intersect_args",
            Kernel::Crossings => "crossings",
            Kernel::CrossingLinks => "crossing_links",
            Kernel::ContourHook => "contour_hook",
            Kernel::ContourCompress => "contour_compress",
            Kernel::ContourStart => "contour_start",
            Kernel::RegionsHook => "regions_hook",
            Kernel::RegionAreas => "region_areas",
            Kernel::WrongSide => "wrong_side",
            Kernel::ContourWalk => "contour_walk",
            Kernel::EdgeContacts => "edge_contacts",
            Kernel::UntangleContacts => "untangle_contacts",
        }
    }

    /// The kernels of the intersection stages (edge–triangle crossings, their contour and the
    /// global intersection analysis), whose bind groups `gpu::intersect` keeps.
    pub const INTERSECTION: [Kernel; 14] = [
        Kernel::EdgeTiles,
        Kernel::EdgeSources,
        Kernel::IntersectArgs,
        Kernel::Crossings,
        Kernel::CrossingLinks,
        Kernel::ContourHook,
        Kernel::ContourCompress,
        Kernel::ContourStart,
        Kernel::RegionsHook,
        Kernel::RegionAreas,
        Kernel::WrongSide,
        Kernel::ContourWalk,
        Kernel::EdgeContacts,
        Kernel::UntangleContacts,
    ];

    /// The pipeline label, `raycontact.<name>`.
    pub fn label(self) -> String {
        format!("raycontact.{}", self.name())
    }

    /// The kernel's bindings in order `@binding(0)`, `@binding(1)`, ... of `@group(0)`.
    ///
    /// Names in the comments are the scene's buffers: `vertices` holds the positions, the
    /// previous positions and the normals ([`layout::VERTEX_REGIONS`]), `triangles` the
    /// triangles, their adjacency and the vertices' incident triangles
    /// ([`layout::TRIANGLE_REGIONS`]), `pairs` the detection's
    /// counters and the pair list ([`layout::PAIRS_OFFSET`]). Every kernel binds at most
    /// [`limits::MAX_STORAGE_BUFFERS`] storage buffers (WebGPU's default).
    pub fn bindings(self) -> &'static [Binding] {
        match self {
            // params, vertices (positions read, normals written), triangles (with the
            // incidence), bodies, body_state (boxes), vertex_order
            Kernel::VertexNormals => &[U, W, R, R, W, R],
            // bodies, tile_body, vertices, triangles, tri_boxes, params
            Kernel::TriangleBounds => &[R, R, R, R, W, U],
            // bodies, tile_body, vertices, triangles, tri_boxes, body_state, keys, counters, params
            Kernel::Morton => &[R, R, R, R, W, W, W, W, U],
            // pass, segments, tile_segment, keys, counters
            Kernel::RadixCount => &[UD, R, R, R, W],
            // pass, segments, tile_segment, counters, keys_in, values_in, keys_out, values_out
            Kernel::RadixScatter => &[UD, R, R, W, R, R, W, W],
            // pass, segments, tile_segment, keys0, values0, keys1, values1
            Kernel::RadixTiles => &[UD, R, R, W, W, W, W],
            // bodies, tile_body, body_state, keys, values, nodes, parents, params
            Kernel::Hierarchy => &[R, R, R, R, R, W, W, U],
            // bodies, tile_body, body_state, tri_boxes, parents, nodes, fit_keys, triangles (the
            // fan words), params
            Kernel::Fit => &[R, R, R, R, R, W, W, W, U],
            // body_state, vertices, triangles, nodes, targets, rays, hits (no uniform: the
            // counts are the lengths of the bindings)
            Kernel::Raycast | Kernel::RaycastAnyhit => &[R, R, R, R, R, R, W],
            // body_state, vertices, triangles, nodes, targets, rays, counts (totals, then one
            // per ray), hits
            Kernel::RaycastAll => &[R, R, R, R, R, R, W, W],
            // params, bodies, body_state, pairs
            Kernel::BroadPhase => &[U, R, R, W],
            // params, bodies, body_state, pairs, tile_offsets, dispatch
            Kernel::PairTiles => &[U, R, R, W, W, W],
            // params, bodies, body_state, vertices, vertex_order, tile_offsets, pairs, sources
            Kernel::RaySources => &[U, R, R, R, R, R, W, W],
            // params, pairs, args
            Kernel::SourceArgs => &[U, R, W],
            // params, bodies, body_state, vertices, triangles, nodes, sources, pairs, contacts
            Kernel::NarrowPhase => &[U, R, R, R, R, R, W, W, W],
            // params, pairs, args
            Kernel::ContactArgs => &[U, W, W],
            // query, bodies, body_state, vertices, triangles, nodes, rays, starts, output
            // (counts, then hits)
            Kernel::Walk => &[U, R, R, R, R, R, R, R, W],
            // params, bodies, body_state, vertices, triangles, nodes, memory, pairs, contacts
            Kernel::WalkContacts => &[U, R, R, R, R, R, R, W, W],
            // params, bodies, triangles, vertices, stiffness, contacts, args, forces, state
            Kernel::Response => &[U, R, R, R, R, R, R, W, W],
            // params, bodies, pairs, state, tile_offsets, args
            Kernel::EdgeTiles => &[U, R, R, W, W, W],
            // params, bodies, body_state, vertices, edges, pairs, tile_offsets, state, list
            Kernel::EdgeSources => &[U, R, R, R, R, R, R, W, W],
            // params, state, args
            Kernel::IntersectArgs => &[U, R, W],
            // params, bodies, vertices, triangles, nodes, edges, list, state, crossings
            Kernel::Crossings => &[U, R, R, R, R, R, R, W, W],
            // params, bodies, edges, state, crossings, contour, table, marks
            Kernel::CrossingLinks => &[U, R, R, R, R, W, W, W],
            // params, state, contour
            Kernel::ContourHook => &[U, R, W],
            // params, state, crossings, contour
            Kernel::ContourCompress => &[U, R, R, W],
            // params, state, crossings, contour
            Kernel::ContourStart => &[U, R, R, W],
            // params, edges, marks, regions
            Kernel::RegionsHook => &[U, R, R, W],
            // params, bodies, vertices, triangles (and their incidence), regions
            Kernel::RegionAreas => &[U, R, R, R, W],
            // params, bodies, edges, state, crossings, regions
            Kernel::WrongSide => &[U, R, R, R, W, W],
            // params, bodies, edges, state, crossings, contour, loops, regions
            Kernel::ContourWalk => &[U, R, R, W, R, W, W, R],
            // params, bodies, vertices, triangles, edges, crossings, state, pairs, contacts
            Kernel::EdgeContacts => &[U, R, R, R, R, R, W, W, W],
            // params, bodies, vertices, triangles, nodes, regions, pairs, contacts
            Kernel::UntangleContacts => &[U, R, R, R, R, R, W, W],
        }
    }

    /// Invocations of a workgroup of the kernel built with `tuning` (all along x): [`WG_SIZE`],
    /// but [`layout::Tuning::barrier_group`] for the radix sort's scatter and `ray_sources` (a
    /// test checks them against naga's reflection of the assembled kernel).
    ///
    /// [`WG_SIZE`]: layout::WG_SIZE
    pub fn workgroup_size(self, tuning: &layout::Tuning) -> u32 {
        match self {
            Kernel::RadixScatter | Kernel::RadixTiles | Kernel::RaySources => tuning.barrier_group,
            _ => layout::WG_SIZE,
        }
    }

    /// Bytes of workgroup memory the kernel built with `tuning` uses, as WebGPU counts them
    /// (each variable rounded up to 16 bytes, [`layout::workgroup_var_bytes`]), from the
    /// layout's constants (a test checks them against naga's reflection of the assembled
    /// kernel).
    pub fn workgroup_bytes(self, tuning: &layout::Tuning) -> u32 {
        use layout::workgroup_var_bytes as var;
        match self {
            // the keys of the workgroup's first two bodies' boxes: 12 words
            Kernel::VertexNormals => var(12 * 4),
            // wg_count, wg_degenerate, the first pass's digit counts
            Kernel::Morton => 2 * var(4) + var(layout::RADIX_BUCKETS * 4),
            // the digit histogram
            Kernel::RadixCount => var(layout::RADIX_BUCKETS * 4),
            // workgroup_exclusive_scan
            Kernel::PairTiles | Kernel::EdgeTiles => layout::SCAN_WORKGROUP_BYTES,
            Kernel::RadixScatter => layout::radix_scatter_workgroup_bytes(tuning.barrier_group),
            Kernel::RadixTiles => layout::radix_tiles_workgroup_bytes(tuning.barrier_group),
            // wg_count, wg_base: the workgroup's entries and their first slot; wg_k, wg_offset,
            // wg_start, wg_end, wg_boxed, wg_lo, wg_hi: the workgroup's directed pair, read once
            Kernel::RaySources => 7 * var(4) + 2 * var(12),
            // the outcome counts, fallback casts and fallback hits of the workgroup
            Kernel::Walk => var((layout::WALK_OUTCOMES + 2) * 4),
            // the same and the contacts walked (declared whatever the tuning; used with
            // `Tuning::workgroup_tallies`)
            Kernel::WalkContacts => var((layout::WALK_OUTCOMES + 3) * 4),
            // the sources turned away by `may_reach` (declared whatever the tuning; used with
            // `Tuning::workgroup_tallies`)
            Kernel::NarrowPhase => var(4),
            // the workgroup's totals
            Kernel::RaycastAll => var(size_of::<layout::RayHitTotals>() as u32),
            _ => 0,
        }
    }

    /// Bytes of the kernel's uniform binding (its parameters struct; one pass's [`layout::SortPass`]
    /// for the sort, bound at a dynamic offset; 0 for the ray queries, which bind none).
    pub fn uniform_bytes(self) -> u32 {
        let size = match self {
            Kernel::VertexNormals
            | Kernel::TriangleBounds
            | Kernel::Morton
            | Kernel::Hierarchy
            | Kernel::Fit => size_of::<layout::FrameParams>(),
            Kernel::RadixCount | Kernel::RadixScatter | Kernel::RadixTiles => size_of::<layout::SortPass>(),
            Kernel::Raycast | Kernel::RaycastAnyhit | Kernel::RaycastAll => 0,
            Kernel::Walk => size_of::<layout::WalkParams>(),
            Kernel::Response => size_of::<layout::ResponseParams>(),
            Kernel::BroadPhase
            | Kernel::PairTiles
            | Kernel::RaySources
            | Kernel::SourceArgs
            | Kernel::NarrowPhase
            | Kernel::ContactArgs
            | Kernel::WalkContacts => size_of::<layout::DetectParams>(),
            Kernel::EdgeTiles
            | Kernel::EdgeSources
            | Kernel::IntersectArgs
            | Kernel::Crossings
            | Kernel::CrossingLinks
            | Kernel::ContourHook
            | Kernel::ContourCompress
            | Kernel::ContourStart
            | Kernel::RegionsHook
            | Kernel::RegionAreas
            | Kernel::WrongSide
            | Kernel::ContourWalk
            | Kernel::EdgeContacts
            | Kernel::UntangleContacts => size_of::<layout::IntersectParams>(),
        };
        size as u32
    }

    /// The kernel's own WGSL file, before assembly.
    pub fn raw_source(self) -> &'static str {
        match self {
            Kernel::VertexNormals => shader!("vertex_normals.wgsl"),
            Kernel::TriangleBounds => shader!("triangle_bounds.wgsl"),
            Kernel::Morton => shader!("morton.wgsl"),
            Kernel::RadixCount => shader!("radix_count.wgsl"),
            Kernel::RadixScatter => shader!("radix_scatter.wgsl"),
            Kernel::RadixTiles => shader!("radix_tiles.wgsl"),
            Kernel::Hierarchy => shader!("hierarchy.wgsl"),
            Kernel::Fit => shader!("fit.wgsl"),
            Kernel::Raycast => shader!("raycast.wgsl"),
            Kernel::RaycastAnyhit => shader!("raycast_anyhit.wgsl"),
            Kernel::RaycastAll => shader!("raycast_all.wgsl"),
            Kernel::BroadPhase => shader!("broad_phase.wgsl"),
            Kernel::PairTiles => shader!("pair_tiles.wgsl"),
            Kernel::RaySources => shader!("ray_sources.wgsl"),
            Kernel::SourceArgs => shader!("source_args.wgsl"),
            Kernel::NarrowPhase => shader!("narrow_phase.wgsl"),
            Kernel::ContactArgs => shader!("contact_args.wgsl"),
            Kernel::Walk => shader!("walk.wgsl"),
            Kernel::WalkContacts => shader!("walk_contacts.wgsl"),
            Kernel::Response => shader!("response.wgsl"),
            Kernel::EdgeTiles => shader!("edge_tiles.wgsl"),
            Kernel::EdgeSources => shader!("edge_sources.wgsl"),
            Kernel::IntersectArgs => shader!("intersect_args.wgsl"),
            Kernel::Crossings => shader!("crossings.wgsl"),
            Kernel::CrossingLinks => shader!("crossing_links.wgsl"),
            Kernel::ContourHook => shader!("contour_hook.wgsl"),
            Kernel::ContourCompress => shader!("contour_compress.wgsl"),
            Kernel::ContourStart => shader!("contour_start.wgsl"),
            Kernel::RegionsHook => shader!("regions_hook.wgsl"),
            Kernel::RegionAreas => shader!("region_areas.wgsl"),
            Kernel::WrongSide => shader!("wrong_side.wgsl"),
            Kernel::ContourWalk => shader!("contour_walk.wgsl"),
            Kernel::EdgeContacts => shader!("edge_contacts.wgsl"),
            Kernel::UntangleContacts => shader!("untangle_contacts.wgsl"),
        }
    }

    /// The complete WGSL module for the default [`layout::Tuning`] (a software adapter's):
    /// [`Kernel::source_with`].
    pub fn source(self) -> String {
        self.source_with(&layout::Tuning::default())
    }

    /// The complete WGSL module for `tuning`: the constants prelude, then the kernel with each
    /// `//!include shared/<file>.wgsl` line replaced by that file.
    pub fn source_with(self, tuning: &layout::Tuning) -> String {
        let mut out = layout::wgsl_prelude(tuning);
        for line in self.raw_source().lines() {
            match line.trim().strip_prefix("//!include ") {
                Some(path) => {
                    let text = shared_source(path.trim())
                        .unwrap_or_else(|| panic!("{}: unknown include {path}", self.name()));
                    out.push_str(text);
                }
                None => out.push_str(line),
            }
            out.push('\n');
        }
        out
    }
}

/// The shared includes under `shaders/shared/`.
pub const SHARED: [(&str, &str); 19] = [
    ("shared/contact.wgsl", shader!("shared/contact.wgsl")),
    ("shared/bvh.wgsl", shader!("shared/bvh.wgsl")),
    ("shared/bvh_line.wgsl", shader!("shared/bvh_line.wgsl")),
    ("shared/common.wgsl", shader!("shared/common.wgsl")),
    ("shared/sort.wgsl", shader!("shared/sort.wgsl")),
    ("shared/sort_ranks.wgsl", shader!("shared/sort_ranks.wgsl")),
    ("shared/ray.wgsl", shader!("shared/ray.wgsl")),
    ("shared/tiles.wgsl", shader!("shared/tiles.wgsl")),
    ("shared/walk.wgsl", shader!("shared/walk.wgsl")),
    ("shared/classify.wgsl", shader!("shared/classify.wgsl")),
    ("shared/intersect.wgsl", shader!("shared/intersect.wgsl")),
    ("shared/vertices.wgsl", shader!("shared/vertices.wgsl")),
    ("shared/triangles.wgsl", shader!("shared/triangles.wgsl")),
    ("shared/incidence.wgsl", shader!("shared/incidence.wgsl")),
    ("shared/pairs.wgsl", shader!("shared/pairs.wgsl")),
    ("shared/targets.wgsl", shader!("shared/targets.wgsl")),
    ("shared/directed_pair.wgsl", shader!("shared/directed_pair.wgsl")),
    ("shared/tile_offsets.wgsl", shader!("shared/tile_offsets.wgsl")),
    ("shared/bodies.wgsl", shader!("shared/bodies.wgsl")),
];

fn shared_source(path: &str) -> Option<&'static str> {
    SHARED.iter().find(|(p, _)| *p == path).map(|(_, s)| *s)
}

mod cache;
mod groups;
pub mod limits;
mod pipelines;
pub(crate) use cache::DiskCache;
pub use cache::{PipelineCacheDir, PipelineCacheStatus};
pub use groups::KernelGroups;
pub(crate) use pipelines::Pipelines;
pub use pipelines::{PipelineTime, WarmedUp};
