//! The scenes of tori: `hermann-tori`, `tori-scaling`, `resting-pile`, `slow-pair` and
//! `mesh-scaling`.

use std::f32::consts::{FRAC_PI_2, TAU};

use glam::{Affine3A, Quat, Vec3};
use rand::Rng;
use raycontact::meshes;

use super::motion::{Deform, animate, frames_for, rng, volumetric};
use super::{BodyDef, Instance, SceneName, SceneOptions, SizePreset, WalkSetup};

/// A torus whose tube ripples and which spins in its own plane, with seeded phase and speed.
pub(super) fn torus_motion(centre: Vec3, axis: Vec3, r: &mut rand_pcg::Pcg64, ripple: f32) -> Deform {
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
pub(super) fn torus_pair(m: u32, frames: usize, seed: u64, salt: u64) -> (Vec<BodyDef>, Vec<Vec<Vec<Vec3>>>) {
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

pub(super) fn hermann_tori(opts: &SceneOptions) -> Vec<Instance> {
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
pub(super) fn tori_chain(n: u32, m: u32, frames: usize, seed: u64) -> Instance {
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

/// Timed frames of the default preset's chain of `n` tori (without `--frames`): 6, but at least
/// 48 / `n`, so that a chain of one to four tori (frames of 0.1 to 1 ms, whose median of 6 a few
/// slow frames of the machine moved the most) gets a median of 12 to 48 frames; the suite's wall
/// time did not change (40.1-41.4 s before, 40.4-40.6 after, 3 runs each). On the 2-core VM,
/// with 6 frames, `cpu-rayon`'s median on 4 tori was 0.79 ms in one suite run and 1.36 in the
/// next. (A machine that lends the pools one core for a whole instance halves every 2-thread
/// implementation alike there, whatever the frames.)
const CHAIN_FRAMES: usize = 48;

pub(super) fn tori_scaling(opts: &SceneOptions) -> Vec<Instance> {
    let frames = frames_for(opts, 1, 6, 20);
    let default = opts.frames.is_none() && opts.size == SizePreset::Default;
    let counts = opts.tori.clone().unwrap_or_else(|| match opts.size {
        SizePreset::Tiny => vec![1, 2, 3],
        SizePreset::Default => vec![1, 2, 4, 8, 16, 32, 64],
        SizePreset::Paper => vec![1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64],
    });
    let m = if opts.size == SizePreset::Tiny { 8 } else { 20 };
    let frames_of = |n: u32| if default { frames.max(CHAIN_FRAMES / n as usize) } else { frames };
    counts.into_iter().map(|n| n.max(1)).map(|n| tori_chain(n, m, frames_of(n), opts.seed)).collect()
}

pub(super) fn resting_pile(opts: &SceneOptions) -> Vec<Instance> {
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
pub(super) const WALK_FULL_PASS_EVERY: u32 = 64;

pub(super) fn slow_pair(opts: &SceneOptions) -> Vec<Instance> {
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

pub(super) fn mesh_scaling(opts: &SceneOptions) -> Vec<Instance> {
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
