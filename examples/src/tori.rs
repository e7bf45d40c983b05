//! Hermann et al. 2008's Figure 10: two deformable tori started interpenetrating, pushed apart by
//! the contact response. Each torus is a shape-matching body ([`crate::shape`]); raycontact
//! detects their contacts every frame (both directions) and turns the collisions into forces.

use glam::{Affine3A, Quat, Vec3};
use rand::{Rng, SeedableRng};
use raycontact::meshes;
use raycontact::{BodyId, BodyKind, GpuContext, Pairs, Response, Scene};

use crate::render::{Camera, Mesh};
use crate::shape::ShapeBody;

/// Penetration depth under which the tori count as separated (they end resting against each
/// other, touching: contacts of depth ~0 remain).
pub const RESOLVED: f32 = 1e-3;

/// The example's settings.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Segments around the ring and around the tube of each torus.
    pub segments: (u32, u32),
    /// Frames to simulate.
    pub frames: usize,
    /// How far the second torus starts inside the first (along x, tube radius 0.3).
    pub overlap: f32,
    /// Seed of the second torus's placement: tilted by up to 2 degrees about a random axis.
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self { segments: (48, 16), frames: 120, overlap: 0.25, seed: 1 }
    }
}

/// One frame's figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// Collision contacts.
    pub contacts: usize,
    /// The deepest collision's depth.
    pub depth: f32,
    /// Distance between the tori's centres.
    pub distance: f32,
    /// GPU buffers the scene has created (0 on the CPU backend).
    pub buffers: u64,
}

/// The simulation.
#[derive(Debug)]
pub struct Tori {
    scene: Scene,
    ids: [BodyId; 2],
    bodies: [ShapeBody; 2],
    triangles: Vec<[u32; 3]>,
    dt: f32,
}

impl Tori {
    /// The scene on `ctx`'s GPU (the CPU backend with `None`).
    pub fn new(ctx: Option<&GpuContext>, s: Settings) -> raycontact::Result<Self> {
        let mut scene = match ctx {
            Some(c) => Scene::new(c),
            None => Scene::new_cpu(None)?,
        };
        let mut rng = rand_pcg::Pcg64::seed_from_u64(s.seed);
        let ring = meshes::torus(1.0, 0.3, s.segments.0, s.segments.1);
        // The second torus lies in the same plane (up to the seed's tilt), its ring shifted so
        // that the tubes overlap.
        let axis =
            Vec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
        let tilt =
            Quat::from_axis_angle(axis.normalize_or(Vec3::X), rng.random_range(0.0..2f32.to_radians()));
        let shift = 2.0 * 1.3 - s.overlap;
        let other = ring.transformed(Affine3A::from_rotation_translation(tilt, Vec3::X * shift));
        let a = scene.add_body(&ring.positions, &ring.triangles, BodyKind::Volumetric)?;
        let b = scene.add_body(&other.positions, &other.triangles, BodyKind::Volumetric)?;
        let dt = 1.0 / 60.0;
        scene.set_response(Response {
            stiffness: 0.5,
            damping: 0.01,
            time_step: dt,
            ..Response::default()
        })?;
        let mass = 1.0 / ring.positions.len() as f32;
        let bodies = [
            ShapeBody::new(&ring.positions, mass, 0.2, 0.05),
            ShapeBody::new(&other.positions, mass, 0.2, 0.05),
        ];
        Ok(Self { scene, ids: [a, b], bodies, triangles: ring.triangles, dt })
    }

    /// The scene.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// One frame: the detection at the current positions, the response's forces, one
    /// shape-matching step of each torus.
    pub fn step(&mut self) -> raycontact::Result<Frame> {
        for (body, id) in self.bodies.iter().zip(self.ids) {
            self.scene.set_positions(id, &body.positions)?;
        }
        let found = self.scene.detect(Pairs::Overlapping)?;
        let forces = self.scene.contact_forces()?;
        let collisions = found.contacts.iter().filter(|c| c.is_collision());
        let f = Frame {
            contacts: collisions.clone().count(),
            depth: collisions.map(|c| c.depth).fold(0.0, f32::max),
            distance: self.bodies[0].centroid().distance(self.bodies[1].centroid()),
            buffers: self.scene.buffer_allocations(),
        };
        for (body, id) in self.bodies.iter_mut().zip(self.ids) {
            body.step(forces.of(id).expect("a live body"), self.dt);
        }
        Ok(f)
    }

    /// Whether every position and velocity is finite.
    pub fn is_finite(&self) -> bool {
        self.bodies.iter().all(|b| b.positions.iter().chain(&b.velocities).all(|p| p.is_finite()))
    }

    /// What to draw: the two tori.
    pub fn meshes(&self) -> Vec<Mesh<'_>> {
        let colors = [[0.80, 0.30, 0.20], [0.25, 0.50, 0.75]];
        self.bodies
            .iter()
            .zip(colors)
            .map(|(b, color)| Mesh {
                positions: &b.positions,
                triangles: &self.triangles,
                color,
                smooth: true,
            })
            .collect()
    }

    /// The camera of the PNG frames.
    pub fn camera() -> Camera {
        Camera { eye: Vec3::new(1.2, -4.4, 3.1), target: Vec3::new(1.2, 0.0, -0.1), up: Vec3::Z, fov_y: 0.8 }
    }
}

/// Runs the simulation on `ctx` (the CPU backend with `None`), calling `each` after every frame.
pub fn run(
    ctx: Option<&GpuContext>,
    s: Settings,
    mut each: impl FnMut(usize, &Frame),
) -> raycontact::Result<Vec<Frame>> {
    let mut sim = Tori::new(ctx, s)?;
    let mut frames = Vec::with_capacity(s.frames);
    for i in 0..s.frames {
        let f = sim.step()?;
        each(i, &f);
        frames.push(f);
    }
    Ok(frames)
}
