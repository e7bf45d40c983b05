//! A cloth with thickness dropped on a ball and a box (Lehericey et al. 2015's scenes): a square
//! cloth of `size × size` vertices (64 × 64 by default, 1.6 m wide, half-thickness 6 mm,
//! 0.5 kg) falls from 0.8 m onto a ball (radius 0.3 m) and a box (0.76 × 1.0 × 0.44 m), both
//! static and volumetric. (No floor: a cloth hanging edge-on to a surface is seen only by that
//! surface's rays, and a floor's vertices are few and far apart.) The cloth is position-based
//! ([`crate::cloth`]) and stepped by [`crate::world`]: raycontact detects its contacts at the
//! predicted positions (cloth against the bodies, the bodies' vertices against the cloth, and
//! the cloth against itself), the collisions give penalty forces, and the **predictions**
//! (within 6 cm, more than the cloth falls in a step) become unilateral constraints: the next
//! step may not close their gap, so the falling cloth stops on the surfaces, and no correction
//! pushes a vertex through a surface it was about to reach.
//!
//! The two measures, and the outcome:
//! - **depth**: how far a cloth vertex (its mid-surface) lies inside the ball or the box,
//!   exactly (both are convex: the smallest distance to a face plane). At the end no vertex
//!   may lie deeper than the cloth's half-thickness.
//! - **energy**: the cloth's kinetic energy plus its gravitational energy above z = 0 (the
//!   bottom of the ball and the box). The cloth starts at rest, so every joule above the
//!   initial energy would have been made by the integrator or the response: it may never
//!   exceed the initial energy by more than 1%.

use glam::{Affine3A, Quat, Vec3};
use rand::{Rng, SeedableRng};
use raycontact::meshes::{self, TriMesh};
use raycontact::{GpuContext, Scene};

use crate::cloth::{Cloth, Material};
use crate::convex::Convex;
use crate::render::{Camera, Mesh};
use crate::world::{Stepping, World};

/// Energy may exceed its initial value by at most this fraction.
pub const ENERGY_TOLERANCE: f32 = 0.01;

/// The example's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Vertices along each side of the cloth.
    pub size: u32,
    /// Frames (steps) to simulate.
    pub frames: usize,
    /// Seed of the cloth's initial placement (a few cm and degrees) and of a 1 mm jitter of its
    /// vertices.
    pub seed: u64,
    /// The cloth's half-thickness (m).
    pub half_thickness: f32,
    /// The stepping.
    pub stepping: Stepping,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            size: 64,
            frames: 300,
            seed: 1,
            half_thickness: 0.006,
            stepping: Stepping { prediction: 0.06, ..Stepping::default() },
        }
    }
}

/// One frame's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Frame {
    /// Collision contacts (all pairs).
    pub collisions: usize,
    /// Prediction contacts.
    pub predictions: usize,
    /// Collisions flagged inverted (the cloth through itself).
    pub inverted: usize,
    /// Contact constraint rows that moved a vertex.
    pub active_rows: u32,
    /// The deepest cloth vertex inside the ball or the box (0: none inside).
    pub depth: f32,
    /// Cloth vertices deeper than the half-thickness.
    pub too_deep: usize,
    /// Kinetic plus gravitational energy above z = 0 (J).
    pub energy: f32,
    /// Kinetic energy (J).
    pub kinetic: f32,
    /// The largest relative stretch of a cloth edge.
    pub strain: f32,
    /// GPU buffers the scene has created (0 on the CPU backend).
    pub buffers: u64,
    /// Every position and velocity is finite.
    pub finite: bool,
}

/// The simulation.
#[derive(Debug)]
pub struct ClothOnBall {
    world: World,
    settings: Settings,
    triangles: Vec<[u32; 3]>,
    obstacles: Vec<(TriMesh, Convex)>,
    /// The cloth's energy at rest before the first step.
    pub initial_energy: f32,
}

/// The ball and the box.
pub fn obstacles() -> [TriMesh; 2] {
    let ball = meshes::icosphere(0.3, 3).transformed(Affine3A::from_translation(Vec3::new(-0.4, 0.0, 0.3)));
    let table = meshes::cuboid(Vec3::new(0.38, 0.5, 0.22), 6)
        .transformed(Affine3A::from_translation(Vec3::new(0.36, 0.0, 0.22)));
    [ball, table]
}

impl ClothOnBall {
    /// The scene on `ctx`'s GPU (the CPU backend with `None`).
    pub fn new(ctx: Option<&GpuContext>, settings: Settings) -> raycontact::Result<Self> {
        let scene = match ctx {
            Some(c) => Scene::new(c),
            None => Scene::new_cpu(None)?,
        };
        let mut rng = rand_pcg::Pcg64::seed_from_u64(settings.seed);
        let n = settings.size.max(2);
        let sheet = meshes::grid_sheet(1.6, 1.6, n - 1, n - 1);
        let place = Affine3A::from_rotation_translation(
            Quat::from_rotation_z(rng.random_range(-0.1..0.1)),
            Vec3::new(rng.random_range(-0.03..0.03), rng.random_range(-0.03..0.03), 0.8),
        );
        let mut cloth_mesh = sheet.transformed(place);
        for p in &mut cloth_mesh.positions {
            p.z += rng.random_range(-0.001..0.001);
        }
        let cloth = Cloth::new(&cloth_mesh, Material::default());
        let mut world = World::new(scene, settings.stepping, cloth.vertex_mass)?;
        let initial_energy =
            cloth.kinetic_energy() + cloth.potential_energy(-settings.stepping.gravity.z, 0.0);
        world.add_cloth(cloth, &cloth_mesh.triangles, settings.half_thickness)?;
        let mut bodies = Vec::new();
        for m in obstacles() {
            world.add_static(&m.positions, &m.triangles)?;
            let c = Convex::new(&m);
            bodies.push((m, c));
        }
        Ok(Self { world, settings, triangles: cloth_mesh.triangles, obstacles: bodies, initial_energy })
    }

    /// The cloth.
    pub fn cloth(&self) -> &Cloth {
        &self.world.cloths[0].1
    }

    /// The scene.
    pub fn scene(&self) -> &Scene {
        &self.world.scene
    }

    /// One step, and its figures.
    pub fn step(&mut self) -> raycontact::Result<Frame> {
        let report = self.world.step(|_| {})?;
        let cloth = self.cloth();
        let e = self.settings.half_thickness;
        let g = -self.settings.stepping.gravity.z;
        let x = &cloth.positions;
        let kinetic = cloth.kinetic_energy();
        Ok(Frame {
            collisions: report.collisions(),
            predictions: report.predictions(),
            inverted: report.inverted(),
            active_rows: report.active_rows,
            depth: self.obstacles.iter().map(|(_, c)| c.deepest(x)).fold(0.0, f32::max),
            too_deep: self.obstacles.iter().map(|(_, c)| c.deeper_than(x, e)).sum(),
            energy: kinetic + cloth.potential_energy(g, 0.0),
            kinetic,
            strain: cloth.max_strain(),
            buffers: report.buffers,
            finite: cloth.is_finite(),
        })
    }

    /// What to draw: the cloth, the ball and the box.
    pub fn meshes(&self) -> Vec<Mesh<'_>> {
        let colors = [[0.75, 0.18, 0.12], [0.30, 0.42, 0.62]];
        let mut out = vec![Mesh {
            positions: &self.cloth().positions,
            triangles: &self.triangles,
            color: [0.93, 0.80, 0.35],
            smooth: true,
        }];
        for ((m, _), (color, smooth)) in self.obstacles.iter().zip(colors.into_iter().zip([true, false])) {
            out.push(Mesh { positions: &m.positions, triangles: &m.triangles, color, smooth });
        }
        out
    }

    /// The camera of the PNG frames.
    pub fn camera() -> Camera {
        Camera {
            eye: Vec3::new(0.95, -1.65, 1.2),
            target: Vec3::new(0.05, 0.0, 0.27),
            up: Vec3::Z,
            fov_y: 0.75,
        }
    }
}

/// What a run has shown so far, gathered frame by frame (no history is kept: a long run's
/// memory stays flat).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Frames seen.
    pub frames: usize,
    /// The frame of the largest energy, and that energy.
    pub most_energy: Option<(usize, f32)>,
    /// The first frame with a non-finite position or velocity.
    pub first_non_finite: Option<usize>,
    /// The last frame.
    pub last: Option<Frame>,
}

impl Outcome {
    /// Adds the next frame.
    pub fn add(&mut self, f: &Frame) {
        if self.most_energy.is_none_or(|(_, e)| f.energy > e) {
            self.most_energy = Some((self.frames, f.energy));
        }
        if !f.finite && self.first_non_finite.is_none() {
            self.first_non_finite = Some(self.frames);
        }
        self.last = Some(*f);
        self.frames += 1;
    }

    /// Whether the run ended well: no vertex deeper than the half-thickness at the end, the
    /// energy never above `(1 + ENERGY_TOLERANCE)` times `initial_energy`, everything finite.
    pub fn verdict(&self, initial_energy: f32) -> Result<(), String> {
        let (Some(last), Some((i, worst))) = (self.last, self.most_energy) else {
            return Err("no frame".into());
        };
        if let Some(i) = self.first_non_finite {
            return Err(format!("a non-finite position or velocity at frame {i}"));
        }
        if last.too_deep > 0 {
            return Err(format!(
                "{} vertices end deeper than the half-thickness (deepest {:.4} m)",
                last.too_deep, last.depth
            ));
        }
        if worst > initial_energy * (1.0 + ENERGY_TOLERANCE) {
            return Err(format!(
                "energy {worst:.4} J at frame {i} exceeds the initial {initial_energy:.4} J by more than {}%",
                ENERGY_TOLERANCE * 100.0
            ));
        }
        Ok(())
    }
}

/// [`Outcome::verdict`] of these frames.
pub fn verdict(initial_energy: f32, frames: &[Frame]) -> Result<(), String> {
    let mut o = Outcome::default();
    frames.iter().for_each(|f| o.add(f));
    o.verdict(initial_energy)
}
