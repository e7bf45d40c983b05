//! The results of a suite run: per implementation, per instance (a scene or one variant of a
//! scaling scene) and for the whole run, with the figures derived from them. The report, the
//! JSON and the plot read these; the runners fill them.

mod classes;
mod keys;
mod kinds;
mod walk;

pub use classes::Classes;
pub use keys::{FrameKeys, differ, keys_of, keys_of_packed};
pub use kinds::{FrameKind, KindFigures, by_kind};
pub use walk::{WALK_OUTCOMES, WalkDiff, WalkFigures};

use raycontact::{BvhStats, GpuContext, HostTimes, IntersectionCounts, Stage};

use crate::args::SuiteArgs;
use crate::scenes::SceneName;
use crate::stats::{fitted_exponent, mean, median};

/// Implementation ids in table order (the ids `--implementations` takes).
pub use crate::args::IMPLEMENTATIONS as ORDER;

/// Which implementation a result is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImplKind {
    /// raycontact on the GPU.
    Gpu,
    /// raycontact's CPU reference.
    Cpu,
    /// parry3d.
    Parry,
}

/// One implementation's figures on one instance.
#[derive(Clone, Debug)]
pub struct ImplResult {
    /// One of [`ORDER`].
    pub id: &'static str,
    /// A readable label (adapter name, thread count).
    pub label: String,
    /// Which implementation.
    pub kind: ImplKind,
    /// Wall time of each timed frame, ms.
    pub frame_ms: Vec<f64>,
    /// What each timed frame did to the BVHs (raycontact; empty for a peer, whose every frame
    /// rebuilds).
    pub frame_kinds: Vec<FrameKind>,
    /// Wall time of the set-up frame before the timed ones (the scene's first detection: its
    /// buffers and first BVHs), ms (raycontact).
    pub setup_ms: Option<f64>,
    /// "gpu-timestamps", "cpu-wall" or "none".
    pub stage_timing: &'static str,
    /// Per stage that ran, its time in each timed frame, ms.
    pub stage_ms: Vec<(Stage, Vec<f64>)>,
    /// Contacts found in each timed frame.
    pub contacts: Vec<usize>,
    /// Sources turned away by `may_reach` in each timed frame (raycontact:
    /// `FrameStats::unreached`).
    pub unreached: Vec<u32>,
    /// Contacts by class, mean per frame.
    pub classes: Classes,
    /// Contacts differing from the CPU reference's in each timed frame.
    pub differ: Vec<usize>,
    /// Compute dispatches per frame (GPU).
    pub dispatches: Vec<u32>,
    /// Timestamp queries written per frame (GPU; none with `--no-gpu-timestamps`).
    pub timestamps: Vec<u32>,
    /// Bytes read back per frame (GPU).
    pub bytes_read_back: Vec<u64>,
    /// Bytes bound for reading and for writing in the last frame (GPU).
    pub bytes_bound: Option<(u64, u64)>,
    /// GPU buffers allocated over the timed frames (GPU; 0 in steady state).
    pub buffers_allocated: Option<u64>,
    /// The host's time around the GPU's work in each timed frame (GPU; `FrameStats::host`).
    pub host: Vec<HostTimes>,
    /// The GPU walk's counts over the trees this implementation's last frame walked (`gpu`,
    /// `gpu-refit`; read back after the run, `suite::rays::trees_walked`).
    pub trees_walked: Option<TreeWalk>,
    /// Rays cast per frame, as this implementation counted them (parry3d).
    pub rays: Vec<u64>,
    /// Iterative detection's figures (`gpu-walk`, `cpu-walk`).
    pub walking: Option<WalkFigures>,
    /// CPU threads it ran on (`None` on the GPU).
    pub threads: Option<usize>,
    /// raycontact's BVH update policy ("rebuild", "refit", "auto"), and what each timed frame
    /// did to the BVHs (`None` for parry3d).
    pub bvh: Option<(&'static str, Vec<BvhStats>)>,
    /// The intersection stages' counters in each timed frame (raycontact with
    /// `--intersections`; empty otherwise).
    pub intersections: Vec<IntersectionCounts>,
}

/// Medians of a GPU frame's host steps (`raycontact::HostTimes`), ms.
#[derive(Clone, Copy, Debug)]
pub struct HostMs {
    /// Recording the commands.
    pub record: f64,
    /// Submitting them.
    pub submit: f64,
    /// Waiting for the contacts to be mapped (the GPU's work).
    pub wait: f64,
    /// Reading the counters out of the mapping (and the contacts, where they are copied out of
    /// it: `HostTimes::copy_ns`).
    pub copy: f64,
    /// Ordering and converting them (usually straight from the mapping).
    pub order: f64,
    /// The five together (the median of each frame's sum).
    pub total: f64,
}

impl ImplResult {
    /// An empty result: the runner fills it.
    pub fn new(id: &'static str, label: String, kind: ImplKind) -> Self {
        ImplResult {
            id,
            label,
            kind,
            frame_ms: Vec::new(),
            frame_kinds: Vec::new(),
            setup_ms: None,
            stage_timing: "none",
            stage_ms: Vec::new(),
            contacts: Vec::new(),
            unreached: Vec::new(),
            classes: Classes::default(),
            differ: Vec::new(),
            dispatches: Vec::new(),
            timestamps: Vec::new(),
            bytes_read_back: Vec::new(),
            bytes_bound: None,
            buffers_allocated: None,
            host: Vec::new(),
            trees_walked: None,
            rays: Vec::new(),
            walking: None,
            threads: None,
            bvh: None,
            intersections: Vec::new(),
        }
    }

    /// The medians over the timed frames of the host's steps around the GPU's work, ms (GPU;
    /// `None` without a timed frame).
    pub fn host_ms(&self) -> Option<HostMs> {
        if self.host.is_empty() {
            return None;
        }
        let of = |step: fn(&HostTimes) -> f64| {
            median(&self.host.iter().map(|h| step(h) / 1e6).collect::<Vec<_>>())
        };
        Some(HostMs {
            record: of(|h| h.record_ns),
            submit: of(|h| h.submit_ns),
            wait: of(|h| h.wait_ns),
            copy: of(|h| h.copy_ns),
            order: of(|h| h.order_ns),
            total: of(|h| h.record_ns + h.submit_ns + h.wait_ns + h.copy_ns + h.order_ns),
        })
    }

    /// The same, on `threads` CPU threads.
    pub fn on_threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    /// The ray stage's rays per second per core for `rays` rays per frame (median stage time,
    /// CPU implementations with stage times).
    pub fn ray_rate_per_core(&self, rays: u64) -> Option<f64> {
        let ms = self.stage_median(Stage::Rays).filter(|&ms| self.stage_timing == "cpu-wall" && ms > 0.0)?;
        Some(rays as f64 / (ms / 1e3) / self.threads? as f64)
    }

    /// Median frame time, ms.
    pub fn median_ms(&self) -> f64 {
        median(&self.frame_ms)
    }

    /// The figures of each kind of frame that occurred (every frame a rebuild for a peer).
    pub fn kinds(&self) -> Vec<KindFigures> {
        if self.frame_kinds.is_empty() {
            return by_kind(&vec![FrameKind::Rebuild; self.frame_ms.len()], &self.frame_ms, &self.dispatches);
        }
        by_kind(&self.frame_kinds, &self.frame_ms, &self.dispatches)
    }

    /// Slowest timed frame, ms.
    pub fn worst_ms(&self) -> f64 {
        self.frame_ms.iter().copied().fold(f64::NAN, f64::max)
    }

    /// Mean frame time, ms.
    pub fn mean_ms(&self) -> f64 {
        mean(&self.frame_ms)
    }

    /// Median frame time over the frames that were (`true`) or were not iterative passes, ms
    /// (every frame is a full pass without iterative detection).
    pub fn median_ms_of(&self, iterative: bool) -> f64 {
        let passes = self.walking.as_ref().map(|w| w.passes.as_slice());
        let v: Vec<f64> = self
            .frame_ms
            .iter()
            .enumerate()
            .filter(|(f, _)| passes.is_some_and(|p| p[*f]) == iterative)
            .map(|(_, ms)| *ms)
            .collect();
        median(&v)
    }

    /// The mean per frame of an intersection counter (`None` without intersection stages).
    pub fn intersection_mean(&self, f: impl Fn(&IntersectionCounts) -> u32) -> Option<f64> {
        (!self.intersections.is_empty())
            .then(|| mean(&self.intersections.iter().map(|c| f64::from(f(c))).collect::<Vec<_>>()))
    }

    /// The median time of the crossings stage, and of crossings + contour + analysis, over the
    /// median time of the rays stage (`None` unless all were timed).
    pub fn intersection_ratios(&self) -> Option<(f64, f64)> {
        let rays = self.stage_median(Stage::Rays)?;
        let crossings = self.stage_median(Stage::Crossings)?;
        let all = crossings
            + self.stage_median(Stage::Contour).unwrap_or(0.0)
            + self.stage_median(Stage::Analysis).unwrap_or(0.0);
        Some((crossings / rays, all / rays))
    }

    /// Median time of a stage, ms, when it was timed.
    pub fn stage_median(&self, s: Stage) -> Option<f64> {
        self.stage_ms.iter().find(|(x, _)| *x == s).map(|(_, v)| median(v))
    }

    /// Sum of the stage medians, ms (the GPU time of a frame with timestamps).
    pub fn stages_total_ms(&self) -> Option<f64> {
        (!self.stage_ms.is_empty()).then(|| self.stage_ms.iter().map(|(_, v)| median(v)).sum())
    }

    /// Mean contacts per frame.
    pub fn mean_contacts(&self) -> f64 {
        mean(&self.contacts.iter().map(|&c| c as f64).collect::<Vec<_>>())
    }
}

/// The GPU walk's counts over one GPU implementation's own trees (its last frame's, read back),
/// per ray of the instance's last frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TreeWalk {
    /// Nodes visited per ray, every ray walked on its own (the software tuning's walk), as
    /// [`RayFigures::nodes_per_ray_gpu_walk`] counts them.
    pub nodes_per_ray: f64,
    /// The same with a cloth vertex's two rays walked together (the GPU tuning's walk), as
    /// [`RayFigures::nodes_per_ray_gpu_line_walk`] counts them.
    pub nodes_per_ray_line: f64,
    /// Triangles tested per ray.
    pub triangles_per_ray: f64,
}

/// Figures of the rays of the last frame, counted by replaying the CPU reference's full pass
/// (`cpu::classify` over every tested pair) with a counting tracer on its BVHs.
#[derive(Clone, Copy, Debug, Default)]
pub struct RayFigures {
    /// Pairs of bodies tested (self pairs included).
    pub pairs: usize,
    /// Source vertices classified (in the box filter), over every directed pair.
    pub sources: u64,
    /// Traces along minus the source vertex's normal on the target (on the body itself for a
    /// self pair).
    pub inward_rays: u64,
    /// Traces along the source vertex's normal on the target.
    pub outward_rays: u64,
    /// Traces on the source's own body (is the hit behind it?).
    pub check_rays: u64,
    /// Nodes visited (boxes tested: the root's, two a step) per ray by the GPU's traversal
    /// (short stack, its CPU twin), every ray walked on its own (the software tuning's walk),
    /// passing fans as the GPU tuning does (`Tuning::fan_walks`).
    pub nodes_per_ray_gpu_walk: f64,
    /// [`Self::nodes_per_ray_gpu_walk`] with a cloth vertex's two rays walked together
    /// (`Tuning::line_walks`, the GPU tuning's walk): each node read once for both.
    pub nodes_per_ray_gpu_line_walk: f64,
    /// Boxes tested per ray by the CPU backend's traversal (its 4-wide trees: every lane of
    /// every wide node visited, plus the root); an exit trace that the kernels' exit memo
    /// answers counts none, as in the GPU walk (`suite/rays.rs`).
    pub nodes_per_ray_cpu_walk: f64,
    /// Triangles tested per ray (GPU traversal).
    pub triangles_per_ray: f64,
    /// Wide nodes fetched per ray by the CPU backend's traversal (each node once for a cloth
    /// vertex's two rays walked together).
    pub wide_nodes_per_ray_cpu_walk: f64,
    /// Triangle records tested per ray by the CPU backend's traversal.
    pub triangles_per_ray_cpu_walk: f64,
    /// Rays whose short stack overflowed and finished with the stackless walk (GPU traversal).
    pub stack_fallbacks: u64,
    /// Sources (directed pair, vertex) whose rays classified by their re-projected length were
    /// not cast: `may_reach` found nothing of the target within the reach
    /// (`FrameStats::unreached`).
    pub unreached: u64,
    /// The most nodes one source vertex's traces visit together (GPU traversal, a cloth
    /// vertex's two rays walked together as the GPU tuning walks them): the serial work of the
    /// narrow phase's busiest invocation, which a GPU's ray stage cannot take less time than.
    pub longest_source_nodes: u64,
    /// That source vertex: the instance's body index and the vertex (`None` without sources).
    pub longest_source: Option<(usize, u32)>,
    /// The most triangles around one vertex of any body: the longest sum `vertex_normals` makes
    /// for one vertex.
    pub largest_valence: u32,
}

impl RayFigures {
    /// The longest source as `<body name> vertex <index>` (`bodies`: the instance's, in order),
    /// empty without sources.
    pub fn longest_source_name(
        &self,
        bodies: &[(String, raycontact::BodyKind, usize, usize, bool)],
    ) -> String {
        match self.longest_source {
            Some((b, v)) => format!("{} vertex {v}", bodies.get(b).map_or("?", |b| b.0.as_str())),
            None => String::new(),
        }
    }

    /// Rays per frame.
    pub fn rays(&self) -> u64 {
        self.inward_rays + self.outward_rays + self.check_rays
    }
}

/// One instance's results.
#[derive(Clone, Debug)]
pub struct InstanceResult {
    /// The scene.
    pub scene: SceneName,
    /// The variant.
    pub variant: String,
    /// The size parameter of a scaling scene.
    pub parameter: Option<f64>,
    /// Bodies: name, kind, triangles, vertices, moving.
    pub bodies: Vec<(String, raycontact::BodyKind, usize, usize, bool)>,
    /// Timed frames.
    pub frames: usize,
    /// The prediction distance of every implementation.
    pub prediction: f32,
    /// Ray figures of the last frame.
    pub rays: RayFigures,
    /// The implementations, reference (cpu-rayon) first.
    pub impls: Vec<ImplResult>,
    /// Seconds the instance took in all (setup, every implementation, the ray figures).
    pub wall_s: f64,
}

impl InstanceResult {
    /// Triangles over all bodies.
    pub fn triangles(&self) -> usize {
        self.bodies.iter().map(|b| b.2).sum()
    }

    /// Vertices over all bodies.
    pub fn vertices(&self) -> usize {
        self.bodies.iter().map(|b| b.3).sum()
    }

    /// An implementation's result.
    pub fn get(&self, id: &str) -> Option<&ImplResult> {
        self.impls.iter().find(|i| i.id == id)
    }

    /// The implementations that ran, in table order.
    pub fn ordered(&self) -> Vec<&ImplResult> {
        ORDER.iter().filter_map(|id| self.get(id)).collect()
    }
}

/// The whole run.
#[derive(Debug)]
pub struct SuiteResult {
    /// The command line's options, as given.
    pub args: SuiteArgs,
    /// The GPU context, when one was used.
    pub gpu: Option<GpuContext>,
    /// Results, scene by scene, variant by variant.
    pub instances: Vec<InstanceResult>,
    /// Total seconds.
    pub wall_s: f64,
    /// rayon threads of the "rayon" implementations.
    pub threads: usize,
    /// Whether the CPU implementations' workers were pinned to cores.
    pub pinned: bool,
}

impl SuiteResult {
    /// GPU against CPU reference: (frames compared, frames whose counts differ, worst set
    /// difference, frames whose sources turned away by `may_reach` differ).
    pub fn agreement(&self) -> (usize, usize, usize, usize) {
        let (mut frames, mut mismatched, mut worst, mut unreached) = (0, 0, 0, 0);
        for r in &self.instances {
            let (Some(g), Some(c)) = (r.get("gpu"), r.get("cpu-rayon")) else { continue };
            for (k, (a, b)) in g.contacts.iter().zip(&c.contacts).enumerate() {
                frames += 1;
                mismatched += usize::from(a != b);
                worst = worst.max(g.differ.get(k).copied().unwrap_or(0));
                unreached += usize::from(g.unreached.get(k) != c.unreached.get(k));
            }
        }
        (frames, mismatched, worst, unreached)
    }
}

/// The fitted exponent of each implementation's frame time against the scene's parameter, over
/// the variants of a scaling scene.
pub fn exponents(results: &[&InstanceResult]) -> Vec<(&'static str, Option<f64>)> {
    ORDER
        .iter()
        .filter(|id| results.iter().any(|r| r.get(id).is_some()))
        .map(|id| {
            let pts: Vec<(f64, f64)> =
                results.iter().filter_map(|r| Some((r.parameter?, r.get(id)?.median_ms()))).collect();
            (*id, fitted_exponent(&pts))
        })
        .collect()
}
