//! The rapier world: a fixed ground, two FEM soft bodies — a slab (a mattress) resting on the
//! ground and a cube dropped on it — and a cloth dropped over the cube, draping onto the slab;
//! and who resolves the contacts between the soft bodies.

use glam::{Quat, Vec3};
use rand::{Rng, SeedableRng};
use rapier3d::prelude::*;
use raycontact::ForceDirection;

/// Who resolves the contacts between the soft bodies (FEM–FEM, cloth–FEM, cloth–cloth). rapier
/// resolves the soft bodies' contacts with the ground in every mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SoftContacts {
    /// raycontact: rapier's soft–soft pairs are filtered out (collision groups) and its cloth
    /// self contacts are off; raycontact detects them and its response is applied as particle
    /// velocity changes before each rapier step.
    #[default]
    Raycontact,
    /// rapier: its own soft–soft and cloth self contacts, solved in its step; raycontact still
    /// detects every step (timed and counted, side by side) but applies nothing.
    Rapier,
    /// Nobody (the control run): raycontact detects but applies nothing, rapier's soft–soft pairs
    /// are filtered out; the bodies sink into each other.
    None,
}

/// The scene's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Particles along each edge of the FEM cube (side [`CUBE`]), at least 2; the slab has
    /// `cube + 1` along its sides and `cube / 2 + 1` through its thickness.
    pub cube: usize,
    /// Particles along each edge of the cloth (side [`CLOTH`]).
    pub cloth: usize,
    /// Steps to simulate.
    pub steps: usize,
    /// rapier's time step (and the response's).
    pub dt: f32,
    /// Seed of the placement: the cube's offset and yaw, the cloth's tilt.
    pub seed: u64,
    /// Who resolves the soft bodies' contacts.
    pub contacts: SoftContacts,
    /// raycontact's penalty stiffness of a pair, as a fraction κ of `m / dt²` (`m`: the lighter
    /// particle of the pair): `k = κ m / dt²`.
    pub stiffness: f32,
    /// raycontact's damping along the contact, as a fraction ζ of `m / dt` (`m`: the lightest
    /// particle of the scene; one damping for every pair).
    pub damping: f32,
    /// Half-thickness of the cloth for raycontact (its mid-surface's offset to either side).
    pub half_thickness: f32,
    /// The direction of raycontact's contact forces.
    pub direction: ForceDirection,
    /// Coulomb friction coefficient at raycontact's contacts, applied by the coupling
    /// ([`crate::friction`]; 0: none, as raycontact's response alone).
    pub friction: f32,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            cube: 5,
            cloth: 20,
            steps: 360,
            dt: 1.0 / 120.0,
            seed: 1,
            contacts: SoftContacts::Raycontact,
            stiffness: 1.0,
            damping: 1.0,
            half_thickness: 0.01,
            direction: ForceDirection::AlongNormal,
            friction: 0.5,
        }
    }
}

/// Side of the FEM cube (m).
pub const CUBE: f32 = 0.4;
/// Side and thickness of the FEM slab (m).
pub const SLAB: (f32, f32) = (1.0, 0.3);
/// Side of the cloth (m).
pub const CLOTH: f32 = 1.0;
/// Mass of the FEM cube (kg).
pub const CUBE_MASS: f32 = 1.0;
/// Mass of the FEM slab (kg).
pub const SLAB_MASS: f32 = 3.0;
/// Mass of the cloth (kg).
pub const CLOTH_MASS: f32 = 0.4;
/// rapier's contact skin of the FEM bodies' surfaces (their particle radius, m); the cloth's is
/// its half-thickness. rapier's default, half a cell, would keep the bodies a cell apart (and
/// push the cube, started 3 cm above the slab, off it in the first step of the `rapier` mode).
pub const FEM_SKIN: f32 = 0.005;

/// The rapier world and its soft bodies.
pub struct World {
    /// The rapier world.
    pub physics: PhysicsWorld,
    /// The two FEM bodies: the slab, then the cube.
    pub fem: [SoftBodyHandle; 2],
    /// The cloth.
    pub cloth: SoftBodyHandle,
    /// The ground's collider.
    pub ground: ColliderHandle,
}

const GROUND: Group = Group::GROUP_1;
const SOFT: Group = Group::GROUP_2;

impl World {
    /// Builds the scene: the slab resting on the ground, the cube 3 cm above the slab's centre
    /// (offset and yawed by the seed), the cloth 5 cm above the cube (tilted by the seed).
    pub fn new(s: &Settings) -> Self {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(s.seed);
        let mut physics = PhysicsWorld::new();
        physics.integration_parameters.dt = s.dt;
        let (_, ground) = physics.insert(
            RigidBodyBuilder::fixed().translation(Vector::new(0.0, -0.1, 0.0)),
            ColliderBuilder::cuboid(4.0, 0.1, 4.0).collision_groups(InteractionGroups::new(
                GROUND,
                Group::ALL,
                InteractionTestMode::And,
            )),
        );
        let soft_filter = match s.contacts {
            SoftContacts::Rapier => GROUND | SOFT,
            SoftContacts::Raycontact | SoftContacts::None => GROUND,
        };
        let collider = || {
            ColliderBuilder::ball(0.05).density(0.0).collision_groups(InteractionGroups::new(
                SOFT,
                soft_filter,
                InteractionTestMode::And,
            ))
        };
        let n = s.cube.max(2);
        let (side, thickness) = SLAB;
        let slab = fem(
            SoftBodyBuilder::cuboid(
                Vector::new(0.0, thickness * 0.5, 0.0),
                Vector::new(side * 0.5, thickness * 0.5, side * 0.5),
                n + 1,
                n / 2 + 1,
                n + 1,
            ),
            SLAB_MASS,
        );
        let offset = Vec3::new(rng.random_range(-0.05..0.05), 0.0, rng.random_range(-0.05..0.05));
        let yaw = Quat::from_rotation_y(rng.random_range(-0.4..0.4));
        let mut cube = SoftBodyBuilder::cuboid(Vector::ZERO, Vector::splat(CUBE * 0.5), n, n, n);
        let centre = offset + Vec3::Y * (thickness + CUBE * 0.5 + 0.03);
        cube.positions.iter_mut().for_each(|p| *p = centre + yaw * *p);
        let cube = fem(cube, CUBE_MASS);
        let tilt = Quat::from_axis_angle(
            Vec3::new(rng.random_range(-1.0..1.0), 0.0, rng.random_range(-1.0..1.0)).normalize_or(Vec3::X),
            rng.random_range(0.0..0.1),
        );
        let m = s.cloth.max(2);
        let step = CLOTH / (m - 1) as f32;
        let (du, dv) = (tilt * Vec3::X * step, tilt * Vec3::Z * step);
        let top = Vec3::Y * (thickness + CUBE + 0.08);
        let origin = top - (du + dv) * (m - 1) as f32 * 0.5;
        let cloth = SoftBodyBuilder::cloth(origin, du, dv, m, m)
            .mass(CLOTH_MASS)
            .particle_radius(s.half_thickness)
            .self_contacts(s.contacts == SoftContacts::Rapier)
            .can_sleep(false)
            .surface_collider(collider());
        let fem = [
            physics.insert_soft_body(slab.surface_collider(collider())),
            physics.insert_soft_body(cube.surface_collider(collider())),
        ];
        let cloth = physics.insert_soft_body(cloth);
        Self { physics, fem, cloth, ground }
    }

    /// The three soft bodies: the slab, the cube, the cloth.
    pub fn soft_bodies(&self) -> [SoftBodyHandle; 3] {
        [self.fem[0], self.fem[1], self.cloth]
    }

    /// Whether every particle's position and velocity is finite.
    pub fn is_finite(&self) -> bool {
        self.soft_bodies().iter().all(|&h| {
            let sb = &self.physics.soft_bodies[h];
            sb.particles().iter().all(|p| p.position().is_finite() && p.velocity().is_finite())
        })
    }
}

/// A FEM body of total mass `mass` from `builder`'s cells: corotational cells solved by
/// rapier's implicit FEM solver.
fn fem(builder: SoftBodyBuilder, mass: f32) -> SoftBodyBuilder {
    builder
        .cell_model(SoftBodyCellModel::Corotational)
        .material(SoftBodyMaterial {
            young_modulus: 3.0e4,
            poisson_ratio: 0.4,
            elastic_damping_ratio: 0.5,
            ..Default::default()
        })
        .solver(SoftBodySolver::Fem)
        .mass(mass)
        .particle_radius(FEM_SKIN)
        .can_sleep(false)
}
