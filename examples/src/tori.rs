//! Hermann et al. 2008's Figure 10: two deformable tori started interpenetrating, pushed apart by
//! the contact response. Each torus is a shape-matching body ([`crate::shape`]); raycontact
//! detects their contacts every frame (both directions) and turns the collisions into forces.

use glam::{Affine3A, Vec3};
use raycontact::{BodyKind, GpuContext, Pairs, Response, Scene, meshes};

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
}

impl Default for Settings {
    fn default() -> Self {
        Self { segments: (48, 16), frames: 120, overlap: 0.25 }
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
}

/// Runs the simulation on `ctx` (the CPU backend with `None`), calling `each` after every frame.
pub fn run(
    ctx: Option<&GpuContext>,
    s: Settings,
    mut each: impl FnMut(usize, &Frame),
) -> raycontact::Result<Vec<Frame>> {
    let mut scene = match ctx {
        Some(c) => Scene::new(c),
        None => Scene::new_cpu(None)?,
    };
    let ring = meshes::torus(1.0, 0.3, s.segments.0, s.segments.1);
    // The second torus lies in the same plane, its ring shifted so that the tubes overlap.
    let shift = 2.0 * 1.3 - s.overlap;
    let other = ring.transformed(Affine3A::from_translation(Vec3::X * shift));
    let a = scene.add_body(&ring.positions, &ring.triangles, BodyKind::Volumetric)?;
    let b = scene.add_body(&other.positions, &other.triangles, BodyKind::Volumetric)?;
    let dt = 1.0 / 60.0;
    scene.set_response(Response { stiffness: 0.5, damping: 0.01, time_step: dt, ..Response::default() })?;
    let mass = 1.0 / ring.positions.len() as f32;
    let mut bodies =
        [ShapeBody::new(&ring.positions, mass, 0.2, 0.05), ShapeBody::new(&other.positions, mass, 0.2, 0.05)];
    let mut frames = Vec::with_capacity(s.frames);
    for frame in 0..s.frames {
        scene.set_positions(a, &bodies[0].positions)?;
        scene.set_positions(b, &bodies[1].positions)?;
        let found = scene.detect(Pairs::Overlapping)?;
        let forces = scene.contact_forces()?;
        let collisions = found.contacts.iter().filter(|c| c.is_collision());
        let f = Frame {
            contacts: collisions.clone().count(),
            depth: collisions.map(|c| c.depth).fold(0.0, f32::max),
            distance: bodies[0].centroid().distance(bodies[1].centroid()),
        };
        for (body, id) in bodies.iter_mut().zip([a, b]) {
            body.step(forces.of(id).expect("a live body"), dt);
        }
        each(frame, &f);
        frames.push(f);
    }
    Ok(frames)
}
