//! Cloths among static bodies, stepped by predict, detect, correct, commit:
//!
//! 1. each cloth predicts its positions ([`Cloth::predict`]; a scenario may then drive some
//!    vertices); its own constraints and the last step's contacts as unilateral constraints
//!    ([`crate::unilateral`]: predictions keep their gaps, so that a cloth falling fast stops at
//!    the surface instead of sinking into it; collisions may not get deeper) are projected
//!    together, Gauss–Seidel;
//! 2. raycontact detects the contacts at the predicted positions ([`Scene::detect`]: each
//!    cloth against itself, the other cloths and the static bodies, predictions on) and turns the collisions
//!    into penalty forces ([`Scene::contact_forces`], along the re-projected normal);
//! 3. the forces move the predicted positions (semi-implicit Euler, `Δx = f dt² / m`, each
//!    vertex's divided by its share of the collisions: Jacobi averaging); a few more passes of the cloths' constraints with this step's
//!    contacts as unilateral constraints smooth the corrections without pushing any vertex
//!    through a surface that was within the prediction distance (Lehericey et al. 2015: the
//!    response gives the **predictions** no force; a constraint solver uses them); then Coulomb
//!    friction against the static bodies;
//! 4. the positions are committed and the scene updated at them, so that the next detection's
//!    previous positions are the committed ones. The inversion test of Lehericey et al. 2015
//!    compares a vertex's side of a triangle "before time integration" and after: here the last
//!    committed positions and the prediction. (With the previous frame's *predicted* positions
//!    instead, a crossing undone by the response would be seen as a new crossing at the next
//!    step and pushed back.) This costs one BVH update per step besides the detection.
//!
//! The penalty stiffness is `stiffness × m / dt²` (m a cloth vertex's mass): `stiffness = 1`
//! moves a lone vertex by its whole depth in one step.

use glam::Vec3;
use raycontact::{
    BodyId, BodyKind, Contact, ContactFlags, ContactForces, ForceDirection, Intersections, Pairs, Response,
    Scene,
};

use crate::cloth::Cloth;
use crate::unilateral::{Friction, Gaps, MIN_WEIGHT, stick};

/// How a [`World`] steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stepping {
    /// Time step (s).
    pub dt: f32,
    /// Gravity (m/s²).
    pub gravity: Vec3,
    /// Penalty stiffness as a fraction of `m / dt²`.
    pub stiffness: f32,
    /// Damping of the penalty along its direction, as a fraction of `m / dt`.
    pub damping: f32,
    /// Prediction distance (m).
    pub prediction: f32,
    /// Passes over the cloths' constraints and this step's contacts after the corrections
    /// (before the detection: the cloths' own number of iterations, with last step's).
    pub settle_iterations: u32,
    /// Coulomb friction against the static bodies (`None`: none).
    pub friction: Option<Friction>,
}

impl Default for Stepping {
    fn default() -> Self {
        Self {
            dt: 1.0 / 60.0,
            gravity: Vec3::new(0.0, 0.0, -9.81),
            stiffness: 1.0,
            damping: 0.1,
            prediction: 0.03,
            settle_iterations: 4,
            friction: Some(Friction { stick: 0.6, slide: 0.4 }),
        }
    }
}

/// What one step found and did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepReport {
    /// The detection's contacts (at the predicted positions).
    pub contacts: Vec<Contact>,
    /// Collision contacts that gave a force.
    pub forced: u32,
    /// Constraint rows that had to move a vertex (in the last pass before the detection, and
    /// in the last pass after the corrections).
    pub active_rows: u32,
    /// GPU buffers the scene has created so far (0 on the CPU backend).
    pub buffers: u64,
    /// The detection's intersections (empty unless the scene runs the analysis).
    pub intersections: Intersections,
}

impl StepReport {
    /// Collisions (including inverted ones).
    pub fn collisions(&self) -> usize {
        self.contacts.iter().filter(|c| c.is_collision()).count()
    }

    /// Collisions flagged inverted.
    pub fn inverted(&self) -> usize {
        self.contacts.iter().filter(|c| c.is_inverted()).count()
    }

    /// Predictions.
    pub fn predictions(&self) -> usize {
        self.contacts.iter().filter(|c| c.is_prediction()).count()
    }
}

/// Cloths (dynamic) and static bodies in one raycontact scene.
#[derive(Debug)]
pub struct World {
    /// The scene.
    pub scene: Scene,
    /// The cloths and their ids.
    pub cloths: Vec<(BodyId, Cloth)>,
    /// The static bodies' ids.
    pub statics: Vec<BodyId>,
    /// The settings.
    pub stepping: Stepping,
    /// The last detection's contacts as constraint rows.
    gaps: Gaps,
}

impl World {
    /// An empty world on `scene`, with its response and prediction distance set from
    /// `stepping` for cloth vertices of mass `vertex_mass`.
    pub fn new(mut scene: Scene, stepping: Stepping, vertex_mass: f32) -> raycontact::Result<Self> {
        let dt = stepping.dt;
        scene.set_prediction_distance(stepping.prediction)?;
        scene.set_response(Response {
            stiffness: stepping.stiffness * vertex_mass / (dt * dt),
            damping: stepping.damping * vertex_mass / dt,
            time_step: dt,
            direction: ForceDirection::AlongNormal,
            // 2^-24 N a step: forces of a few mN are summed to 1e-5 of their size, and a
            // vertex may carry up to 128 N before the sum could overflow.
            resolution: 1.0 / (1 << 24) as f32,
        })?;
        Ok(Self { scene, cloths: Vec::new(), statics: Vec::new(), stepping, gaps: Gaps::default() })
    }

    /// Adds a cloth of half-thickness `half_thickness`.
    pub fn add_cloth(
        &mut self,
        cloth: Cloth,
        triangles: &[[u32; 3]],
        half_thickness: f32,
    ) -> raycontact::Result<BodyId> {
        let id = self.scene.add_body(&cloth.positions, triangles, BodyKind::Cloth { half_thickness })?;
        self.cloths.push((id, cloth));
        Ok(id)
    }

    /// Adds a static volumetric body.
    pub fn add_static(&mut self, positions: &[Vec3], triangles: &[[u32; 3]]) -> raycontact::Result<BodyId> {
        let id = self.scene.add_body(positions, triangles, BodyKind::Volumetric)?;
        self.statics.push(id);
        Ok(id)
    }

    /// One step; `drive` may move predicted positions (of vertices of inverse mass 0) before
    /// the cloths' constraints are projected.
    pub fn step(&mut self, drive: impl FnOnce(&mut [(BodyId, Cloth)])) -> raycontact::Result<StepReport> {
        let s = self.stepping;
        for (_, c) in &mut self.cloths {
            c.predict(s.dt, s.gravity);
        }
        drive(&mut self.cloths);
        let inertial: Vec<Vec<Vec3>> = self.cloths.iter().map(|(_, c)| c.predicted.clone()).collect();
        let passes = self.cloths.iter().map(|(_, c)| c.material().iterations).max().unwrap_or(0);
        let before = self.project(passes);
        for (id, c) in &self.cloths {
            self.scene.set_positions(*id, &c.predicted)?;
        }
        let pairs = self.pairs();
        let found = self.scene.detect(Pairs::List(&pairs))?;
        let forces = self.scene.contact_forces()?;
        // With global intersection analysis on (`Scene::set_intersections`), a vertex on the
        // wrong side of a cloth must go back through it (its untangling contact pushes it): its
        // vertex rays' contacts with that cloth, which would hold it where it is, make no rows.
        let rows: Vec<Contact> =
            found.contacts.iter().filter(|c| !holds_wrong_side(&found.intersections, c)).copied().collect();
        self.gaps = Gaps::new(&self.scene, &self.cloths, &rows)?;
        self.apply_forces(&forces, &found.contacts)?;
        let after = self.project(s.settle_iterations);
        self.friction(&found.contacts, &inertial);
        for (id, c) in &mut self.cloths {
            c.commit(s.dt);
            self.scene.set_positions(*id, &c.positions)?;
        }
        self.scene.update()?;
        Ok(StepReport {
            contacts: found.contacts,
            forced: forces.contacts,
            active_rows: before + after,
            buffers: self.scene.buffer_allocations(),
            intersections: found.intersections,
        })
    }

    /// `passes` passes, each over every cloth's constraints then over the constraint rows;
    /// returns how many rows moved something in the last pass.
    fn project(&mut self, passes: u32) -> u32 {
        let mut active = 0;
        for _ in 0..passes {
            for (_, c) in &mut self.cloths {
                c.project_once();
            }
            active = self.gaps.project(&mut self.cloths);
        }
        active
    }

    /// Coulomb friction, once per step, on each cloth vertex that touches a static body (a
    /// collision, or a prediction closer than 1 mm, by a ray within 60 degrees of the
    /// surface's normal: a grazing ray's hit may be far): `push` is how far the step moved it
    /// out along the contact's normal from where inertia and gravity alone would have put it.
    /// (Applied inside the passes instead, the pushes that the cloth's own tension causes at
    /// an edge add up to a grip that holds a stretched edge in place.)
    fn friction(&mut self, contacts: &[Contact], inertial: &[Vec<Vec3>]) {
        let Some(friction) = self.stepping.friction else { return };
        let touching = |c: &&Contact| (c.is_collision() || c.depth > -1e-3) && c.weight >= MIN_WEIGHT;
        let mut done: Vec<Vec<bool>> =
            self.cloths.iter().map(|(_, c)| vec![false; c.positions.len()]).collect();
        for c in contacts.iter().filter(touching) {
            let (Some(b), true) = (self.cloth_index(c.source_body), self.statics.contains(&c.target_body))
            else {
                continue;
            };
            let i = c.source_vertex as usize;
            if std::mem::replace(&mut done[b][i], true) {
                continue;
            }
            let cloth = &mut self.cloths[b].1;
            let push = (cloth.predicted[i] - inertial[b][i]).dot(c.normal);
            stick(cloth, i, c.normal, push, friction);
        }
    }

    /// The forces' displacements, each vertex's divided by its share of the collisions
    /// (Jacobi averaging): 1 for each contact of which it is the source, the barycentric weight
    /// for each whose hit triangle it is a corner of. Without it a vertex pressed into a body
    /// would be pushed twice, by its own ray and by the body's rays through the cloth around it.
    fn apply_forces(&mut self, forces: &ContactForces, contacts: &[Contact]) -> raycontact::Result<()> {
        let mut shares: Vec<Vec<f32>> =
            self.cloths.iter().map(|(_, c)| vec![0.0; c.positions.len()]).collect();
        for c in contacts.iter().filter(|c| c.is_collision()) {
            if let Some(b) = self.cloth_index(c.source_body) {
                shares[b][c.source_vertex as usize] += 1.0;
            }
            if let Some(b) = self.cloth_index(c.target_body) {
                let tri = self.scene.triangles(c.target_body)?[c.target_triangle as usize];
                let (u, v) = (c.barycentric.x, c.barycentric.y);
                for (i, w) in tri.iter().zip([1.0 - u - v, u, v]) {
                    shares[b][*i as usize] += w;
                }
            }
        }
        let dt = self.stepping.dt;
        for ((id, c), share) in self.cloths.iter_mut().zip(&shares) {
            let f = forces.of(*id).unwrap_or(&[]);
            let push: Vec<Vec3> = f
                .iter()
                .zip(share)
                .zip(&c.inv_mass)
                .map(|((f, s), w)| *f / s.max(1.0) * (dt * dt * w))
                .collect();
            c.apply_displacements(&push);
        }
        Ok(())
    }

    /// Every cloth against itself, the other cloths and the static bodies (the static bodies
    /// are not tested against each other: nothing would use their contacts).
    fn pairs(&self) -> Vec<(BodyId, BodyId)> {
        let mut out = Vec::new();
        for (i, (a, _)) in self.cloths.iter().enumerate() {
            out.push((*a, *a));
            out.extend(self.cloths[i + 1..].iter().map(|(b, _)| (*a, *b)));
            out.extend(self.statics.iter().map(|b| (*a, *b)));
        }
        out
    }

    fn cloth_index(&self, id: BodyId) -> Option<usize> {
        self.cloths.iter().position(|(c, _)| *c == id)
    }
}

/// Whether `c` is a vertex ray's contact of a vertex that the analysis put on the wrong side of
/// the contact's target (Baraff et al. 2003: such a vertex is not held on its side).
fn holds_wrong_side(x: &Intersections, c: &Contact) -> bool {
    if c.flags.intersects(ContactFlags::EDGE | ContactFlags::UNTANGLE) {
        return false;
    }
    x.regions_of(c.source_body).is_some_and(|r| {
        let region = r.vertex_region[c.source_vertex as usize] as usize;
        r.regions[region].wrong_side_of == Some(c.target_body)
    })
}
