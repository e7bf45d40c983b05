//! The scene suite: every named scene run, frame by frame, by the GPU adapter, the CPU reference
//! (single-threaded and with rayon) and parry3d, in one run, with the contact sets compared.

use std::path::PathBuf;
use std::time::Instant;

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU64};

use glam::Vec3;
use raycontact::contact_flags;
use raycontact::internals::cpu::{self, Narrow, Rays, Traced, Tracer};
use raycontact::internals::layout::{BodyPair, NONE, Ray, SELF_CLOTH};
use raycontact::{
    BodyId, Contacts, FrameStats, GpuContext, Iterative, Pairs, Scene, Stage, WalkCounts, WalkFallback,
};
use rayon::prelude::*;

use crate::peers::{Key, Parry};
use crate::progress::Progress;
use crate::report;
use crate::scenes::{self, Instance, SceneName, SceneOptions, SizePreset, WalkSetup};

/// The long help of the suite: the scenes and what the figures mean.
pub const AFTER_HELP: &str = "\
Scenes (--scene, repeatable or comma-separated; default: all but `files`, which runs when --files
is given):
  hermann-tori   two interpenetrating deforming tori of 1600 triangles each (Hermann et al. 2008,
                 Figure 10)
  tori-scaling   a chain of N interpenetrating tori of 1600 triangles, N = 1, 2, 4 ... 64 (Hermann
                 et al. 2008, Figure 13: time should grow linearly with N); the fitted exponent of
                 frame time against N is printed, and --plot draws it
  resting-pile   layers of concave meshes (tori of 900 triangles) settled on a ground, moving a
                 few thousandths per frame (the avalanche scene of Lehericey et al. 2013, IRTCD):
                 50 tori by default, 86 with --size paper (a full GPU frame of about a second on
                 lavapipe); walking against full traversal
  slow-pair      two interlocked tori of 1600 triangles each (6400 with --size paper) deforming
                 slowly (the slowly deforming pair of IRTCD); walking against full traversal
  cloth-layers   a closed body of ~10k vertices wearing three layered garments of ~11k, 2.7k and
                 3.8k vertices (offset shells of the body; cloth bodies), breathing and rippling
                 (Lehericey et al. 2015)
  eight-sheets   eight cloth sheets of 4.2k vertices draped over a static scene of ~9k vertices
                 (ground, sphere, cylinder) (Lehericey et al. 2015)
  mesh-scaling   one pair of interpenetrating tori from 10k to 1M triangles in all (--size paper
                 or --triangles); the fitted exponent of frame time against size is printed
  files          two mesh files (--files A B; OBJ or OFF, read as `detect` reads them), B turning
                 about its centre

Every scene is deterministic (--seed) and driven by scripted motion over its frames; frame 0
warms up (layout, pipelines) and is not timed. --size tiny|default|paper picks the sizes:
default finishes in about a minute on lavapipe; paper runs the papers' sizes. The cloth scenes
(half-thickness e = 0.004) run with a prediction distance of 0.02 (5 e) on every
implementation, the other scenes with none; cloth self pairs (C, C) are tested (the default).

Implementations, all in the same run, doing the same work every frame:
  gpu            raycontact on the GPU adapter (Scene::detect: BVH rebuild, broad phase, rays,
                 readback; one submission)
  cpu-1          raycontact's CPU reference (the kernels' CPU twins), single-threaded
  cpu-rayon      the CPU reference with rayon over all cores (the contacts' reference)
  gpu-walk       (resting-pile, slow-pair) gpu with iterative detection (Lehericey et al. 2013):
                 full passes and iterative passes that re-cast last frame's contacts by walking
                 the triangle adjacency; threshold 2 frames of the fastest vertex's motion per
                 body (4 steps for a pair), confidence 2, fallback drop (the paper's: an
                 iterative pass computes only the normals), a full pass at least every 64 frames
  cpu-walk       the same on the CPU reference with rayon
  parry-1        parry3d 0.31, one thread: every BVH rebuilt from the triangle boxes each frame
                 (binned SAH), the same rays (every case: inward and outward, cloth, self pairs)
                 cast through it, classified by raycontact's rules (cpu::classify)
  parry-rayon    the same with rayon over all cores
--cpu leaves the GPU out (no adapter needed).

Figures:
  frame ms       median wall time of a frame (set positions + detect, contacts on the host)
  stage ms       per stage (normals, bounds, morton, sort, hierarchy, fit, pairs, rays): GPU
                 timestamp queries when the adapter has them (\"gpu-timestamps\"), the CPU
                 reference's wall time per stage (\"cpu-wall\"); without timestamps the GPU has
                 only frame wall time
  contacts       contacts per frame (mean over the timed frames), by class from the contact
                 flags: collision / prediction, inward / outward ray, inverted, walked
  differ         contacts (source body, vertex, target body, inward or outward ray) found by one
                 implementation and not by the CPU reference (rayon) or the other way round,
                 worst frame
  rays/frame     rays traced in the last frame by the classification of every source vertex of
                 every tested pair (the CPU reference's full pass, replayed with counting):
                 inward and outward rays to the target, plus the own-body traces
  Mrays/s        rays per frame / frame time
  nodes/ray      BVH nodes whose box was tested per ray, for the GPU's traversal (short stack,
                 counted by its CPU twin) and for the CPU reference's ordered traversal
  dispatches     compute dispatches per GPU frame; read back: bytes copied to the host per frame
  vs X           speed-up: X's frame time / this implementation's frame time
  walking        per walking implementation: passes (iterative / full), median frame time of
                 its iterative passes and speed-up against its full traversal's median frame
                 (gpu-walk vs gpu, cpu-walk vs cpu-rayon), the speed-up of the mean frame (full
                 passes included), contacts that differ from the full traversal at the same
                 frame (walked ones it lacks or with another triangle, plus its ones missing) as
                 a percentage of its contacts, and the walk outcomes

Output: a table on stdout; --json PATH writes every figure with the adapter, driver and CPU
(schema \"raycontact.bench/2\", docs/bench-json.md); --plot PATH.svg draws the scaling scenes
(frame time against N or size, one line per implementation); a progress bar on stderr for runs
longer than a few seconds (--no-progress hides it).";

/// The scene suite (the default command).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SuiteArgs {
    /// Scenes to run (repeatable or comma-separated; default: every scene but `files`, plus
    /// `files` when --files is given).
    #[arg(long = "scene", value_enum, value_delimiter = ',', value_name = "SCENE")]
    pub scenes: Vec<SceneName>,
    /// Timed frames per scene (default: per scene and size preset).
    #[arg(long)]
    pub frames: Option<usize>,
    /// Size preset: tiny (tests), default (about a minute on lavapipe), paper (the papers' sizes).
    #[arg(long, value_enum, default_value_t = SizePreset::Default)]
    pub size: SizePreset,
    /// Tori counts of tori-scaling (comma-separated), instead of the preset's.
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    pub tori: Option<Vec<u32>>,
    /// Triangle counts (both bodies together) of mesh-scaling, instead of the preset's.
    #[arg(long, value_delimiter = ',', value_name = "T,...")]
    pub triangles: Option<Vec<u32>>,
    /// The two mesh files of the `files` scene (OBJ or OFF).
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub files: Option<Vec<PathBuf>>,
    /// Translate file B by (x, y, z) before the run.
    #[arg(long, value_name = "X,Y,Z", allow_hyphen_values = true)]
    pub translate_b: Option<String>,
    /// Seed of the scenes' random placement and motion.
    #[arg(long, default_value_t = 2008)]
    pub seed: u64,
    /// Pick the first GPU adapter whose name contains this (default: WGPU_ADAPTER_NAME, then the
    /// default adapter).
    #[arg(long, value_name = "NAME")]
    pub adapter: Option<String>,
    /// The CPU reference (and parry3d) alone: no GPU adapter.
    #[arg(long)]
    pub cpu: bool,
    /// Leave parry3d out.
    #[arg(long)]
    pub no_parry: bool,
    /// Write every figure as JSON (schema raycontact.bench/2, docs/bench-json.md).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Draw the scaling scenes as SVG (frame time against N or size, one line per
    /// implementation).
    #[arg(long, value_name = "PATH.svg")]
    pub plot: Option<PathBuf>,
    /// No progress bar on stderr.
    #[arg(long)]
    pub no_progress: bool,
}

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

/// Contacts of a frame by class (from the contact flags; the classes overlap).
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Classes {
    /// `COLLISION`.
    pub collision: f64,
    /// `PREDICTION`.
    pub prediction: f64,
    /// `INWARD_RAY`.
    pub inward: f64,
    /// `OUTWARD_RAY`.
    pub outward: f64,
    /// `INVERTED`.
    pub inverted: f64,
    /// `WALKED`.
    pub walked: f64,
}

impl Classes {
    fn of(flags: impl Iterator<Item = u32>) -> Self {
        let mut c = Classes::default();
        for f in flags {
            let on = |bit: u32| if f & bit != 0 { 1.0 } else { 0.0 };
            c.collision += on(contact_flags::COLLISION);
            c.prediction += on(contact_flags::PREDICTION);
            c.inward += on(contact_flags::INWARD_RAY);
            c.outward += on(contact_flags::OUTWARD_RAY);
            c.inverted += on(contact_flags::INVERTED);
            c.walked += on(contact_flags::WALKED);
        }
        c
    }

    fn add(&mut self, o: &Classes) {
        self.collision += o.collision;
        self.prediction += o.prediction;
        self.inward += o.inward;
        self.outward += o.outward;
        self.inverted += o.inverted;
        self.walked += o.walked;
    }

    fn scaled(&self, s: f64) -> Classes {
        Classes {
            collision: self.collision * s,
            prediction: self.prediction * s,
            inward: self.inward * s,
            outward: self.outward * s,
            inverted: self.inverted * s,
            walked: self.walked * s,
        }
    }
}

/// A frame's contacts as compared: each key with the triangle it hit, sorted by key.
pub type FrameKeys = Vec<(Key, u32)>;

/// How a walking implementation's contacts of one frame differ from its full traversal's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkDiff {
    /// Contacts of the full traversal.
    pub full: usize,
    /// Contacts of the walking implementation that the full traversal lacks.
    pub extra: usize,
    /// Contacts of both, but on another triangle.
    pub other_triangle: usize,
    /// Contacts of the full traversal that the walking implementation lacks.
    pub missing: usize,
}

impl WalkDiff {
    /// Compares a walking frame with the full traversal's frame.
    pub fn of(walk: &[(Key, u32)], full: &[(Key, u32)]) -> Self {
        let mut d = WalkDiff { full: full.len(), ..WalkDiff::default() };
        let (mut i, mut j) = (0, 0);
        while i < walk.len() && j < full.len() {
            match walk[i].0.cmp(&full[j].0) {
                std::cmp::Ordering::Less => {
                    d.extra += 1;
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    d.missing += 1;
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    d.other_triangle += usize::from(walk[i].1 != full[j].1);
                    i += 1;
                    j += 1;
                }
            }
        }
        d.extra += walk.len() - i;
        d.missing += full.len() - j;
        d
    }

    /// Contacts that differ.
    pub fn differ(&self) -> usize {
        self.extra + self.other_triangle + self.missing
    }
}

/// The figures of a walking implementation (iterative detection).
#[derive(Clone, Debug)]
pub struct WalkFigures {
    /// The implementation it is compared with: its own full traversal (`gpu` or `cpu-rayon`).
    pub full: &'static str,
    /// The scene's threshold and motion.
    pub setup: WalkSetup,
    /// The settings passed to the library.
    pub iterative: Iterative,
    /// Per timed frame: the detection was an iterative pass.
    pub passes: Vec<bool>,
    /// Per timed frame: contacts re-cast by walking (0 for a full pass).
    pub walked: Vec<u32>,
    /// Walk outcomes and fallback casts, summed over the timed frames.
    pub counts: WalkCounts,
    /// Per timed frame: how the contacts differ from the full traversal's at the same frame.
    pub diff: Vec<WalkDiff>,
}

impl WalkFigures {
    /// Timed frames that were iterative passes.
    pub fn iterative_frames(&self) -> usize {
        self.passes.iter().filter(|&&p| p).count()
    }

    /// Contacts that differ from the full traversal over `frames`, as a fraction of the full
    /// traversal's contacts in those frames (0 when it has none).
    fn fraction(&self, frames: impl Iterator<Item = usize>) -> f64 {
        let (mut differ, mut full) = (0usize, 0usize);
        for f in frames {
            differ += self.diff[f].differ();
            full += self.diff[f].full;
        }
        if full == 0 { 0.0 } else { differ as f64 / full as f64 }
    }

    /// The fraction of contacts that differ, over every timed frame.
    pub fn fraction_all(&self) -> f64 {
        self.fraction(0..self.diff.len())
    }

    /// The fraction of contacts that differ, over the iterative passes.
    pub fn fraction_iterative(&self) -> f64 {
        self.fraction((0..self.diff.len()).filter(|&f| self.passes[f]))
    }

    /// The sum of the per-frame differences.
    pub fn total(&self) -> WalkDiff {
        self.diff.iter().fold(WalkDiff::default(), |a, d| WalkDiff {
            full: a.full + d.full,
            extra: a.extra + d.extra,
            other_triangle: a.other_triangle + d.other_triangle,
            missing: a.missing + d.missing,
        })
    }
}

/// Names of the walk outcome codes, in code order (`raycontact::internals::layout::WALK_*`).
pub const WALK_OUTCOMES: [&str; 7] = ["hit", "boundary", "loop", "steps", "range", "parallel", "no_start"];

/// One implementation's figures on one instance.
#[derive(Clone, Debug)]
pub struct ImplResult {
    /// "gpu", "cpu-1", "cpu-rayon", "gpu-walk", "cpu-walk", "parry-1" or "parry-rayon".
    pub id: &'static str,
    /// A readable label (adapter name, thread count).
    pub label: String,
    /// Which implementation.
    pub kind: ImplKind,
    /// Wall time of each timed frame, ms.
    pub frame_ms: Vec<f64>,
    /// "gpu-timestamps", "cpu-wall" or "none".
    pub stage_timing: &'static str,
    /// Per stage that ran, its time in each timed frame, ms.
    pub stage_ms: Vec<(Stage, Vec<f64>)>,
    /// Contacts found in each timed frame.
    pub contacts: Vec<usize>,
    /// Contacts by class, mean per frame.
    pub classes: Classes,
    /// Contacts differing from the CPU reference's in each timed frame.
    pub differ: Vec<usize>,
    /// Compute dispatches per frame (GPU).
    pub dispatches: Vec<u32>,
    /// Bytes read back per frame (GPU).
    pub bytes_read_back: Vec<u64>,
    /// Bytes bound for reading and for writing in the last frame (GPU).
    pub bytes_bound: Option<(u64, u64)>,
    /// GPU buffers allocated over the timed frames (GPU; 0 in steady state).
    pub buffers_allocated: Option<u64>,
    /// Rays cast per frame, as this implementation counted them (parry3d).
    pub rays: Vec<u64>,
    /// Iterative detection's figures (`gpu-walk`, `cpu-walk`).
    pub walking: Option<WalkFigures>,
}

impl ImplResult {
    fn new(id: &'static str, label: String, kind: ImplKind) -> Self {
        ImplResult {
            id,
            label,
            kind,
            frame_ms: Vec::new(),
            stage_timing: "none",
            stage_ms: Vec::new(),
            contacts: Vec::new(),
            classes: Classes::default(),
            differ: Vec::new(),
            dispatches: Vec::new(),
            bytes_read_back: Vec::new(),
            bytes_bound: None,
            buffers_allocated: None,
            rays: Vec::new(),
            walking: None,
        }
    }

    /// Median frame time, ms.
    pub fn median_ms(&self) -> f64 {
        median(&self.frame_ms)
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
    /// Nodes visited per ray by the GPU's traversal (short stack, its CPU twin).
    pub nodes_per_ray_gpu_walk: f64,
    /// Nodes visited per ray by the CPU reference's ordered traversal.
    pub nodes_per_ray_cpu_walk: f64,
    /// Triangles tested per ray (GPU traversal).
    pub triangles_per_ray: f64,
    /// Rays whose short stack overflowed and finished with the stackless walk (GPU traversal).
    pub stack_fallbacks: u64,
}

impl RayFigures {
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
}

/// Median of a list (NaN when empty).
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s[s.len() / 2]
}

/// Mean of a list (NaN when empty).
pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 }
}

/// Slope of the least-squares line through (ln x, ln y): the exponent of y against x.
pub fn fitted_exponent(points: &[(f64, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> =
        points.iter().filter(|(x, y)| *x > 0.0 && *y > 0.0).map(|(x, y)| (x.ln(), y.ln())).collect();
    if pts.len() < 2 {
        return None;
    }
    let n = pts.len() as f64;
    let (mx, my) = (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// The key of a contact and the triangle it hit.
fn key_of(source: u32, vertex: u32, target: u32, flags: u32, triangle: u32) -> (Key, u32) {
    ((source, vertex, target, flags & contact_flags::OUTWARD_RAY != 0), triangle)
}

/// Sorts a frame's keys (a key appears once: a source vertex casts each side once per pair).
fn sorted(mut k: FrameKeys) -> FrameKeys {
    k.sort_unstable();
    k.dedup_by(|a, b| a.0 == b.0);
    k
}

fn keys_of(found: &Contacts) -> FrameKeys {
    sorted(
        found
            .contacts
            .iter()
            .map(|c| {
                let (s, t) = (c.source_body.index(), c.target_body.index());
                key_of(s, c.source_vertex, t, c.flags, c.target_triangle)
            })
            .collect(),
    )
}

/// Size of the symmetric difference of two sorted key lists (keys only).
fn differ(a: &[(Key, u32)], b: &[(Key, u32)]) -> usize {
    let d = WalkDiff::of(a, b);
    d.extra + d.missing
}

/// Runs an instance on a raycontact scene (GPU or CPU backend), with iterative detection when
/// `iterative` is given. Returns the figures, the keys of every timed frame and the scene (for
/// the ray figures).
fn run_raycontact(
    mut scene: Scene,
    inst: &Instance,
    mut result: ImplResult,
    iterative: Option<(Iterative, &'static str)>,
    progress: &mut Progress,
) -> Result<(ImplResult, Vec<FrameKeys>, Scene), String> {
    let err = |e: raycontact::Error| format!("{} {}: {e}", inst.scene.name(), result.id);
    let mut ids: Vec<BodyId> = Vec::new();
    for (b, body) in inst.bodies.iter().enumerate() {
        ids.push(scene.add_body(inst.positions_at(0, b), &body.mesh.triangles, body.kind).map_err(err)?);
    }
    scene.set_prediction_distance(inst.prediction).map_err(err)?;
    let mut walking = None;
    if let (Some((it, full)), Some(setup)) = (iterative, inst.walking) {
        scene.set_iterative(Some(it)).map_err(err)?;
        walking = Some(WalkFigures {
            full,
            setup,
            iterative: it,
            passes: Vec::new(),
            walked: Vec::new(),
            counts: WalkCounts::default(),
            diff: Vec::new(),
        });
    }
    let pairs: Option<Vec<(BodyId, BodyId)>> =
        inst.pairs.as_ref().map(|p| p.iter().map(|&(a, b)| (ids[a], ids[b])).collect());
    let pairs_arg = || match &pairs {
        Some(p) => Pairs::List(p),
        None => Pairs::Overlapping,
    };
    let gpu = result.kind == ImplKind::Gpu;
    let mut keys = Vec::new();
    let mut classes = Classes::default();
    let mut stage_ms: Vec<(Stage, Vec<f64>)> = Vec::new();
    let mut last_stats = FrameStats::default();
    // Warm-up frame: layout, pipelines, first buffers.
    scene.detect(pairs_arg()).map_err(err)?;
    progress.inc();
    let allocated_before = scene.buffer_allocations();
    for f in 1..inst.positions.len() {
        let start = Instant::now();
        for (b, body) in inst.bodies.iter().enumerate() {
            if body.moving && !inst.positions[f][b].is_empty() {
                scene.set_positions(ids[b], &inst.positions[f][b]).map_err(err)?;
            }
        }
        let found = scene.detect(pairs_arg()).map_err(err)?;
        result.frame_ms.push(start.elapsed().as_secs_f64() * 1e3);
        for (s, st) in &found.stats.stages {
            let t = if gpu { st.gpu_ns } else { st.cpu_ns };
            if let Some(ns) = t {
                match stage_ms.iter_mut().find(|(x, _)| x == s) {
                    Some((_, v)) => v.push(ns / 1e6),
                    None => stage_ms.push((*s, vec![ns / 1e6])),
                }
            }
        }
        result.contacts.push(found.contacts.len());
        classes.add(&Classes::of(found.contacts.iter().map(|c| c.flags)));
        if gpu {
            result.dispatches.push(found.stats.dispatches());
            result.bytes_read_back.push(found.stats.bytes_read_back);
        }
        if let Some(w) = &mut walking {
            w.passes.push(found.stats.iterative);
            w.walked.push(found.stats.walked);
            w.counts.add_counts(&found.stats.walk);
        }
        keys.push(keys_of(&found));
        last_stats = found.stats;
        progress.inc();
    }
    stage_ms.sort_by_key(|(s, _)| *s);
    result.stage_timing = match (gpu, stage_ms.is_empty()) {
        (_, true) => "none",
        (true, false) => "gpu-timestamps",
        (false, false) => "cpu-wall",
    };
    result.stage_ms = stage_ms;
    result.classes = classes.scaled(1.0 / inst.timed_frames().max(1) as f64);
    result.walking = walking;
    if gpu {
        result.bytes_bound = Some((last_stats.bytes_read(), last_stats.bytes_written()));
        result.buffers_allocated = Some(scene.buffer_allocations() - allocated_before);
    }
    Ok((result, keys, scene))
}

/// Runs an instance on parry3d.
fn run_parry(
    parry: &mut Parry,
    inst: &Instance,
    mut result: ImplResult,
    progress: &mut Progress,
) -> (ImplResult, Vec<FrameKeys>) {
    let mut keys = Vec::new();
    let mut classes = Classes::default();
    let at = |f: usize| -> Vec<&[Vec3]> { (0..inst.bodies.len()).map(|b| inst.positions_at(f, b)).collect() };
    parry.frame(&at(0));
    progress.inc();
    for f in 1..inst.positions.len() {
        let positions = at(f);
        let start = Instant::now();
        let found = parry.frame(&positions);
        result.frame_ms.push(start.elapsed().as_secs_f64() * 1e3);
        result.contacts.push(found.contacts.len());
        result.rays.push(found.rays);
        classes.add(&Classes::of(found.contacts.iter().map(|c| c.flags)));
        let k = found
            .contacts
            .iter()
            .map(|c| key_of(c.source_body, c.source_vertex, c.target_body, c.flags, c.target_triangle));
        keys.push(sorted(k.collect()));
        progress.inc();
    }
    result.classes = classes.scaled(1.0 / inst.timed_frames().max(1) as f64);
    (result, keys)
}

/// Counters of the [`CountingTracer`]s of one replay.
#[derive(Default)]
struct RayCounters {
    sources: AtomicU64,
    inward: AtomicU64,
    outward: AtomicU64,
    check: AtomicU64,
    nodes_gpu: AtomicU64,
    nodes_cpu: AtomicU64,
    tris: AtomicU64,
    fallbacks: AtomicU64,
}

/// The full pass's tracer, counting: each trace through the BVH with the GPU's node order
/// (`cpu::closest_hit`, whose hit it returns) and with the CPU reference's
/// (`cpu::closest_hit_ordered`), counting rays by kind, nodes and triangles. One per source
/// vertex.
struct CountingTracer<'a> {
    counters: &'a RayCounters,
    /// The source body and whether the pair is a self pair.
    source: usize,
    self_pair: bool,
    /// The source vertex's normal.
    normal: Vec3,
    /// Whether a trace was made (the vertex passed the box filter).
    traced: AtomicBool,
}

impl Tracer for CountingTracer<'_> {
    fn trace(&self, cx: &Narrow<'_>, b: usize, ray: &Ray, ignore: u32, _: u32, _: &mut WalkCounts) -> Traced {
        let body = &cx.packing.bodies[b];
        let nodes = cx.frame.body_nodes(cx.packing, b);
        let tris = &cx.packing.triangles;
        let hit = cpu::closest_hit(body, nodes, cx.positions, tris, ray, ignore);
        let ordered = cpu::closest_hit_ordered(body, nodes, cx.positions, tris, ray, ignore);
        let c = self.counters;
        let kind = if b == self.source && !self.self_pair {
            &c.check
        } else if ray.dir.dot(self.normal) < 0.0 {
            &c.inward
        } else {
            &c.outward
        };
        kind.fetch_add(1, Relaxed);
        c.nodes_gpu.fetch_add(hit.nodes_visited as u64, Relaxed);
        c.nodes_cpu.fetch_add(ordered.nodes_visited as u64, Relaxed);
        c.tris.fetch_add(hit.triangles_tested as u64, Relaxed);
        c.fallbacks.fetch_add(hit.fallback as u64, Relaxed);
        if !self.traced.swap(true, Relaxed) {
            c.sources.fetch_add(1, Relaxed);
        }
        Traced { hit, walked: false, steps: 0, outcome: NONE }
    }
}

/// The ray figures of the scene's last frame: the CPU reference's full pass replayed on its
/// BVHs (`cpu::classify` over every tested pair, both directions, self pairs once) with a
/// [`CountingTracer`], so that every case (cloth, predictions, self pairs) is counted.
fn ray_figures(scene: &mut Scene, inst: &Instance) -> Result<RayFigures, String> {
    let e = |e: raycontact::Error| e.to_string();
    let frame = scene.frame_data().map_err(e)?;
    let packing = scene.packing().clone();
    let (mut positions, mut previous) = (Vec::new(), Vec::new());
    for id in &packing.ids {
        positions.extend_from_slice(scene.positions(*id).map_err(e)?);
        previous.extend(scene.previous_positions(*id).map_err(e)?);
    }
    let ids: Vec<BodyId> = scene.bodies().collect();
    let prediction = scene.prediction_distance();
    let pairs: Vec<BodyPair> = match &inst.pairs {
        Some(p) => p
            .iter()
            .map(|&(a, b)| {
                let (a, b) = (packing.index_of(ids[a]), packing.index_of(ids[b]));
                BodyPair { a: a.expect("packed") as u32, b: b.expect("packed") as u32, prediction, pad: 0 }
            })
            .collect(),
        None => cpu::broad_phase(&packing.bodies, &frame.body_state, SELF_CLOTH, prediction),
    };
    let cx = Narrow {
        packing: &packing,
        frame: &frame,
        positions: &positions,
        previous: &previous,
        remember_exit: false,
    };
    let counters = RayCounters::default();
    let sources = cpu::ray_sources(&packing, &frame.body_state, &positions, &pairs);
    sources.par_iter().with_min_len(256).for_each(|&[k, v]| {
        let p = &pairs[(k / 2) as usize];
        let (a, b) = if k % 2 == 0 { (p.a as usize, p.b as usize) } else { (p.b as usize, p.a as usize) };
        let body = &packing.bodies[a];
        let tracer = CountingTracer {
            counters: &counters,
            source: a,
            self_pair: a == b,
            normal: frame.normals[(body.vertex_offset + v) as usize],
            traced: AtomicBool::new(false),
        };
        let mut sink = Vec::new();
        cpu::classify(&cx, &tracer, (a, v, b, k), p.prediction, Rays::BOTH, &mut sink);
    });
    let get = |a: &AtomicU64| a.load(Relaxed);
    let c = &counters;
    let rays = (get(&c.inward) + get(&c.outward) + get(&c.check)).max(1) as f64;
    Ok(RayFigures {
        pairs: pairs.len(),
        sources: get(&c.sources),
        inward_rays: get(&c.inward),
        outward_rays: get(&c.outward),
        check_rays: get(&c.check),
        nodes_per_ray_gpu_walk: get(&c.nodes_gpu) as f64 / rays,
        nodes_per_ray_cpu_walk: get(&c.nodes_cpu) as f64 / rays,
        triangles_per_ray: get(&c.tris) as f64 / rays,
        stack_fallbacks: get(&c.fallbacks),
    })
}

/// The progress bar's message for an implementation running an instance.
fn label(inst: &Instance, id: &str) -> String {
    if inst.variant.is_empty() {
        format!("{} {id}", inst.scene.name())
    } else {
        format!("{} ({}) {id}", inst.scene.name(), inst.variant)
    }
}

/// Iterative detection as the walking implementations run it (the paper's drop fallback).
pub fn iterative_of(setup: &WalkSetup) -> Iterative {
    Iterative {
        displacement_threshold: setup.threshold,
        confidence: 2.0,
        full_pass_every: setup.full_pass_every,
        fallback: WalkFallback::Drop,
    }
}

/// Implementations that run on an instance.
fn impl_count(inst: &Instance, gpu: bool, parry: bool) -> usize {
    let walk = if inst.walking.is_some() { 1 + usize::from(gpu) } else { 0 };
    2 + usize::from(gpu) + walk + if parry { 2 } else { 0 }
}

/// Runs every implementation on one instance.
fn run_instance(
    inst: &Instance,
    ctx: Option<&GpuContext>,
    parry: bool,
    progress: &mut Progress,
) -> Result<InstanceResult, String> {
    let start = Instant::now();
    let threads = rayon::current_num_threads();
    progress.set_message(label(inst, "cpu-rayon"));
    let cpu = Scene::new_cpu(None).map_err(|e| e.to_string())?;
    let label_rayon = format!("CPU reference, rayon {threads}");
    let (reference, ref_keys, mut cpu_scene) =
        run_raycontact(cpu, inst, ImplResult::new("cpu-rayon", label_rayon, ImplKind::Cpu), None, progress)?;
    let rays = ray_figures(&mut cpu_scene, inst)?;
    drop(cpu_scene);
    let mut impls = vec![reference];
    impls[0].differ = vec![0; ref_keys.len()];
    let mut full_keys: Vec<(&'static str, Vec<FrameKeys>)> = vec![("cpu-rayon", ref_keys.clone())];
    let mut push =
        |mut r: ImplResult, keys: Vec<FrameKeys>, full_keys: &mut Vec<(&'static str, Vec<FrameKeys>)>| {
            r.differ = keys.iter().zip(&ref_keys).map(|(a, b)| differ(a, b)).collect();
            if let Some(w) = &mut r.walking {
                let full = &full_keys.iter().find(|(id, _)| *id == w.full).expect("full traversal ran").1;
                w.diff = keys.iter().zip(full).map(|(a, b)| WalkDiff::of(a, b)).collect();
            } else if r.kind != ImplKind::Parry {
                full_keys.push((r.id, keys));
            }
            impls.push(r);
        };
    if let Some(c) = ctx {
        progress.set_message(label(inst, "gpu"));
        let label = format!("GPU ({})", c.adapter_name());
        let r = ImplResult::new("gpu", label, ImplKind::Gpu);
        let (r, keys, _) = run_raycontact(Scene::new(c), inst, r, None, progress)?;
        push(r, keys, &mut full_keys);
    }
    progress.set_message(label(inst, "cpu-1"));
    let cpu1 = Scene::new_cpu(Some(1)).map_err(|e| e.to_string())?;
    let r = ImplResult::new("cpu-1", "CPU reference, 1 thread".into(), ImplKind::Cpu);
    let (r, keys, _) = run_raycontact(cpu1, inst, r, None, progress)?;
    push(r, keys, &mut full_keys);
    if let Some(setup) = &inst.walking {
        let it = iterative_of(setup);
        if let Some(c) = ctx {
            progress.set_message(label(inst, "gpu-walk"));
            let label = format!("GPU walking ({})", c.adapter_name());
            let r = ImplResult::new("gpu-walk", label, ImplKind::Gpu);
            let (r, keys, _) = run_raycontact(Scene::new(c), inst, r, Some((it, "gpu")), progress)?;
            push(r, keys, &mut full_keys);
        }
        progress.set_message(label(inst, "cpu-walk"));
        let cpu = Scene::new_cpu(None).map_err(|e| e.to_string())?;
        let r = ImplResult::new("cpu-walk", format!("CPU reference walking, rayon {threads}"), ImplKind::Cpu);
        let (r, keys, _) = run_raycontact(cpu, inst, r, Some((it, "cpu-rayon")), progress)?;
        push(r, keys, &mut full_keys);
    }
    if parry {
        for (id, threads) in [("parry-1", Some(1)), ("parry-rayon", None)] {
            progress.set_message(label(inst, id));
            let mut p = Parry::new(inst, threads)?;
            let label = if threads == Some(1) {
                "parry3d, 1 thread".to_string()
            } else {
                format!("parry3d, rayon {}", p.threads())
            };
            let (r, keys) = run_parry(&mut p, inst, ImplResult::new(id, label, ImplKind::Parry), progress);
            push(r, keys, &mut full_keys);
        }
    }
    Ok(InstanceResult {
        scene: inst.scene,
        variant: inst.variant.clone(),
        parameter: inst.parameter,
        bodies: inst
            .bodies
            .iter()
            .map(|b| (b.name.clone(), b.kind, b.mesh.triangles.len(), b.mesh.positions.len(), b.moving))
            .collect(),
        frames: inst.timed_frames(),
        prediction: inst.prediction,
        rays,
        impls,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

fn parse_vec3(option: &str, text: &str) -> Result<Vec3, String> {
    let parts: Vec<f32> = text
        .split(',')
        .map(|s| s.trim().parse::<f32>().map_err(|_| format!("{option} `{text}`: `{s}` is not a number")))
        .collect::<Result<_, _>>()?;
    match parts[..] {
        [x, y, z] if x.is_finite() && y.is_finite() && z.is_finite() => Ok(Vec3::new(x, y, z)),
        _ => Err(format!("{option} `{text}`: expected three finite numbers x,y,z")),
    }
}

/// The scenes a run covers.
pub fn selected_scenes(args: &SuiteArgs) -> Vec<SceneName> {
    let mut scenes = if args.scenes.is_empty() {
        SceneName::ALL.iter().copied().filter(|s| *s != SceneName::Files || args.files.is_some()).collect()
    } else {
        args.scenes.clone()
    };
    scenes.sort();
    scenes.dedup();
    scenes
}

/// Runs the suite: prints the table, writes the JSON and the plot. Returns the exit code.
pub fn run(args: SuiteArgs) -> i32 {
    match run_inner(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("raycontact-bench: error: {e}");
            2
        }
    }
}

fn run_inner(args: SuiteArgs) -> Result<(), String> {
    let start = Instant::now();
    let scenes = selected_scenes(&args);
    let opts = SceneOptions {
        size: args.size,
        frames: args.frames,
        seed: args.seed,
        tori: args.tori.clone(),
        triangles: args.triangles.clone(),
        files: args.files.as_ref().map(|f| (f[0].clone(), f[1].clone())),
        translate_b: match &args.translate_b {
            Some(t) => parse_vec3("--translate-b", t)?,
            None => Vec3::ZERO,
        },
    };
    if args.frames == Some(0) {
        return Err("--frames must be at least 1".into());
    }
    // Every scene first, so that a bad option fails before any work.
    let mut built: Vec<(SceneName, Vec<Instance>)> = Vec::new();
    for &s in &scenes {
        built.push((s, scenes::build(s, &opts)?));
    }
    let ctx = crate::gpu_context(args.cpu, args.adapter.clone());
    let total: usize = built
        .iter()
        .flat_map(|(_, v)| v)
        .map(|i| i.positions.len() * impl_count(i, ctx.is_some(), !args.no_parry))
        .sum();
    let mut progress = Progress::new(total as u64, !args.no_progress);
    report::print_header(ctx.as_ref(), &args, &scenes);
    let mut instances = Vec::new();
    for (scene, list) in built {
        let mut results = Vec::new();
        for inst in &list {
            let r = run_instance(inst, ctx.as_ref(), !args.no_parry, &mut progress)?;
            if !scene.is_scaling() {
                progress.suspend(|| report::print_instance(&r));
            }
            results.push(r);
        }
        if scene.is_scaling() {
            progress.suspend(|| report::print_scaling(scene, &results));
        }
        instances.extend(results);
    }
    progress.finish();
    let result = SuiteResult {
        args: args.clone(),
        gpu: ctx,
        instances,
        wall_s: start.elapsed().as_secs_f64(),
        threads: rayon::current_num_threads(),
    };
    report::print_footer(&result);
    if let Some(path) = &args.json {
        let doc = report::json(&result);
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("--json {}: {e}", path.display()))?;
        println!("JSON written to {}", path.display());
    }
    if let Some(path) = &args.plot {
        match crate::plot::draw(&result, path)? {
            0 => println!("--plot: no scaling scene in this run; nothing drawn"),
            n => println!("plot of {n} scaling scene(s) written to {}", path.display()),
        }
    }
    Ok(())
}
