//! The simulation, the same on the page and natively: the scene's bodies in a raycontact
//! [`Scene`] (on the page's WebGPU device, or on the CPU backend), one detection a step on the
//! positions the step starts from, then the cloth integrated with the contacts.

use glam::Vec3;
use raycontact::{BodyId, Contact, Contacts, Pairs, Scene};
use web_time::Instant;

use crate::cloth::{Cloth, ClothSettings};
use crate::scene::{CLOTH, PREDICTION_DISTANCE, SceneSpec, TIME_STEP};

/// What one frame's detection found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Every contact (collisions and predictions).
    pub contacts: u32,
    /// Collisions.
    pub collisions: u32,
    /// Predictions.
    pub predictions: u32,
    /// A hash (FNV-1a) of every contact's key in the detection's order: source body, source
    /// vertex, target body, target triangle, flags (bodies by their index in the scene).
    pub keys: u64,
}

impl Counts {
    /// The counts of a detection's contacts, bodies numbered by their index in `ids`.
    pub fn of(contacts: &[Contact], ids: &[BodyId]) -> Self {
        let index = |b: BodyId| ids.iter().position(|i| *i == b).map_or(u32::MAX, |i| i as u32);
        let mut keys = 0xcbf2_9ce4_8422_2325u64;
        for c in contacts {
            let key = [
                index(c.source_body),
                c.source_vertex,
                index(c.target_body),
                c.target_triangle,
                c.flags.bits(),
            ];
            for word in key {
                for byte in word.to_le_bytes() {
                    keys = (keys ^ byte as u64).wrapping_mul(0x0100_0000_01b3);
                }
            }
        }
        let collisions = contacts.iter().filter(|c| c.is_collision()).count() as u32;
        let predictions = contacts.iter().filter(|c| c.is_prediction()).count() as u32;
        Self { contacts: contacts.len() as u32, collisions, predictions, keys }
    }
}

/// One step's report.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// The frame's number, from 1.
    pub frame: u32,
    /// What the detection found.
    pub counts: Counts,
    /// The detection's wall time (recording, submission, readback), in milliseconds.
    pub detect_ms: f64,
    /// The integration's wall time, in milliseconds.
    pub integrate_ms: f64,
}

/// The simulation.
pub struct Sim {
    scene: Scene,
    spec: SceneSpec,
    ids: Vec<BodyId>,
    cloth: Cloth,
    frame: u32,
    /// The last frame's contacts, refilled by the next detection (`detect_into_async`: no new
    /// vector a frame).
    found: Contacts,
}

/// The integrator's settings for the demo.
pub fn cloth_settings() -> ClothSettings {
    ClothSettings {
        gravity: Vec3::new(0.0, -9.81, 0.0),
        iterations: 12,
        bending: 0.15,
        damping: 0.01,
        friction: 0.4,
        max_step: 0.75 * PREDICTION_DISTANCE,
        half_thickness: crate::scene::CLOTH_HALF_THICKNESS,
    }
}

impl Sim {
    /// The scene `spec` in `scene` (empty: a GPU scene on a context, or the CPU backend's).
    pub fn new(mut scene: Scene, spec: SceneSpec) -> raycontact::Result<Self> {
        scene.set_prediction_distance(PREDICTION_DISTANCE)?;
        let mut ids = Vec::with_capacity(spec.bodies.len());
        for b in &spec.bodies {
            ids.push(scene.add_body(&b.mesh.positions, &b.mesh.triangles, b.kind)?);
        }
        let c = &spec.bodies[CLOTH].mesh;
        let cloth = Cloth::new(&c.positions, &c.triangles, spec.cloth_grid, cloth_settings());
        Ok(Self { scene, spec, ids, cloth, frame: 0, found: Contacts::default() })
    }

    /// The scene's definition.
    pub fn spec(&self) -> &SceneSpec {
        &self.spec
    }

    /// The raycontact scene.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// Frames run so far.
    pub fn frame(&self) -> u32 {
        self.frame
    }

    /// The current positions of body `b` (an index into the spec's bodies).
    pub fn positions(&self, b: usize) -> &[Vec3] {
        if b == CLOTH { &self.cloth.positions } else { &self.spec.bodies[b].mesh.positions }
    }

    /// One frame: the contacts of the current positions, then one step of the integrator.
    pub async fn step(&mut self) -> raycontact::Result<Frame> {
        let start = Instant::now();
        self.scene.set_positions(self.ids[CLOTH], &self.cloth.positions)?;
        self.scene.detect_into_async(Pairs::Overlapping, &mut self.found).await?;
        let detect_ms = ms(start);
        let start = Instant::now();
        self.cloth.step(&self.found.contacts, self.ids[CLOTH], TIME_STEP);
        self.frame += 1;
        Ok(Frame {
            frame: self.frame,
            counts: Counts::of(&self.found.contacts, &self.ids),
            detect_ms,
            integrate_ms: ms(start),
        })
    }

    /// A detection on given positions (`Some` for each body that moved), without integrating:
    /// what a replay of another run's positions does.
    pub async fn detect_at(&mut self, positions: &[Option<Vec<Vec3>>]) -> raycontact::Result<Counts> {
        for (id, p) in self.ids.iter().zip(positions) {
            if let Some(p) = p {
                self.scene.set_positions(*id, p)?;
            }
        }
        self.scene.detect_into_async(Pairs::Overlapping, &mut self.found).await?;
        self.frame += 1;
        Ok(Counts::of(&self.found.contacts, &self.ids))
    }
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}
