//! The named scenes of the benchmark suite: their meshes, body kinds and scripted motion.
//!
//! Every scene is deterministic: its geometry and motion depend only on its size preset, its
//! variant (N tori, triangle count) and the seed. A scene is expanded into [`Instance`]s (one per
//! variant of a scaling scene, one otherwise) whose positions are computed for every frame before
//! any timing starts. Frame 0 is the warm-up frame (layout, pipelines), never timed.

mod cloth;
mod files;
mod motion;
mod tori;

use std::path::PathBuf;

use glam::Vec3;
use raycontact::BodyKind;
use raycontact::meshes::TriMesh;

/// A named scene of the suite.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SceneName {
    /// Two interpenetrating tori of 1600 triangles each (Hermann et al. 2008, Figure 10).
    HermannTori,
    /// A chain of N interpenetrating tori of 1600 triangles (Hermann et al. 2008, Figure 13).
    ToriScaling,
    /// Concave meshes of 900 triangles settled in layers on a ground (the IRTCD avalanche).
    RestingPile,
    /// Two interlocked tori deforming slowly (the IRTCD slowly deforming pair).
    SlowPair,
    /// A closed body wearing three layered garments (Lehericey et al. 2015).
    ClothLayers,
    /// Eight sheets draped over a static scene (Lehericey et al. 2015).
    EightSheets,
    /// One pair of interpenetrating bodies from 10k to 1M triangles.
    MeshScaling,
    /// Two mesh files given with `--files A B`.
    Files,
}

impl SceneName {
    /// Every scene, in suite order.
    pub const ALL: [SceneName; 8] = [
        SceneName::HermannTori,
        SceneName::ToriScaling,
        SceneName::RestingPile,
        SceneName::SlowPair,
        SceneName::ClothLayers,
        SceneName::EightSheets,
        SceneName::MeshScaling,
        SceneName::Files,
    ];

    /// The scene's name on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            SceneName::HermannTori => "hermann-tori",
            SceneName::ToriScaling => "tori-scaling",
            SceneName::RestingPile => "resting-pile",
            SceneName::SlowPair => "slow-pair",
            SceneName::ClothLayers => "cloth-layers",
            SceneName::EightSheets => "eight-sheets",
            SceneName::MeshScaling => "mesh-scaling",
            SceneName::Files => "files",
        }
    }

    /// Whether the scene sweeps a size parameter (and gets a fitted exponent and a plot).
    pub fn is_scaling(self) -> bool {
        matches!(self, SceneName::ToriScaling | SceneName::MeshScaling)
    }

    /// What the scene reproduces, in one line.
    pub fn description(self) -> &'static str {
        match self {
            SceneName::HermannTori => {
                "two interpenetrating deforming tori of 1600 triangles each (Hermann et al. 2008, Figure 10)"
            }
            SceneName::ToriScaling => {
                "a chain of N interpenetrating deforming tori of 1600 triangles each; time should grow \
                 linearly with N (Hermann et al. 2008, Figure 13)"
            }
            SceneName::RestingPile => {
                "layers of concave meshes (tori of 900 triangles) settled on a ground, moving a little \
                 every frame (the avalanche scene of Lehericey et al. 2013, IRTCD)"
            }
            SceneName::SlowPair => {
                "two interlocked tori of 1600 triangles each deforming slowly (a ripple moving about a \
                 thousandth per frame, a slow spin): the slowly deforming pair of Lehericey et al. 2013"
            }
            SceneName::ClothLayers => {
                "a closed body of ~10k vertices wearing three layered garments of ~11k, 2.7k and 3.8k \
                 vertices, offset shells of the body that breathe and ripple (Lehericey et al. 2015)"
            }
            SceneName::EightSheets => {
                "eight sheets of 4.2k vertices draped over a static scene of ~9k vertices (Lehericey et \
                 al. 2015)"
            }
            SceneName::MeshScaling => {
                "one pair of interpenetrating deforming tori, from 10k to 1M triangles in all; the fitted \
                 exponent of frame time against size is reported"
            }
            SceneName::Files => "two mesh files given with --files A B (as `detect` reads them), B turning",
        }
    }

    /// The name of the size parameter of a scaling scene.
    pub fn parameter_name(self) -> Option<&'static str> {
        match self {
            SceneName::ToriScaling => Some("tori"),
            SceneName::MeshScaling => Some("triangles"),
            _ => None,
        }
    }
}

/// How big the scenes are.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SizePreset {
    /// A few hundred triangles per body and one or two frames: for tests.
    Tiny,
    /// The default suite: finishes in about a minute on lavapipe.
    #[default]
    Default,
    /// The papers' sizes: tori-scaling up to 64 tori in fine steps, mesh-scaling up to 1M
    /// triangles, more frames.
    Paper,
}

impl SizePreset {
    /// The preset's name.
    pub fn name(self) -> &'static str {
        match self {
            SizePreset::Tiny => "tiny",
            SizePreset::Default => "default",
            SizePreset::Paper => "paper",
        }
    }
}

/// What one scene needs from the command line.
#[derive(Clone, Debug, Default)]
pub struct SceneOptions {
    /// Size preset.
    pub size: SizePreset,
    /// Timed frames (overrides the scene's default).
    pub frames: Option<usize>,
    /// Seed of the scenes' random placement and motion.
    pub seed: u64,
    /// Tori counts of `tori-scaling` (overrides the preset).
    pub tori: Option<Vec<u32>>,
    /// Triangle counts of `mesh-scaling` (overrides the preset).
    pub triangles: Option<Vec<u32>>,
    /// The two files of `files`.
    pub files: Option<(PathBuf, PathBuf)>,
    /// Translation of file B.
    pub translate_b: Vec3,
}

/// One body of an instance.
#[derive(Clone, Debug)]
pub struct BodyDef {
    /// A short name (e.g. "torus 3", "garment 1", "ground").
    pub name: String,
    /// Triangles (and the rest positions, which frame 0 may differ from).
    pub mesh: TriMesh,
    /// Volumetric or cloth.
    pub kind: BodyKind,
    /// Whether its positions change from frame to frame (static bodies are set once).
    pub moving: bool,
}

/// One run of a scene: bodies and the positions of every frame.
#[derive(Clone, Debug)]
pub struct Instance {
    /// The scene.
    pub scene: SceneName,
    /// The variant, e.g. "N=8" or "40000 triangles" ("" for non-scaling scenes).
    pub variant: String,
    /// The size parameter of a scaling scene (tori, or triangles in all).
    pub parameter: Option<f64>,
    /// The bodies.
    pub bodies: Vec<BodyDef>,
    /// `positions[f][b]`: body `b`'s positions in frame `f` (frame 0 is the warm-up); empty for a
    /// static body after frame 0.
    pub positions: Vec<Vec<Vec<Vec3>>>,
    /// The pairs to test (indices into `bodies`), or `None` for every overlapping pair.
    pub pairs: Option<Vec<(usize, usize)>>,
    /// The prediction distance every implementation uses (0: none).
    pub prediction: f32,
    /// Iterative detection compared with full traversal (`gpu-walk`, `cpu-walk`): its settings.
    pub walking: Option<WalkSetup>,
}

/// The iterative detection (Lehericey et al. 2013) of a scene that compares walking with full
/// traversal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WalkSetup {
    /// Displacement threshold (scene units): a few frames of the scene's motion.
    pub threshold: f32,
    /// The largest displacement of a vertex between two consecutive frames (scene units).
    pub step: f32,
    /// A full pass at least every this many detections.
    pub full_pass_every: u32,
}

impl WalkSetup {
    /// Frames of the scene's fastest motion that the threshold allows (the pair rule adds the
    /// bounds of two bodies: the threshold covers `threshold / (2 step)` frames).
    pub const FRAMES: f32 = 2.0;

    /// The setup for positions `frames[f][b]` (empty for a static body after frame 0): the
    /// threshold covers [`Self::FRAMES`] frames of the fastest vertex.
    fn for_motion(positions: &[Vec<Vec<Vec3>>], full_pass_every: u32) -> Self {
        let mut step = 0.0f32;
        for w in positions.windows(2) {
            for (a, b) in w[0].iter().zip(&w[1]) {
                for (p, q) in a.iter().zip(b) {
                    step = step.max(p.distance(*q));
                }
            }
        }
        WalkSetup { threshold: 2.0 * Self::FRAMES * step, step, full_pass_every }
    }
}

impl Instance {
    /// Timed frames (every frame but the warm-up).
    pub fn timed_frames(&self) -> usize {
        self.positions.len() - 1
    }

    /// Body `b`'s positions in frame `f`: its own, or the latest set before.
    pub fn positions_at(&self, f: usize, b: usize) -> &[Vec3] {
        (0..=f).rev().map(|g| &self.positions[g][b]).find(|p| !p.is_empty()).expect("frame 0 has every body")
    }
}

/// The instances of a scene (one per variant).
pub fn build(scene: SceneName, opts: &SceneOptions) -> Result<Vec<Instance>, String> {
    Ok(match scene {
        SceneName::HermannTori => tori::hermann_tori(opts),
        SceneName::ToriScaling => tori::tori_scaling(opts),
        SceneName::RestingPile => tori::resting_pile(opts),
        SceneName::SlowPair => tori::slow_pair(opts),
        SceneName::ClothLayers => cloth::cloth_layers(opts),
        SceneName::EightSheets => cloth::eight_sheets(opts),
        SceneName::MeshScaling => tori::mesh_scaling(opts),
        SceneName::Files => files::files(opts)?,
    })
}
