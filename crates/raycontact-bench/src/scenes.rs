//! The named scenes of the benchmark suite: their meshes, body kinds and scripted motion.
//!
//! Every scene is deterministic: its geometry and motion depend only on its size preset, its
//! variant (N tori, triangle count) and the seed. A scene is expanded into [`Instance`]s (one per
//! variant of a scaling scene, one otherwise) whose positions are computed for every frame before
//! any timing starts. Frame 0 is the warm-up frame (layout, pipelines), never timed.

use std::f32::consts::{FRAC_PI_2, TAU};
use std::path::PathBuf;

use glam::{Affine3A, Quat, Vec3};
use rand::{Rng, SeedableRng};
use raycontact::BodyKind;
use raycontact::meshes::{self, TriMesh};

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

/// Per-vertex area-weighted normals of a mesh at rest.
fn rest_normals(mesh: &TriMesh) -> Vec<Vec3> {
    let mut n = vec![Vec3::ZERO; mesh.positions.len()];
    for t in &mesh.triangles {
        let [a, b, c] = t.map(|i| mesh.positions[i as usize]);
        let f = (b - a).cross(c - a);
        for &i in t {
            n[i as usize] += f;
        }
    }
    n.iter().map(|v| v.normalize_or_zero()).collect()
}

/// A deforming rigid motion: a spin about `axis` through `centre` and a travelling ripple
/// along the rest normals.
#[derive(Clone, Copy, Debug)]
struct Deform {
    centre: Vec3,
    axis: Vec3,
    /// Radians per frame.
    spin: f32,
    /// Ripple amplitude (scene units).
    ripple: f32,
    /// Ripple wave vector.
    wave: Vec3,
    /// Ripple phase at frame 0 and per frame.
    phase: f32,
    speed: f32,
    /// Translation: amplitude and angular frequency (per frame) of a small oscillation.
    sway: Vec3,
    sway_speed: f32,
}

impl Deform {
    fn still(centre: Vec3) -> Self {
        Deform {
            centre,
            axis: Vec3::Z,
            spin: 0.0,
            ripple: 0.0,
            wave: Vec3::ZERO,
            phase: 0.0,
            speed: 0.0,
            sway: Vec3::ZERO,
            sway_speed: 0.0,
        }
    }

    fn apply(&self, rest: &[Vec3], normals: &[Vec3], f: usize) -> Vec<Vec3> {
        let t = f as f32;
        let rot = Quat::from_axis_angle(self.axis, self.spin * t);
        let shift = self.sway * (self.sway_speed * t).sin();
        let phase = self.phase + self.speed * t;
        rest.iter()
            .zip(normals)
            .map(|(p, n)| {
                let bump = self.ripple * (self.wave.dot(*p) + phase).sin();
                self.centre + rot * (*p + *n * bump - self.centre) + shift
            })
            .collect()
    }
}

/// Expands the motion of every body over `frames + 1` frames.
fn animate(bodies: &[BodyDef], motions: &[Option<Deform>], frames: usize) -> Vec<Vec<Vec<Vec3>>> {
    let normals: Vec<Vec<Vec3>> = bodies.iter().map(|b| rest_normals(&b.mesh)).collect();
    (0..=frames)
        .map(|f| {
            bodies
                .iter()
                .zip(motions)
                .zip(&normals)
                .map(|((b, m), n)| match m {
                    Some(m) => m.apply(&b.mesh.positions, n, f),
                    None if f == 0 => b.mesh.positions.clone(),
                    None => Vec::new(),
                })
                .collect()
        })
        .collect()
}

fn rng(seed: u64, salt: u64) -> rand_pcg::Pcg64 {
    rand_pcg::Pcg64::seed_from_u64(seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

fn frames_for(opts: &SceneOptions, tiny: usize, default: usize, paper: usize) -> usize {
    opts.frames.unwrap_or(match opts.size {
        SizePreset::Tiny => tiny,
        SizePreset::Default => default,
        SizePreset::Paper => paper,
    })
}

fn volumetric(name: String, mesh: TriMesh, moving: bool) -> BodyDef {
    BodyDef { name, mesh, kind: BodyKind::Volumetric, moving }
}

/// A torus whose tube ripples and which spins in its own plane, with seeded phase and speed.
fn torus_motion(centre: Vec3, axis: Vec3, r: &mut rand_pcg::Pcg64, ripple: f32) -> Deform {
    Deform {
        centre,
        axis,
        spin: r.random_range(0.004..0.012),
        ripple,
        wave: Vec3::new(r.random_range(3.0..6.0), r.random_range(3.0..6.0), r.random_range(1.0..3.0)),
        phase: r.random_range(0.0..TAU),
        speed: r.random_range(0.2..0.4),
        sway: Vec3::ZERO,
        sway_speed: 0.0,
    }
}

/// Two interlocked tori of `4 m^2` triangles each, B in the xz plane with its centre 0.5 along x.
fn torus_pair(m: u32, frames: usize, seed: u64, salt: u64) -> (Vec<BodyDef>, Vec<Vec<Vec<Vec3>>>) {
    let a = meshes::torus(1.0, 0.35, 2 * m, m);
    let b = a.transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_x(FRAC_PI_2),
        Vec3::new(0.5, 0.0, 0.0),
    ));
    let mut r = rng(seed, salt);
    let bodies = vec![volumetric("torus A".into(), a, true), volumetric("torus B".into(), b, true)];
    let motions = [
        Some(torus_motion(Vec3::ZERO, Vec3::Z, &mut r, 0.02)),
        Some(torus_motion(Vec3::new(0.5, 0.0, 0.0), Vec3::Y, &mut r, 0.02)),
    ];
    let positions = animate(&bodies, &motions, frames);
    (bodies, positions)
}

fn hermann_tori(opts: &SceneOptions) -> Vec<Instance> {
    let frames = frames_for(opts, 2, 60, 200);
    let m = if opts.size == SizePreset::Tiny { 8 } else { 20 };
    let (bodies, positions) = torus_pair(m, frames, opts.seed, 1);
    vec![Instance {
        scene: SceneName::HermannTori,
        variant: String::new(),
        parameter: None,
        bodies,
        positions,
        pairs: None,
        prediction: 0.0,
        walking: None,
    }]
}

/// The chain of `n` tori: torus `i` at `1.5 i` along x, alternately in the xy and xz planes, each
/// interpenetrating its neighbours like the tori of `hermann-tori`.
fn tori_chain(n: u32, m: u32, frames: usize, seed: u64) -> Instance {
    let base = meshes::torus(1.0, 0.35, 2 * m, m);
    let mut r = rng(seed, 2);
    let mut bodies = Vec::new();
    let mut motions = Vec::new();
    for i in 0..n {
        let centre = Vec3::new(1.5 * i as f32, 0.0, 0.0);
        let (rot, axis) =
            if i % 2 == 0 { (Quat::IDENTITY, Vec3::Z) } else { (Quat::from_rotation_x(FRAC_PI_2), Vec3::Y) };
        let mesh = base.transformed(Affine3A::from_rotation_translation(rot, centre));
        bodies.push(volumetric(format!("torus {i}"), mesh, true));
        motions.push(Some(torus_motion(centre, axis, &mut r, 0.02)));
    }
    let positions = animate(&bodies, &motions, frames);
    Instance {
        scene: SceneName::ToriScaling,
        variant: format!("N={n}"),
        parameter: Some(n as f64),
        bodies,
        positions,
        pairs: None,
        prediction: 0.0,
        walking: None,
    }
}

fn tori_scaling(opts: &SceneOptions) -> Vec<Instance> {
    let frames = frames_for(opts, 1, 6, 20);
    let counts = opts.tori.clone().unwrap_or_else(|| match opts.size {
        SizePreset::Tiny => vec![1, 2, 3],
        SizePreset::Default => vec![1, 2, 4, 8, 16, 32, 64],
        SizePreset::Paper => vec![1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64],
    });
    let m = if opts.size == SizePreset::Tiny { 8 } else { 20 };
    counts.into_iter().map(|n| tori_chain(n.max(1), m, frames, opts.seed)).collect()
}

fn resting_pile(opts: &SceneOptions) -> Vec<Instance> {
    let frames = frames_for(opts, 2, 10, 50);
    let (grid, layers, m, ground_n) = match opts.size {
        SizePreset::Tiny => (2u32, 1u32, 8u32, 6u32),
        SizePreset::Default => (5, 3, 15, 24),
        // 36 + 25 + 16 + 9 = 86 tori: a GPU frame of about a second on lavapipe.
        SizePreset::Paper => (6, 4, 15, 36),
    };
    // 30 x 15 segments: 900 triangles.
    let base = meshes::torus(0.5, 0.18, 2 * m, m);
    let spacing = 1.3f32;
    let half = grid as f32 * spacing * 0.5 + 0.6;
    let ground = meshes::cuboid(Vec3::new(half, half, 0.1), ground_n)
        .transformed(Affine3A::from_translation(Vec3::new(0.0, 0.0, -0.1)));
    let mut bodies = vec![volumetric("ground".into(), ground, false)];
    let mut motions = vec![None];
    let mut r = rng(opts.seed, 3);
    for layer in 0..layers {
        let count = grid - layer;
        let offset = -(count as f32 - 1.0) * spacing * 0.5;
        for i in 0..count {
            for j in 0..count {
                let tilt = Quat::from_rotation_x(r.random_range(-0.3..0.3))
                    * Quat::from_rotation_y(r.random_range(-0.3..0.3));
                let yaw = Quat::from_rotation_z(r.random_range(0.0..TAU));
                let centre = Vec3::new(
                    offset + i as f32 * spacing + r.random_range(-0.05..0.05),
                    offset + j as f32 * spacing + r.random_range(-0.05..0.05),
                    0.17 + 0.3 * layer as f32,
                );
                let mesh = base.transformed(Affine3A::from_rotation_translation(tilt * yaw, centre));
                bodies.push(volumetric(format!("torus {}", bodies.len() - 1), mesh, true));
                // Settled: a slow wobble of a few thousandths.
                let mut d = Deform::still(centre);
                d.axis = Vec3::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0), 1.0).normalize();
                d.spin = r.random_range(-0.002..0.002);
                d.sway = Vec3::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0), 0.0) * 0.004;
                d.sway_speed = r.random_range(0.2..0.6);
                motions.push(Some(d));
            }
        }
    }
    let positions = animate(&bodies, &motions, frames);
    let walking = Some(WalkSetup::for_motion(&positions, WALK_FULL_PASS_EVERY));
    vec![Instance {
        scene: SceneName::RestingPile,
        variant: format!("{} meshes", bodies.len() - 1),
        parameter: None,
        bodies,
        positions,
        pairs: None,
        prediction: 0.0,
        walking,
    }]
}

/// Iterative detection's `full_pass_every` in the walking scenes: large, so that the
/// displacement threshold decides (as in the paper).
const WALK_FULL_PASS_EVERY: u32 = 64;

fn slow_pair(opts: &SceneOptions) -> Vec<Instance> {
    let frames = frames_for(opts, 2, 20, 60);
    let m = match opts.size {
        SizePreset::Tiny => 8,
        SizePreset::Default => 20,
        SizePreset::Paper => 40,
    };
    let a = meshes::torus(1.0, 0.35, 2 * m, m);
    let b = a.transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_x(FRAC_PI_2),
        Vec3::new(0.5, 0.0, 0.0),
    ));
    let mut r = rng(opts.seed, 7);
    let bodies = vec![volumetric("torus A".into(), a, true), volumetric("torus B".into(), b, true)];
    let mut slow = |centre: Vec3, axis: Vec3| {
        let mut d = torus_motion(centre, axis, &mut r, 0.02);
        d.spin = r.random_range(0.0003..0.0008);
        d.speed = r.random_range(0.02..0.05);
        d
    };
    let motions = [Some(slow(Vec3::ZERO, Vec3::Z)), Some(slow(Vec3::new(0.5, 0.0, 0.0), Vec3::Y))];
    let positions = animate(&bodies, &motions, frames);
    let walking = Some(WalkSetup::for_motion(&positions, WALK_FULL_PASS_EVERY));
    let tris: usize = bodies.iter().map(|b| b.mesh.triangles.len()).sum();
    vec![Instance {
        scene: SceneName::SlowPair,
        variant: format!("{tris} triangles"),
        parameter: None,
        bodies,
        positions,
        pairs: None,
        prediction: 0.0,
        walking,
    }]
}

/// The body of `cloth-layers`: an ellipsoid with these radii.
const BODY_RADII: Vec3 = Vec3::new(0.3, 0.22, 0.85);

/// A point of the body's ellipsoid at longitude `theta` and latitude `phi`, and its unit normal.
fn ellipsoid(theta: f32, phi: f32) -> (Vec3, Vec3) {
    let (st, ct) = theta.sin_cos();
    let (sp, cp) = phi.sin_cos();
    let u = Vec3::new(cp * ct, cp * st, sp);
    (u * BODY_RADII, (u / BODY_RADII).normalize())
}

/// Breathing of the body: a radial scale that travels up the body.
fn breath(z: f32, f: usize) -> f32 {
    1.0 + 0.012 * (0.25 * f as f32 + 4.0 * z).sin()
}

/// A garment: a band of the body's ellipsoid between latitudes `phi0` and `phi1`, offset by
/// `offset` along the normal, `segments` around by `rows` up (open at both ends).
struct Garment {
    segments: u32,
    rows: u32,
    phi0: f32,
    phi1: f32,
    offset: f32,
    ripple: f32,
    phase: f32,
}

impl Garment {
    fn param(&self, k: u32) -> (f32, f32) {
        let (i, j) = (k % self.segments, k / self.segments);
        (
            TAU * i as f32 / self.segments as f32,
            self.phi0 + (self.phi1 - self.phi0) * j as f32 / (self.rows - 1) as f32,
        )
    }

    fn positions(&self, f: usize) -> Vec<Vec3> {
        (0..self.segments * self.rows)
            .map(|k| {
                let (theta, phi) = self.param(k);
                let (p, n) = ellipsoid(theta, phi);
                let wave = self.ripple * (5.0 * theta + 7.0 * phi + self.phase + 0.3 * f as f32).sin();
                p * breath(p.z, f) + n * (self.offset + wave)
            })
            .collect()
    }

    fn mesh(&self) -> TriMesh {
        let s = self.segments;
        let at = |i: u32, j: u32| j * s + i % s;
        let mut triangles = Vec::new();
        for j in 0..self.rows - 1 {
            for i in 0..s {
                let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
                triangles.push([a, b, c]);
                triangles.push([a, c, d]);
            }
        }
        TriMesh { positions: self.positions(0), triangles }
    }
}

/// Half-thickness of the garments and sheets.
pub const CLOTH_HALF_THICKNESS: f32 = 0.004;

/// Prediction distance of the cloth scenes, in half-thicknesses.
pub const CLOTH_PREDICTION_FACTOR: f32 = 5.0;

/// Prediction distance of the cloth scenes (every implementation): 5 half-thicknesses.
pub const CLOTH_PREDICTION: f32 = CLOTH_PREDICTION_FACTOR * CLOTH_HALF_THICKNESS;

fn cloth_layers(opts: &SceneOptions) -> Vec<Instance> {
    let frames = frames_for(opts, 1, 8, 30);
    let tiny = opts.size == SizePreset::Tiny;
    let (seg, rings) = if tiny { (24, 12) } else { (128, 80) };
    let body = meshes::uv_sphere(1.0, seg, rings).transformed(Affine3A::from_scale(BODY_RADII));
    let mut r = rng(opts.seed, 4);
    let g = |segments: u32, rows: u32, phi0: f32, phi1: f32, offset: f32, r: &mut rand_pcg::Pcg64| Garment {
        segments,
        rows,
        phi0,
        phi1,
        offset,
        ripple: 0.008,
        phase: r.random_range(0.0..TAU),
    };
    let garments = if tiny {
        vec![
            g(24, 10, -1.1, 1.2, 0.008, &mut r),
            g(16, 6, 0.0, 1.0, 0.018, &mut r),
            g(16, 6, -0.9, -0.1, 0.018, &mut r),
        ]
    } else {
        // 144 x 77 = 11088, 72 x 38 = 2736, 96 x 40 = 3840 vertices.
        vec![
            g(144, 77, -1.1, 1.2, 0.008, &mut r),
            g(72, 38, 0.0, 1.0, 0.018, &mut r),
            g(96, 40, -0.9, -0.1, 0.018, &mut r),
        ]
    };
    let mut bodies = vec![volumetric("body".into(), body.clone(), true)];
    for (k, gm) in garments.iter().enumerate() {
        bodies.push(BodyDef {
            name: format!("garment {}", k + 1),
            mesh: gm.mesh(),
            kind: BodyKind::Cloth { half_thickness: CLOTH_HALF_THICKNESS },
            moving: true,
        });
    }
    let positions = (0..=frames)
        .map(|f| {
            let mut out = vec![body.positions.iter().map(|p| *p * breath(p.z, f)).collect::<Vec<_>>()];
            out.extend(garments.iter().map(|gm| gm.positions(f)));
            out
        })
        .collect();
    vec![Instance {
        scene: SceneName::ClothLayers,
        variant: String::new(),
        parameter: None,
        bodies,
        positions,
        pairs: None,
        prediction: CLOTH_PREDICTION,
        walking: None,
    }]
}

fn eight_sheets(opts: &SceneOptions) -> Vec<Instance> {
    let frames = frames_for(opts, 1, 8, 30);
    let tiny = opts.size == SizePreset::Tiny;
    let (ground_n, sphere_sub, cyl_seg, sheet_n, sheets) =
        if tiny { (4, 2, 24, 16, 3) } else { (24, 4, 1500, 64, 8) };
    let ground = meshes::cuboid(Vec3::new(1.5, 1.5, 0.1), ground_n)
        .transformed(Affine3A::from_translation(Vec3::new(0.0, 0.0, -0.1)));
    // Both sink 0.01 into the ground: no coplanar faces, whose contacts would hang on rounding.
    let (sphere_c, sphere_r) = (Vec3::new(-0.45, 0.0, 0.49), 0.5f32);
    let sphere = meshes::icosphere(sphere_r, sphere_sub).transformed(Affine3A::from_translation(sphere_c));
    let (cyl_c, cyl_r, cyl_h) = (Vec3::new(0.55, 0.1, 0.39), 0.25f32, 0.4f32);
    let cylinder = meshes::cylinder(cyl_r, cyl_h, cyl_seg).transformed(Affine3A::from_translation(cyl_c));
    // The height of the static scene's top surface under (x, y).
    let support = |x: f32, y: f32| -> f32 {
        let mut z = 0.0f32;
        let d2 = (x - sphere_c.x).powi(2) + (y - sphere_c.y).powi(2);
        if d2 < sphere_r * sphere_r {
            z = z.max(sphere_c.z + (sphere_r * sphere_r - d2).sqrt());
        }
        if (x - cyl_c.x).powi(2) + (y - cyl_c.y).powi(2) < cyl_r * cyl_r {
            z = z.max(cyl_c.z + cyl_h);
        }
        z
    };
    let sheet = meshes::grid_sheet(2.4, 2.4, sheet_n, sheet_n);
    let mut bodies = vec![
        volumetric("ground".into(), ground, false),
        volumetric("sphere".into(), sphere, false),
        volumetric("cylinder".into(), cylinder, false),
    ];
    let mut r = rng(opts.seed, 5);
    let mut drift = Vec::new();
    for k in 0..sheets {
        let d = Vec3::new(r.random_range(-0.05..0.05), r.random_range(-0.05..0.05), 0.0);
        drift.push((d, r.random_range(0.0..TAU)));
        bodies.push(BodyDef {
            name: format!("sheet {}", k + 1),
            mesh: sheet.clone(),
            kind: BodyKind::Cloth { half_thickness: CLOTH_HALF_THICKNESS },
            moving: true,
        });
    }
    let gap = 2.0 * CLOTH_HALF_THICKNESS + 0.002;
    let sheet_frame = |k: usize, f: usize| -> Vec<Vec3> {
        let (d, phase) = drift[k];
        // Falling onto the scene: each sheet hangs a little above the one under it, draped over
        // the sphere and the cylinder (slightly into them), with a travelling ripple.
        let fall = 0.9 + 0.06 * k as f32 - 0.02 * f as f32;
        sheet
            .positions
            .iter()
            .map(|p| {
                let q = *p + d;
                let drape = support(q.x, q.y) + k as f32 * gap - 0.003;
                let ripple = 0.004 * (6.0 * q.x + 5.0 * q.y + phase + 0.4 * f as f32).sin();
                Vec3::new(q.x, q.y, fall.max(drape) + ripple)
            })
            .collect()
    };
    let positions = (0..=frames)
        .map(|f| {
            let mut out: Vec<Vec<Vec3>> = bodies[..3]
                .iter()
                .map(|b| if f == 0 { b.mesh.positions.clone() } else { Vec::new() })
                .collect();
            out.extend((0..sheets as usize).map(|k| sheet_frame(k, f)));
            out
        })
        .collect();
    vec![Instance {
        scene: SceneName::EightSheets,
        variant: format!("{sheets} sheets"),
        parameter: None,
        bodies,
        positions,
        pairs: None,
        prediction: CLOTH_PREDICTION,
        walking: None,
    }]
}

fn mesh_scaling(opts: &SceneOptions) -> Vec<Instance> {
    let frames = frames_for(opts, 1, 3, 5);
    let sizes = opts.triangles.clone().unwrap_or_else(|| match opts.size {
        SizePreset::Tiny => vec![800, 3200],
        SizePreset::Default => vec![10_000, 40_000, 160_000, 640_000],
        SizePreset::Paper => vec![10_000, 31_623, 100_000, 316_228, 1_000_000],
    });
    sizes
        .into_iter()
        .map(|size| {
            // Two tori of 4 m^2 triangles each.
            let m = ((size as f64 / 8.0).sqrt().round() as u32).max(3);
            let (bodies, positions) = torus_pair(m, frames, opts.seed, 6);
            let triangles: usize = bodies.iter().map(|b| b.mesh.triangles.len()).sum();
            Instance {
                scene: SceneName::MeshScaling,
                variant: format!("{triangles} triangles"),
                parameter: Some(triangles as f64),
                bodies,
                positions,
                pairs: None,
                prediction: 0.0,
                walking: None,
            }
        })
        .collect()
}

/// Loads a mesh file as `detect` does (OBJ or OFF, exact duplicates welded).
pub fn load_file(path: &std::path::Path) -> Result<TriMesh, String> {
    let mesh = meshes::load_mesh(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (welded, _) = mesh.weld(0.0);
    if welded.triangles.is_empty() {
        return Err(format!("{}: the mesh has no triangles", path.display()));
    }
    Ok(welded)
}

fn files(opts: &SceneOptions) -> Result<Vec<Instance>, String> {
    let Some((pa, pb)) = &opts.files else {
        return Err("scene `files` needs --files A B".into());
    };
    let frames = frames_for(opts, 1, 10, 30);
    let a = load_file(pa)?;
    let b = load_file(pb)?.transformed(Affine3A::from_translation(opts.translate_b));
    let centre = b.positions.iter().fold(Vec3::ZERO, |s, p| s + *p) / b.positions.len() as f32;
    let name = |p: &PathBuf| p.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let bodies = vec![volumetric(name(pa), a, false), volumetric(name(pb), b, true)];
    let mut turn = Deform::still(centre);
    turn.axis = Vec3::Y;
    turn.spin = 0.01;
    let positions = animate(&bodies, &[None, Some(turn)], frames);
    Ok(vec![Instance {
        scene: SceneName::Files,
        variant: format!("{} + {}", name(pa), name(pb)),
        parameter: None,
        bodies,
        positions,
        pairs: Some(vec![(0, 1)]),
        prediction: 0.0,
        walking: None,
    }])
}

/// The instances of a scene (one per variant).
pub fn build(scene: SceneName, opts: &SceneOptions) -> Result<Vec<Instance>, String> {
    Ok(match scene {
        SceneName::HermannTori => hermann_tori(opts),
        SceneName::ToriScaling => tori_scaling(opts),
        SceneName::RestingPile => resting_pile(opts),
        SceneName::SlowPair => slow_pair(opts),
        SceneName::ClothLayers => cloth_layers(opts),
        SceneName::EightSheets => eight_sheets(opts),
        SceneName::MeshScaling => mesh_scaling(opts),
        SceneName::Files => files(opts)?,
    })
}
