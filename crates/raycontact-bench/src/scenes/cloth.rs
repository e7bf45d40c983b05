//! The cloth scenes of Lehericey et al. 2015: `cloth-layers` and `eight-sheets`.

use std::f32::consts::TAU;

use glam::{Affine3A, Vec3};
use rand::Rng;
use raycontact::BodyKind;
use raycontact::meshes::{self, TriMesh};

use super::motion::{frames_for, rng, volumetric};
use super::{BodyDef, Instance, SceneName, SceneOptions, SizePreset};

/// The body of `cloth-layers`: an ellipsoid with these radii.
pub(super) const BODY_RADII: Vec3 = Vec3::new(0.3, 0.22, 0.85);

/// A point of the body's ellipsoid at longitude `theta` and latitude `phi`, and its unit normal.
pub(super) fn ellipsoid(theta: f32, phi: f32) -> (Vec3, Vec3) {
    let (st, ct) = theta.sin_cos();
    let (sp, cp) = phi.sin_cos();
    let u = Vec3::new(cp * ct, cp * st, sp);
    (u * BODY_RADII, (u / BODY_RADII).normalize())
}

/// Breathing of the body: a radial scale that travels up the body.
pub(super) fn breath(z: f32, f: usize) -> f32 {
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

pub(super) fn cloth_layers(opts: &SceneOptions) -> Vec<Instance> {
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

pub(super) fn eight_sheets(opts: &SceneOptions) -> Vec<Instance> {
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
