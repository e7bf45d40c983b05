//! One step of the coupled simulation, top to bottom: the soft bodies' boundary particles set
//! into raycontact's scene, raycontact's detection, its response applied as particle velocity
//! changes, rapier's step, and what each side reports.

use std::time::Instant;

use glam::Vec3;
use rapier3d::dynamics::SoftBodyHandle;
use raycontact::{BodyId, BodyKind, Contact, ContactForces, Contacts, GpuContext, Pairs, Response, Scene};

use crate::friction::{self, Velocities};
use crate::outcome::Measure;
use crate::rapier_contacts::RapierContacts;
use crate::scene::{SoftContacts, World};
use crate::surface::Surface;

/// raycontact's collision contacts of a step, by the kind of pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Classes {
    /// Between the two FEM bodies (both directions).
    pub fem: usize,
    /// Between the cloth and either FEM body (both directions).
    pub cloth_fem: usize,
    /// The cloth against itself (the self pair (C, C)).
    pub cloth_self: usize,
    /// Of those, flagged `INVERTED` (a cloth vertex that crossed the cloth since the last step).
    pub inverted: usize,
}

/// One step's figures, side by side.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Step {
    /// raycontact's detection (`Scene::detect`: frame, rays, readback), wall-clock ms.
    pub detect_ms: f64,
    /// Its stages' GPU time by timestamps, ms (`None` on the CPU backend, or without
    /// timestamps).
    pub detect_gpu_ms: Option<f64>,
    /// Its dispatches (0 on the CPU backend).
    pub dispatches: u32,
    /// raycontact's response (`Scene::contact_forces`, with its readback) and the velocity
    /// changes, wall-clock ms (0 when the response is not applied).
    pub response_ms: f64,
    /// raycontact's collision contacts.
    pub contacts: Classes,
    /// The largest particle velocity change the response made (m/s).
    pub largest_dv: f32,
    /// The coupling's friction: contacts that slid (at the Coulomb bound) and that stuck.
    pub friction: (usize, usize),
    /// rapier's step (`PhysicsWorld::step`), wall-clock ms.
    pub rapier_ms: f64,
    /// rapier's own soft contacts after its step.
    pub rapier: RapierContacts,
    /// The outcome's figures after the step.
    pub measure: Measure,
    /// GPU buffers raycontact's scene has created (0 on the CPU backend).
    pub buffers: u64,
}

/// The coupled simulation: rapier's world and raycontact's scene of its soft bodies' boundaries.
pub struct Simulation {
    /// The rapier world.
    pub world: World,
    scene: Scene,
    /// (rapier body, raycontact body, its surface) for the slab, the cube and the cloth.
    bodies: Vec<(SoftBodyHandle, BodyId, Surface)>,
    contacts: SoftContacts,
    dt: f32,
    friction: f32,
    positions: Vec<Vec3>,
    /// The last step's contacts, refilled by the next ([`Scene::detect_into`]: no new vector a
    /// step).
    found: Contacts,
}

/// Errors of the coupled simulation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// From raycontact.
    #[error(transparent)]
    Raycontact(#[from] raycontact::Error),
    /// A soft body's boundary changed (a tear): the bodies are added to raycontact once, with
    /// the boundary they had.
    #[error("the boundary of soft body {0:?} changed (torn): raycontact's body is stale")]
    Topology(SoftBodyHandle),
    /// Settings the scene cannot be built with.
    #[error("settings: {0}")]
    Settings(String),
}

impl Simulation {
    /// The scene of `settings` on `ctx`'s GPU, or on raycontact's CPU backend with `None`.
    ///
    /// Errors: [`Error::Settings`] for a cube or a cloth of fewer than 2 particles along its
    /// edges, or a time step not > 0; raycontact's errors.
    pub fn new(ctx: Option<&GpuContext>, s: &crate::Settings) -> Result<Self, Error> {
        if s.cube < 2 || s.cloth < 2 || !(s.dt > 0.0 && s.dt.is_finite()) {
            return Err(Error::Settings(format!(
                "cube {} (at least 2), cloth {} (at least 2), dt {} (> 0)",
                s.cube, s.cloth, s.dt
            )));
        }
        let world = World::new(s);
        let mut scene = match ctx {
            Some(c) => Scene::new(c),
            None => Scene::new_cpu(None)?,
        };
        let mut bodies = Vec::new();
        let mut masses = Vec::new();
        for (i, h) in world.soft_bodies().into_iter().enumerate() {
            let sb = &world.physics.soft_bodies[h];
            let surface = Surface::of(sb);
            let mut x = Vec::new();
            surface.gather(sb, &mut x);
            let kind = if i < 2 {
                BodyKind::Volumetric
            } else {
                BodyKind::Cloth { half_thickness: s.half_thickness }
            };
            let id = scene.add_body(&x, &surface.triangles, kind)?;
            masses.push(sb.particles().iter().map(|p| p.mass()).fold(f32::INFINITY, f32::min));
            bodies.push((h, id, surface));
        }
        // k = κ m / dt² with m the lighter particle of the pair; one damping, ζ m / dt with the
        // lightest particle of the scene.
        let lightest = masses.iter().copied().fold(f32::INFINITY, f32::min);
        scene.set_response(Response {
            stiffness: s.stiffness * lightest / (s.dt * s.dt),
            damping: s.damping * lightest / s.dt,
            time_step: s.dt,
            direction: s.direction,
            ..Response::default()
        })?;
        for i in 0..bodies.len() {
            for j in i..bodies.len() {
                let k = s.stiffness * masses[i].min(masses[j]) / (s.dt * s.dt);
                scene.set_pair_stiffness(bodies[i].1, bodies[j].1, k)?;
            }
        }
        Ok(Self {
            world,
            scene,
            bodies,
            contacts: s.contacts,
            dt: s.dt,
            friction: s.friction,
            positions: Vec::new(),
            found: Contacts::default(),
        })
    }

    /// raycontact's scene.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// One step: detect at the particles' current positions, apply the response (in
    /// [`SoftContacts::Raycontact`] mode), step rapier.
    pub fn step(&mut self) -> Result<Step, Error> {
        let mut step = Step::default();
        for (h, id, surface) in &self.bodies {
            let sb = &self.world.physics.soft_bodies[*h];
            if !surface.is_current(sb) {
                return Err(Error::Topology(*h));
            }
            surface.gather(sb, &mut self.positions);
            self.scene.set_positions(*id, &self.positions)?;
        }
        let start = Instant::now();
        self.scene.detect_into(Pairs::Overlapping, &mut self.found)?;
        step.detect_ms = ms(start);
        // Taken while the response borrows the simulation, and put back for the next step to
        // refill.
        let found = std::mem::take(&mut self.found);
        step.detect_gpu_ms = found.stats.gpu_ns().map(|ns| ns * 1e-6);
        step.dispatches = found.stats.dispatches();
        step.contacts = self.classes(&found.contacts);
        let responded = if self.contacts == SoftContacts::Raycontact {
            let start = Instant::now();
            let forces = self.scene.contact_forces();
            if let Ok(forces) = &forces {
                self.respond(&found.contacts, forces, &mut step);
            }
            step.response_ms = ms(start);
            forces.map(|_| ())
        } else {
            Ok(())
        };
        self.found = found;
        responded?;
        let start = Instant::now();
        self.world.physics.step();
        step.rapier_ms = ms(start);
        step.rapier = RapierContacts::of(&self.world);
        step.measure = Measure::of(&self.world);
        step.buffers = self.scene.buffer_allocations();
        Ok(step)
    }

    /// The response's velocity changes, `Δv = F dt / m` on every surface particle, then the
    /// coupling's friction at the same contacts ([`crate::friction`]), written to the particles.
    fn respond(&mut self, contacts: &[Contact], forces: &ContactForces, step: &mut Step) {
        let bodies = &self.world.physics.soft_bodies;
        let (before, inv_mass): (Vec<_>, Vec<_>) =
            self.bodies.iter().map(|(h, _, surface)| surface.velocities(&bodies[*h])).unzip();
        let mut v = Velocities {
            bodies: self.bodies.iter().zip(&before).map(|((_, id, _), v)| (*id, v.clone())).collect(),
            inv_mass,
        };
        for (b, (_, id, _)) in self.bodies.iter().enumerate() {
            let f = forces.of(*id).expect("a body of the scene");
            for ((x, f), w) in v.bodies[b].1.iter_mut().zip(f).zip(&v.inv_mass[b]) {
                let dv = *f * (self.dt * w);
                step.largest_dv = step.largest_dv.max(dv.length());
                *x += dv;
            }
        }
        if self.friction > 0.0 {
            let triangles: Vec<&[[u32; 3]]> =
                self.bodies.iter().map(|(_, _, s)| s.triangles.as_slice()).collect();
            step.friction = friction::apply(&mut v, &triangles, contacts, forces, self.friction, self.dt);
        }
        for (b, (h, _, surface)) in self.bodies.iter().enumerate() {
            surface.set_velocities(&mut self.world.physics.soft_bodies[*h], &before[b], &v.bodies[b].1);
        }
    }

    fn classes(&self, contacts: &[Contact]) -> Classes {
        let cloth = self.bodies[2].1;
        let mut c = Classes::default();
        for x in contacts.iter().filter(|x| x.is_collision()) {
            match (x.source_body == cloth, x.target_body == cloth) {
                (true, true) => c.cloth_self += 1,
                (false, false) => c.fem += 1,
                _ => c.cloth_fem += 1,
            }
            c.inverted += usize::from(x.is_inverted());
        }
        c
    }
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}
