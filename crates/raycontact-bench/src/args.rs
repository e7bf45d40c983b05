//! The suite's command line: its options, its long help, and the scenes and scene options they
//! select.

use std::path::PathBuf;

use glam::Vec3;

use crate::scenes::{SceneName, SceneOptions, SizePreset};

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
  files          two mesh files (--files A B; OBJ, OFF, PLY or STL, read as `detect` reads them),
                 B turning about its centre

Every scene is deterministic (--seed) and driven by scripted motion over its frames; frame 0
warms up (layout, pipelines) and is not timed. --size tiny|default|paper picks the sizes:
default finishes in about a minute on lavapipe; paper runs the papers' sizes. The cloth scenes
(half-thickness e = 0.004) run with a prediction distance of 0.02 (5 e) on every
implementation, the other scenes with none; cloth self pairs (C, C) are tested (the default).

Implementations, all in the same run, doing the same work every frame (a body the scene never
moves is static: every implementation, raycontact's on the GPU and the CPU and parry3d's, keeps
its normals, boxes and BVH from frame to frame), their frames timed in turn, frame by frame
(every implementation's frame f, then every one's frame f + 1, each turn starting one
implementation further: a machine's drift slows them alike), or each one's frames back to back
with --sequential:
  gpu            raycontact on the GPU adapter (Scene::detect: BVH rebuild, broad phase, rays,
                 readback; one submission)
  gpu-refit      the same with BvhUpdate::Refit: the BVHs refitted (normals, bounds, fit; no
                 Morton codes, sort or hierarchy), rebuilt only at the first frame
  gpu-auto       (only when named in --implementations) gpu with BvhUpdate::Auto at its default
                 bound, as cpu-auto: the measure taken on the host before each frame is recorded
                 (its time is printed with the BVH line: host BVH work)
  cpu-1          raycontact's CPU backend (the kernels' CPU twins; rays through its 4-wide
                 BVHs, a cloth vertex's inward and outward rays in one walk; a trace asked
                 again, e.g. a body's own-body trace in each of its cloth pairs, or in a later
                 frame while the body does not move, answered from a memo), single-threaded
  cpu-rayon      the CPU backend with rayon over all cores (the contacts' reference)
  cpu-refit      cpu-rayon with BvhUpdate::Refit
  cpu-auto       (only when named in --implementations) cpu-rayon with BvhUpdate::Auto at its
                 default bound (BvhUpdate::auto(), 1.3): refitted, rebuilt in the frame
                 whose refit leaves some body's SAH cost over 1.3 times its last rebuild's
  cpu-twins      cpu-rayon walking the binary BVH as the kernels do (Scene::set_wide_bvh(false)):
                 the kernels' CPU twins end to end, the same algorithm as gpu (no memo)
  gpu-walk       (resting-pile, slow-pair) gpu with iterative detection (Lehericey et al. 2013):
                 full passes and iterative passes that re-cast last frame's contacts by walking
                 the triangle adjacency; threshold 2 frames of the fastest vertex's motion per
                 body (4 steps for a pair), confidence 2, fallback drop (the paper's: an
                 iterative pass updates no BVH; the walk computes its sources' normals), a full
                 pass at least every 64 frames
  cpu-walk       the same on the CPU reference with rayon
  parry-1        parry3d 0.31, one thread: every moving body's BVH rebuilt from the triangle
                 boxes each frame (binned SAH), the same rays (every case: inward and outward, cloth, self pairs)
                 cast through it, classified by raycontact's rules (cpu::classify); a trace
                 asked again answered from a memo, as on cpu-1
  parry-rayon    the same with rayon over all cores
  parry-refit-1  parry3d's deformable path, one thread: a TriMesh per body with
                 TriMeshFlags::DEFORMABLE, built once, TriMesh::set_vertices every frame on the
                 moving bodies (which refits its BVH), the same rays and rules
  parry-refit-rayon  the same with rayon over all cores (the bodies refitted in parallel)
--cpu leaves the GPU out (no adapter needed).

Figures:
  frame ms       median wall time of a frame: raycontact's, set positions + detect (into the
                 contacts of the frame before, Scene::detect_into: no new vector), the contacts
                 on the host in their documented order; parry3d's, the classification's contact
                 records as its rayon jobs give them (not ordered, not converted)
  worst ms       the slowest timed frame
  stage ms       per stage (normals, bounds, morton, sort, hierarchy, fit, pairs, rays, and with
                 --intersections crossings, contour, analysis): GPU timestamp queries when the
                 adapter has them (\"gpu-timestamps\"), the CPU reference's wall time per stage
                 (\"cpu-wall\"); without timestamps the GPU has only frame wall time
  intersections  (--intersections crossings|full) per raycontact implementation: crossings,
                 contour loops, edge and untangling contacts per frame (mean), and the time of
                 the crossings stage (and of crossings + contour + analysis) over the rays
                 stage's; the contact comparisons (differ) leave the intersection contacts out
  contacts       contacts per frame (mean over the timed frames), by class from the contact
                 flags: collision / prediction, inward / outward ray, inverted, walked
  differ         contacts (source body, vertex, target body, inward or outward ray) found by one
                 implementation and not by the CPU reference (rayon) or the other way round,
                 worst frame
  rays/frame     rays traced in the last frame by the classification of every source vertex of
                 every tested pair (the CPU reference's full pass, replayed with counting):
                 inward and outward rays to the target, plus the own-body traces (every trace
                 asked, those a memo answers included)
  Mrays/s        rays per frame / frame time
  ray/core       the CPU implementations' ray stage alone: rays per frame / median rays-stage time
                 / threads, Mrays/s per core
  nodes/ray      BVH nodes read per ray, for the GPU's traversal (short stack: each box
                 tested, each stacked node walked back into; passing the fans of vertices of
                 many triangles as the GPU tuning does; counted by its CPU twin) and for the
                 CPU backend's (its 4-wide trees: every lane of every wide node visited); in
                 both, an exit trace the kernels' memo answers reads no node
  longest source the most nodes one source vertex's traces visit (GPU traversal): one
                 invocation's serial work, under which a GPU's ray stage cannot go however
                 wide the GPU; and the largest vertex valence (one vertex's normal sum)
  BVH            per refitting implementation: frames rebuilt / refitted, and the trees' SAH
                 cost over their cost at the last rebuild (measured on the CPU backend)
  dispatches     compute dispatches per GPU frame; read back: bytes copied to the host per frame
  H100 floor     under each full-pass GPU frame: a model's floor for that frame on an H100 SXM
                 from the counts (a fixed cost per dispatch and submission, the bound bytes at
                 DRAM bandwidth, the traversal's nodes and triangles at L2 bandwidth, the read-
                 back over PCIe; gpu_model.rs), not a measurement
  vs X           speed-up: X's frame time / this implementation's frame time (p-1 parry-1,
                 p-ray parry-rayon, pr-ray parry-refit-rayon)
  walking        per walking implementation: passes (iterative / full), median frame time of
                 its iterative passes and speed-up against its full traversal's median frame
                 (gpu-walk vs gpu, cpu-walk vs cpu-rayon), the speed-up of the mean frame (full
                 passes included), contacts that differ from the full traversal at the same
                 frame (walked ones it lacks or with another triangle, plus its ones missing) as
                 a percentage of its contacts, and the walk outcomes

Output: a table on stdout; --json PATH writes every figure with the adapter, driver and CPU
(schema \"raycontact.bench/6\", docs/bench-json.md); --plot PATH.svg draws the scaling scenes
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
    /// The two mesh files of the `files` scene (OBJ, OFF, PLY or STL).
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
    /// The GPU kernels' tuning (`Tuning`): `software` or `gpu` (default: the adapter kind's),
    /// then `field=value` overrides, comma-separated (`items`, `barrier_group`,
    /// `whole_sort_tiles`: numbers; `line_walks`, `fan_walks`, `child_pairs`,
    /// `workgroup_tallies`: true or false); e.g. `gpu,child_pairs=false` times a GPU's frames
    /// without the child pairs. The figures counted by the CPU twins (nodes per ray) do not
    /// depend on it.
    #[arg(long, value_name = "SPEC")]
    pub tuning: Option<String>,
    /// Leave parry3d out.
    #[arg(long)]
    pub no_parry: bool,
    /// Run only these implementations (ids as in the tables: gpu, gpu-refit, gpu-auto, cpu-1,
    /// cpu-refit, cpu-auto, cpu-twins, gpu-walk, cpu-walk, parry-1, parry-rayon, parry-refit-1,
    /// parry-refit-rayon; repeatable or comma-separated; default: all but gpu-auto and cpu-auto,
    /// which run only when named). `cpu-rayon` always runs: every other is
    /// compared with it. `gpu-walk` brings `gpu` with it (its full passes are compared with
    /// `gpu`'s); `--cpu` and `--no-parry` still leave their kinds out.
    #[arg(long, value_delimiter = ',', value_name = "ID,...", value_parser = implementation_id)]
    pub implementations: Vec<String>,
    /// Write every figure as JSON (schema raycontact.bench/6, docs/bench-json.md).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Draw the scaling scenes as SVG (frame time against N or size, one line per
    /// implementation).
    #[arg(long, value_name = "PATH.svg")]
    pub plot: Option<PathBuf>,
    /// No progress bar on stderr.
    #[arg(long)]
    pub no_progress: bool,
    /// Run each implementation's frames back to back, one implementation after another,
    /// instead of frame by frame across the implementations (every implementation's frame f
    /// in turn, the default: a machine whose speed drifts during the run slows them alike).
    /// Holds one implementation's scene in memory at a time, instead of all of them, and each
    /// frame starts with the caches as its own last frame left them (interleaved, as the other
    /// implementations' frames left them: the refitting ones, which reuse last frame's data,
    /// run slower so).
    #[arg(long)]
    pub sequential: bool,
    /// Pin the CPU implementations' workers to cores: worker i of the rayon pool (which every
    /// "rayon" implementation shares) to core i of those the process may run on, the worker
    /// of the single-threaded pool to the first. By default the scheduler places them.
    #[arg(long)]
    pub pin: bool,
    /// The intersection stages every raycontact implementation runs after its vertex rays:
    /// off, crossings (edge–triangle crossings and their contacts), full (also the contour and
    /// global intersection analysis).
    #[arg(long, value_enum, default_value_t = Intersections::Off)]
    pub intersections: Intersections,
    /// Turn the GPU stage times off in every GPU scene (`Scene::set_gpu_timestamps(false)`):
    /// no timestamp query written, resolved or read, so the GPU frames cost what their work
    /// costs (a software adapter pays for each timestamp) and the GPU lines have no stage times.
    #[arg(long)]
    pub no_gpu_timestamps: bool,
    /// Build the binned-SAH tree of a raycontact scene's body newly at rest (GPU or CPU; on the
    /// CPU also of a static body, and of a body rebuilt under a refitting policy) in the frame
    /// that makes it (`Scene::set_background_trees(false)`) instead of in the background: that
    /// frame then carries the build, and which tree each frame walks does not depend on how soon
    /// a background build is done. (The set-up frame builds its trees in the frame either way:
    /// the trees of `gpu-refit`'s and `cpu-refit`'s first rebuild, which their timed frames
    /// refit.)
    #[arg(long)]
    pub trees_in_frame: bool,
}

/// `--intersections`: raycontact's [`IntersectionMode`](raycontact::IntersectionMode).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Intersections {
    /// None.
    #[default]
    Off,
    /// Crossings and their contacts.
    Crossings,
    /// Crossings, contour, analysis and their contacts.
    Full,
}

impl Intersections {
    /// The library's mode.
    pub fn mode(self) -> raycontact::IntersectionMode {
        match self {
            Intersections::Off => raycontact::IntersectionMode::Off,
            Intersections::Crossings => raycontact::IntersectionMode::Crossings,
            Intersections::Full => raycontact::IntersectionMode::Full,
        }
    }

    /// The option's value.
    pub fn name(self) -> &'static str {
        match self {
            Intersections::Off => "off",
            Intersections::Crossings => "crossings",
            Intersections::Full => "full",
        }
    }
}

impl SuiteArgs {
    /// Whether `--implementations` lets implementation `id` run (`cpu-rayon` always runs;
    /// `gpu` runs with `gpu-walk`; without the option every one but [`OPT_IN`]'s).
    pub fn runs(&self, id: &str) -> bool {
        let wanted = |i: &str| self.implementations.iter().any(|w| w == i);
        (self.implementations.is_empty() && !OPT_IN.contains(&id))
            || id == "cpu-rayon"
            || wanted(id)
            || (id == "gpu" && wanted("gpu-walk"))
    }

    /// The scenes a run covers, in suite order.
    pub fn selected_scenes(&self) -> Vec<SceneName> {
        let mut scenes = if self.scenes.is_empty() {
            SceneName::ALL
                .iter()
                .copied()
                .filter(|s| *s != SceneName::Files || self.files.is_some())
                .collect()
        } else {
            self.scenes.clone()
        };
        scenes.sort();
        scenes.dedup();
        scenes
    }

    /// What the scenes need from the command line (an error names a bad option).
    pub fn scene_options(&self) -> Result<SceneOptions, String> {
        Ok(SceneOptions {
            size: self.size,
            frames: self.frames,
            seed: self.seed,
            tori: self.tori.clone(),
            triangles: self.triangles.clone(),
            files: self.files.as_ref().map(|f| (f[0].clone(), f[1].clone())),
            translate_b: match &self.translate_b {
                Some(t) => parse_vec3("--translate-b", t)?,
                None => Vec3::ZERO,
            },
        })
    }
}

/// Parses `text` as three finite comma-separated numbers for `option`.
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

/// The suite's implementation ids, in the order of its tables (`results::ORDER`).
pub const IMPLEMENTATIONS: [&str; 14] = [
    "gpu",
    "gpu-refit",
    "gpu-auto",
    "cpu-1",
    "cpu-rayon",
    "cpu-refit",
    "cpu-auto",
    "cpu-twins",
    "gpu-walk",
    "cpu-walk",
    "parry-1",
    "parry-rayon",
    "parry-refit-1",
    "parry-refit-rayon",
];

/// The implementations that run only when `--implementations` names them (not in the default
/// suite, whose figures and time they would change).
pub const OPT_IN: [&str; 2] = ["gpu-auto", "cpu-auto"];

/// An id that `--implementations` accepts: one of the suite's, as in its tables.
fn implementation_id(id: &str) -> Result<String, String> {
    if IMPLEMENTATIONS.contains(&id) {
        Ok(id.to_string())
    } else {
        Err(format!("no implementation `{id}`; the ids are {}", IMPLEMENTATIONS.join(", ")))
    }
}
