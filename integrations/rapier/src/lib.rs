//! raycontact as the soft-body collision detector of [rapier3d](https://rapier.rs) 0.36: two FEM
//! soft bodies — a slab resting on the ground and a cube dropped on it — and a cloth dropped over
//! the cube, simulated by rapier (its `fem` feature: implicit FEM elasticity), with raycontact
//! detecting the contacts between the soft bodies and the cloth's self contacts on their
//! boundary triangles every step, and its contact response (Hermann et al. 2008, section 4)
//! applied as particle velocity changes before rapier's step.
//!
//! ```sh
//! scripts/with-gpu cargo run --release -p raycontact-rapier --example rapier_soft_bodies
//! cargo run --release -p raycontact-rapier --example rapier_soft_bodies -- --cpu
//! scripts/with-gpu cargo run --release -p raycontact-rapier --example rapier_soft_bodies -- --contacts rapier
//! ```
//!
//! # The loop
//!
//! The soft bodies are added to raycontact's [`Scene`](raycontact::Scene) once: each body's
//! boundary ([`rapier3d::dynamics::SoftBody::boundary`], particle indices, outward for a closed
//! body) renumbered over the particles it uses ([`Surface`]); the slab and the cube as
//! [`BodyKind::Volumetric`](raycontact::BodyKind), the cloth as
//! [`BodyKind::Cloth`](raycontact::BodyKind) with a half-thickness (1 cm). Every step
//! ([`Simulation::step`]):
//!
//! 1. the boundary particles' positions ([`rapier3d::dynamics::SoftBody::particle_position`]) go
//!    into the scene ([`raycontact::Scene::set_positions`]);
//! 2. [`raycontact::Scene::detect`] with [`raycontact::Pairs::Overlapping`] finds the pairs whose
//!    boxes overlap — slab–cube, cloth–slab, cloth–cube, and the cloth's self pair (C, C) — and
//!    their contacts;
//! 3. [`raycontact::Scene::contact_forces`] turns the collisions into per-vertex penalty forces
//!    along the hit triangle's normal ([`raycontact::ForceDirection::AlongNormal`]; `--along-ray`
//!    for Hermann's direction), with the stiffness `k = κ m / dt²` per pair (`m` the lighter
//!    particle of the pair, κ = 1) and a damping along the contact from the previous step's
//!    positions (`ζ m / dt`, `m` the lightest particle of the scene: raycontact's damping is one
//!    per scene), and each particle gets `Δv = F dt / m`
//!    ([`rapier3d::dynamics::SoftBody::set_particle_velocity`]);
//! 4. the coupling adds Coulomb friction (μ = 0.5) at the same contacts ([`friction`]):
//!    raycontact's response is frictionless, and without friction the cloth slides off the cube
//!    and the cube off the slab under the cloth's pull;
//! 5. rapier steps ([`rapier3d::pipeline::PhysicsWorld::step`], dt = 1/120 s): elasticity (the
//!    slab and the cube by its implicit FEM solver, the cloth by its constraints), gravity, and
//!    the contacts with the ground, which rapier keeps resolving itself.
//!
//! In the default mode ([`SoftContacts::Raycontact`]) rapier's soft–soft pairs are filtered out
//! by collision groups and its cloth self contacts are off, so raycontact's response is all that
//! keeps the soft bodies apart. [`SoftContacts::Rapier`] lets rapier resolve them instead, while
//! raycontact still detects every step (timed and counted side by side); [`SoftContacts::None`]
//! is the control run, where nothing does and the cube sinks into the slab.
//!
//! The outcome ([`Run::failures`]), measured independently of both detectors ([`outcome`]): at
//! the last step no boundary particle of a FEM body deeper than 2 cm inside the other, no cloth
//! particle deeper than 2 cm inside a FEM body, the cube's centre at least 80% of its resting
//! height above the slab's, no cloth edge through the cloth, every particle finite.
//!
//! # What rapier's API lacks for external contacts
//!
//! The velocity changes above are the only clean way in, and they are an explicit penalty, applied
//! once per step outside rapier's solver: rapier's implicit FEM solve and its substeps do not see
//! them as constraints, so the stiffness is bounded and a resting contact keeps an overlap. In the
//! example's scene at 120 Hz (`--cpu --stiffness K`, seed 1): κ = 1 (the default) ends with the
//! deepest particle of a FEM body 4.2 mm inside the other, κ = 2 2.2 mm, κ = 4 1.7 mm; at κ = 8 the
//! cloth is thrown through itself (7 cloth edges through the cloth at the end) and at κ = 16 it
//! blows up (667). At 60 Hz (`--dt 0.0166667`, κ = 1) a cloth particle ends 2.2 cm inside a body
//! and the outcome fails. rapier's own soft contacts have exactly the shape of raycontact's (a
//! surface vertex, an element, barycentric weights, a direction and a separation:
//! [`rapier3d::geometry::SoftVertexCandidate`]), but:
//!
//! - **No way to add a contact.** [`rapier3d::pipeline::PhysicsHooks::modify_solver_contacts`]
//!   hands a soft pair's [`rapier3d::geometry::SoftPairContacts`] to the hook to edit a
//!   candidate's `dir` and `dist` or clear its `enabled`, not to add one: the pair's contact
//!   slots are numbered (`SoftPairContacts::number_slots`, crate-private, as is
//!   `SoftVertexPass::slot_offset`) and its `touching` state is set before the hook runs, so a
//!   candidate pushed there would be mis-numbered for the impulse reports. Missing: a method
//!   such as `SoftPairContacts::push_vertex_candidate(vertex, SoftVertexCandidate)` that keeps
//!   the slots and the touching state, or a `SoftBodySet`-level list of external vertex–element
//!   contacts the soft-body solver assembles with its own.
//! - **Only pairs rapier itself found.** The hook runs for soft pairs rapier's broad phase
//!   created (boxes within its prediction distance) and whose collision groups pass; a contact
//!   raycontact finds elsewhere has no pair to go into.
//! - **No self pairs.** A soft body's self contacts never reach the hook (its documentation
//!   says so; `NarrowPhase::soft_self_contacts` is crate-private), so the cloth's self contacts
//!   cannot go in that way at all.
//! - **Reporting.** A body's self contacts are public only as debug-render segments
//!   ([`rapier3d::dynamics::SoftBody::vertex_contact_segments`],
//!   [`rapier3d::dynamics::SoftBody::edge_contact_segments`]), mixed with the other bodies'
//!   contacts against its surface: [`RapierContacts`] reports them together.
//!
//! With those, raycontact's contacts could enter rapier's solver as constraints (warm-started,
//! with friction, at any stiffness) rather than as velocity changes.

pub mod friction;
pub mod outcome;
pub mod rapier_contacts;
pub mod report;
pub mod scene;
pub mod sim;
pub mod surface;

pub use outcome::Measure;
pub use rapier_contacts::RapierContacts;
pub use scene::{Settings, SoftContacts, World};
pub use sim::{Classes, Error, Simulation, Step};
pub use surface::Surface;

use raycontact::GpuContext;

/// A whole run: every step's figures and the end state's.
#[derive(Clone, Debug)]
pub struct Run {
    /// Every step's figures.
    pub steps: Vec<Step>,
    /// Cloth edges passing through the cloth at the end ([`outcome::cloth_crossings`]).
    pub crossings: usize,
    /// Whether every particle's position and velocity stayed finite.
    pub finite: bool,
}

impl Run {
    /// The outcome's failures at the last step; empty when it holds: every particle finite, no
    /// boundary particle of a FEM body deeper than [`outcome::FEM_TOLERANCE`] in the other, no
    /// cloth particle deeper than [`outcome::CLOTH_TOLERANCE`] in a FEM body, the cube at least
    /// [`outcome::STACKED`] above the slab, no cloth edge through the cloth.
    pub fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.finite {
            out.push("a particle's position or velocity is not finite".into());
        }
        if let Some(m) = self.steps.last().map(|s| s.measure) {
            if m.fem > outcome::FEM_TOLERANCE {
                out.push(format!(
                    "a particle of a FEM body ends {:.4} m inside the other (tolerance {})",
                    m.fem,
                    outcome::FEM_TOLERANCE
                ));
            }
            if m.cloth > outcome::CLOTH_TOLERANCE {
                out.push(format!(
                    "a cloth particle ends {:.4} m inside a FEM body (tolerance {})",
                    m.cloth,
                    outcome::CLOTH_TOLERANCE
                ));
            }
            if m.stack < outcome::STACKED {
                out.push(format!(
                    "the cube's centre ends {:.3} m above the slab's (at least {:.3})",
                    m.stack,
                    outcome::STACKED
                ));
            }
        }
        if self.crossings > 0 {
            out.push(format!("{} cloth edges pass through the cloth", self.crossings));
        }
        out
    }
}

/// Runs `settings` on `ctx`'s GPU (raycontact's CPU backend with `None`), calling `each` after
/// every step; stops early when a particle stops being finite.
pub fn run(
    ctx: Option<&GpuContext>,
    settings: &Settings,
    mut each: impl FnMut(usize, &Step),
) -> Result<Run, Error> {
    let mut sim = Simulation::new(ctx, settings)?;
    let mut steps = Vec::with_capacity(settings.steps);
    let mut finite = true;
    for i in 0..settings.steps {
        let s = sim.step()?;
        each(i, &s);
        steps.push(s);
        finite = sim.world.is_finite();
        if !finite {
            break;
        }
    }
    let crossings = outcome::cloth_crossings(&sim.world.physics.soft_bodies[sim.world.cloth]);
    Ok(Run { steps, crossings, finite })
}
