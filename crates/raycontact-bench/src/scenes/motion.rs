//! The scripted motion of the scenes: a deforming rigid motion per body, expanded over the
//! frames, and the small helpers every scene uses (its seeded generator, its frame count).

use glam::{Quat, Vec3};
use rand::SeedableRng;
use raycontact::BodyKind;
use raycontact::meshes::TriMesh;

use super::{BodyDef, SceneOptions, SizePreset};

/// Per-vertex area-weighted normals of a mesh at rest.
pub(super) fn rest_normals(mesh: &TriMesh) -> Vec<Vec3> {
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
pub(super) struct Deform {
    pub(super) centre: Vec3,
    pub(super) axis: Vec3,
    /// Radians per frame.
    pub(super) spin: f32,
    /// Ripple amplitude (scene units).
    pub(super) ripple: f32,
    /// Ripple wave vector.
    pub(super) wave: Vec3,
    /// Ripple phase at frame 0 and per frame.
    pub(super) phase: f32,
    pub(super) speed: f32,
    /// Translation: amplitude and angular frequency (per frame) of a small oscillation.
    pub(super) sway: Vec3,
    pub(super) sway_speed: f32,
}

impl Deform {
    pub(super) fn still(centre: Vec3) -> Self {
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

    pub(super) fn apply(&self, rest: &[Vec3], normals: &[Vec3], f: usize) -> Vec<Vec3> {
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
pub(super) fn animate(bodies: &[BodyDef], motions: &[Option<Deform>], frames: usize) -> Vec<Vec<Vec<Vec3>>> {
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

pub(super) fn rng(seed: u64, salt: u64) -> rand_pcg::Pcg64 {
    rand_pcg::Pcg64::seed_from_u64(seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

pub(super) fn frames_for(opts: &SceneOptions, tiny: usize, default: usize, paper: usize) -> usize {
    opts.frames.unwrap_or(match opts.size {
        SizePreset::Tiny => tiny,
        SizePreset::Default => default,
        SizePreset::Paper => paper,
    })
}

pub(super) fn volumetric(name: String, mesh: TriMesh, moving: bool) -> BodyDef {
    BodyDef { name, mesh, kind: BodyKind::Volumetric, moving }
}
