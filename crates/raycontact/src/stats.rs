//! Machine-independent figures of a frame: dispatches and bytes moved per stage, and GPU times
//! where the adapter has timestamps.

use std::fmt;

/// A stage of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Stage {
    /// Copies of previous and new positions.
    Upload,
    /// `vertex_normals` (on the CPU backend with its wide trees on, when its trees are brought
    /// up to date, with the triangle boxes of `triangle_bounds`, from the same corners and cross
    /// products).
    Normals,
    /// `triangle_bounds` (and the clearing of the per-frame accumulators; on the CPU backend
    /// with its wide trees on, when its trees are brought up to date, the body boxes alone).
    Bounds,
    /// `morton`.
    Morton,
    /// `radix_scatter`, one dispatch a pass (or one `radix_tiles` dispatch).
    Sort,
    /// `hierarchy` (on the CPU backend's rebuild with its wide trees on, the hierarchy and its
    /// boxes, built in one pass that gives what `hierarchy` then `fit` give, and each body's
    /// 4-wide tree collapsed right after its binary tree, in the same task).
    Hierarchy,
    /// `fit` (on the CPU backend's refit, `fit` and the refit of the 4-wide trees; on its rebuild
    /// with its wide trees on, the binary boxes being fitted and the wide trees collapsed with
    /// the hierarchy, only the trees' SAH costs when its update policy refits).
    Fit,
    /// `broad_phase` and `pair_tiles`: the pairs to test and the narrow phase's layout.
    Pairs,
    /// Ray casts: `narrow_phase` (or a ray-cast query).
    Rays,
    /// Edge–triangle crossings: `edge_tiles`, `edge_sources`, `crossings` (and
    /// `intersect_args`).
    Crossings,
    /// The intersection contour: `crossing_links`, `contour_hook`, `contour_compress`,
    /// `contour_start`.
    Contour,
    /// Global intersection analysis and the contacts of the intersections: `regions_hook`,
    /// `region_areas`, `wrong_side`, `contour_walk`, `untangle_contacts`, `edge_contacts`.
    Analysis,
    /// Copies to the host.
    Readback,
}

impl Stage {
    /// Every stage, in frame order.
    pub const ALL: [Stage; 13] = [
        Stage::Upload,
        Stage::Normals,
        Stage::Bounds,
        Stage::Morton,
        Stage::Sort,
        Stage::Hierarchy,
        Stage::Fit,
        Stage::Pairs,
        Stage::Rays,
        Stage::Crossings,
        Stage::Contour,
        Stage::Analysis,
        Stage::Readback,
    ];

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Upload => "upload",
            Stage::Normals => "normals",
            Stage::Bounds => "bounds",
            Stage::Morton => "morton",
            Stage::Sort => "sort",
            Stage::Hierarchy => "hierarchy",
            Stage::Fit => "fit",
            Stage::Pairs => "pairs",
            Stage::Rays => "rays",
            Stage::Crossings => "crossings",
            Stage::Contour => "contour",
            Stage::Analysis => "analysis",
            Stage::Readback => "readback",
        }
    }

    /// The compute pass label, `raycontact.stage.<name>`.
    pub fn label(self) -> &'static str {
        match self {
            Stage::Upload => "raycontact.stage.upload",
            Stage::Normals => "raycontact.stage.normals",
            Stage::Bounds => "raycontact.stage.bounds",
            Stage::Morton => "raycontact.stage.morton",
            Stage::Sort => "raycontact.stage.sort",
            Stage::Hierarchy => "raycontact.stage.hierarchy",
            Stage::Fit => "raycontact.stage.fit",
            Stage::Pairs => "raycontact.stage.pairs",
            Stage::Rays => "raycontact.stage.rays",
            Stage::Crossings => "raycontact.stage.crossings",
            Stage::Contour => "raycontact.stage.contour",
            Stage::Analysis => "raycontact.stage.analysis",
            Stage::Readback => "raycontact.stage.readback",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Figures of one stage of one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageStats {
    /// Compute dispatches.
    pub dispatches: u32,
    /// Buffer copies and clears.
    pub copies: u32,
    /// Bytes of the buffers bound for reading (every binding counts as read; the used part of
    /// each buffer, not its capacity).
    pub bytes_read: u64,
    /// Bytes of the buffers bound for writing, plus bytes copied or cleared.
    pub bytes_written: u64,
    /// Timestamp queries its compute pass writes: two where the scene times its GPU stages
    /// ([`Scene::set_gpu_timestamps`](crate::Scene::set_gpu_timestamps), on an adapter with
    /// timestamps) and reads the frame back itself; none in a frame or detection recorded into
    /// a caller's encoder ([`Scene::record_update`](crate::Scene::record_update),
    /// [`Scene::record_detect`](crate::Scene::record_detect)), where nothing would read them.
    pub timestamps: u32,
    /// GPU time in nanoseconds from timestamp queries; `None` without timestamps, and for a
    /// stage that did not run this frame (it records no pass).
    pub gpu_ns: Option<f64>,
    /// Host wall-clock time in nanoseconds (the CPU backend's stage time).
    pub cpu_ns: Option<f64>,
}

impl StageStats {
    pub(crate) fn add_copy(&mut self, bytes: u64) {
        self.copies += 1;
        self.bytes_read += bytes;
        self.bytes_written += bytes;
    }

    pub(crate) fn add_clear(&mut self, bytes: u64) {
        self.copies += 1;
        self.bytes_written += bytes;
    }
}

/// What a frame did to the BVHs ([`FrameStats::bvh`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum BvhAction {
    /// No frame ran (no bodies, or a detection recorded without its frame).
    #[default]
    None,
    /// Rebuilt: Morton codes, sort, hierarchy and fit.
    Rebuilt,
    /// Refitted: the fit alone, on the tree of the last rebuild.
    Refitted,
    /// Left as they were, for an iterative pass that needs no BVH (ray queries wait for the next
    /// update): the frame computed the vertex normals alone, or nothing where only the walk
    /// needs them (it computes its sources' normals itself).
    Kept,
}

impl BvhAction {
    /// A short name: "none", "rebuilt", "refitted" or "kept".
    pub fn name(self) -> &'static str {
        match self {
            BvhAction::None => "none",
            BvhAction::Rebuilt => "rebuilt",
            BvhAction::Refitted => "refitted",
            BvhAction::Kept => "kept",
        }
    }
}

/// What a frame did to the BVHs under the scene's [`BvhUpdate`](crate::BvhUpdate), and the
/// trees' quality.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BvhStats {
    /// Rebuilt, refitted or kept.
    pub action: BvhAction,
    /// The largest ratio over the bodies of a tree's SAH cost
    /// ([`sah_cost`](crate::sah_cost)) after this frame's refit to its cost right after the
    /// last rebuild (1 on a rebuild; for `Auto`, the ratio measured before it decided), when it
    /// was measured: always on the CPU backend, with [`BvhUpdate::Auto`](crate::BvhUpdate) on
    /// the GPU. Under [`BvhUpdate::Refit`](crate::BvhUpdate) the CPU backend measures a moving
    /// body's tree that its rays walk, its 4-wide tree refitted on its own (the binary tree
    /// is then fitted only where something reads it): the same ratio over that tree's boxes,
    /// each a node of the binary tree it was collapsed from.
    pub degradation: Option<f32>,
    /// The refit found a body whose degenerate triangles are not those its tree was built with
    /// (measured where `degradation` is): `Auto` then rebuilt; `Refit` kept the tree, whose
    /// contacts may then differ from a rebuild's.
    pub degenerate_changed: bool,
    /// Host time of `Auto`'s measure on the GPU backend (the CPU twins of bounds and fit, and
    /// of the rebuild when it rebuilt), and of the trees of its bodies at rest (`rest_trees`:
    /// built and written in the frame, or, built in the background, their copies of the
    /// bodies' data and the writes), in nanoseconds.
    pub host_ns: Option<f64>,
    /// Bodies at rest whose LBVH the GPU backend replaced by a binned-SAH tree over the same
    /// leaves, built on the host, in this frame: a body that the frame's update keeps while it
    /// rebuilds or refits others, its tree an LBVH rebuilt at its positions (not refitted
    /// since), newly at rest in this frame, or, its tree built in the background
    /// ([`Scene::set_background_trees`](crate::Scene::set_background_trees)), since an earlier
    /// one. Its rays then enter fewer boxes, with the same hits, until it moves (then rebuilt as
    /// an LBVH, or the same tree refitted). On the CPU backend, the bodies at rest, or static
    /// with a tree made anew, whose 4-wide tree this frame collapsed from such a tree, built in
    /// the frame or, in the background, since an earlier one.
    pub rest_trees: u32,
    /// Bodies whose LBVH this frame rebuilt on the GPU under a refitting policy
    /// ([`BvhUpdate::Refit`](crate::BvhUpdate::Refit), `Auto`), for which the GPU backend makes
    /// on the host the binned-SAH tree over the same leaves, to be written over the LBVH and
    /// refitted from then on (as the CPU backend makes its wide trees under these policies):
    /// by default started in the background (handed to the trees' thread then, or by a later
    /// frame when too many builds wait for it), and written by a later frame that refits the body,
    /// keeps it while refitting others (its boxes refitted on the host first) or in which it
    /// rests, once done ([`Self::refit_trees_written`]; dropped if the body is rebuilt first);
    /// with
    /// [`Scene::set_background_trees(false)`](crate::Scene::set_background_trees), built in
    /// this frame and written before the next one's commands. On the CPU backend, whose 4-wide
    /// trees of these bodies are collapsed from such a tree: the trees started in the
    /// background (the bodies walk their LBVHs' collapse until then) or, with the background
    /// off, collapsed in this frame.
    pub refit_trees: u32,
    /// Trees that earlier frames started in the background for the bodies they rebuilt
    /// ([`Self::refit_trees`]), written over those bodies' LBVHs in this frame (which refits
    /// them, keeps them while refitting others, or in which they rest); on the CPU backend, put
    /// in place of those bodies' 4-wide trees by this frame's update (refitted to the bodies'
    /// positions where they moved since).
    pub refit_trees_written: u32,
}

/// Host time of a detection's steps around the GPU's work, in nanoseconds: where the wall time
/// of a GPU frame goes besides its kernels (on a real GPU most of it: on the H200 machine,
/// `cloth-layers`' frame took 3.6-3.9 ms, of which 1.1 waiting for the GPU). Measured on every
/// detection that reads its contacts back; 0 for a step that did not run (the CPU backend
/// records, submits, waits for and copies nothing: only [`Self::order_ns`] is its own).
/// The steps do not cover the whole frame: the intersections' and timestamps' readbacks and
/// the scene's bookkeeping are not split out.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HostTimes {
    /// Recording the frame's and the detection's commands (the positions' uploads queued with
    /// them).
    pub record_ns: f64,
    /// Submitting them (`Queue::submit`).
    pub submit_ns: f64,
    /// From the submission until the counters and contacts were mapped for reading: the GPU's
    /// work, and the wait for it (with a second copy's round trip, where the contacts
    /// outgrew the frame's copy).
    pub wait_ns: f64,
    /// Reading the counters out of the mapping, and the contacts where they are copied out of
    /// it: only where they outgrew the frame's copy (read back by a second one), or in a
    /// mapping not aligned for them; else they are read in place by the ordering
    /// ([`Self::order_ns`]).
    pub copy_ns: f64,
    /// Putting the contacts in their documented order and converting them to
    /// [`Contact`](crate::Contact)s (both backends; a GPU frame's usually straight from the
    /// readback's mapping).
    pub order_ns: f64,
}

/// Figures of one frame, by stage.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameStats {
    /// Per stage, in [`Stage::ALL`] order; stages that did not run are all zero.
    pub stages: Vec<(Stage, StageStats)>,
    /// GPU buffers created during the frame (0 in steady state).
    pub buffers_allocated: u64,
    /// Bytes read back to the host.
    pub bytes_read_back: u64,
    /// The detection was an iterative pass ([`crate::walk::Iterative`]): last frame's contacts
    /// were re-cast by walking, not every ray through the BVH.
    pub iterative: bool,
    /// Contacts of the last frame re-cast by the iterative pass.
    pub walked: u32,
    /// Outcomes of the iterative pass's walks (targets and source bodies' own traces) and its
    /// BVH fallback casts.
    pub walk: crate::layout::WalkCounts,
    /// Sources of a full pass: the (directed pair, vertex) entries the narrow phase classified,
    /// as `ray_sources` lists them (mostly the vertices within the pair's reach of the other
    /// body's box). The same on both backends; 0 in an iterative pass, which re-casts last
    /// frame's contacts instead ([`Self::walked`]).
    pub sources: u32,
    /// Of [`Self::sources`], those whose rays classified by their re-projected length were not
    /// cast, the target having nothing within the pair's reach of the vertex (the bounded query
    /// `may_reach`, asked before those rays: of every pair with another body, and of a cloth's
    /// self pair when its mesh is coarse next to the reach,
    /// [`SELF_REACH_SIZE`](crate::internals::layout::SELF_REACH_SIZE)). The same on both
    /// backends; 0 in an iterative pass.
    pub unreached: u32,
    /// What the frame did to the BVHs, and their quality.
    pub bvh: BvhStats,
    /// The intersection stages' counters
    /// ([`Scene::set_intersections`](crate::Scene::set_intersections); zeros when off).
    pub intersections: crate::IntersectionCounts,
    /// Host time of the detection's steps around the GPU's work.
    pub host: HostTimes,
}

impl FrameStats {
    /// The figures of a stage, created on first use.
    pub fn stage(&mut self, s: Stage) -> &mut StageStats {
        if self.stages.is_empty() {
            self.stages = Stage::ALL.iter().map(|&s| (s, StageStats::default())).collect();
        }
        let i = Stage::ALL.iter().position(|&x| x == s).expect("every stage is listed");
        &mut self.stages[i].1
    }

    /// The figures of a stage, if it ran.
    pub fn get(&self, s: Stage) -> Option<&StageStats> {
        self.stages.iter().find(|(x, _)| *x == s).map(|(_, st)| st)
    }

    /// Dispatches over all stages.
    pub fn dispatches(&self) -> u32 {
        self.stages.iter().map(|(_, s)| s.dispatches).sum()
    }

    /// Bytes read over all stages.
    pub fn bytes_read(&self) -> u64 {
        self.stages.iter().map(|(_, s)| s.bytes_read).sum()
    }

    /// Bytes written over all stages.
    pub fn bytes_written(&self) -> u64 {
        self.stages.iter().map(|(_, s)| s.bytes_written).sum()
    }

    /// Timestamp queries written over all stages.
    pub fn timestamps(&self) -> u32 {
        self.stages.iter().map(|(_, s)| s.timestamps).sum()
    }

    /// GPU time over all stages in nanoseconds, when timestamps were available.
    pub fn gpu_ns(&self) -> Option<f64> {
        let times: Vec<f64> = self.stages.iter().filter_map(|(_, s)| s.gpu_ns).collect();
        (!times.is_empty()).then(|| times.iter().sum())
    }
}
