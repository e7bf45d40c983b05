//! Lehericey et al. 2015's Figure 6 (section 3.2, inversion handling): two square cloths, A under
//! B, 2 cm apart, each held at its four corners, no gravity. A disc of A's vertices (radius 0.2 m) is pushed up through B, 3 cm a
//! step for a few steps, then stopped and released. The first push step carries A's disc across
//! B within one step, as a fast motion does in a discrete simulation.
//!
//! - **With inversion handling** (raycontact's default): the detection at the predicted
//!   positions sees every vertex that crossed a triangle of the other cloth since the last
//!   committed positions, flags it `INVERTED` and flips its normal, so the response pushes it
//!   back across: B's vertices go back over A's rising disc, B is lifted with it, and when A is
//!   released the two cloths separate, in the order they started.
//! - **Without it** (`Scene::set_inversion_handling(false)`, `--no-inversion`): the crossed
//!   vertices are classified by their distance alone, so the response holds each on the side it
//!   reached: B's middle stays under A's disc, the cloths stay tangled (Lehericey's "glued
//!   together").
//!
//! **Started tangled** (`start_tangled`, `--start-tangled`; issue 13): A is made with its disc
//! already up through B (a plateau 9 cm high, its rest shape), and nothing pushes. No previous
//! frame was untangled, so inversion handling has nothing to undo: alone (`--no-analysis`) it
//! leaves the cloths tangled. **Global intersection analysis** (`analysis`,
//! `IntersectionMode::Full`, on by default) finds the contour where they cross and the region of
//! each cloth on the wrong side (the smaller one, Baraff et al. 2003); its untangling contacts
//! push those vertices back through the other cloth, its edge contacts push the crossing edges,
//! and the world drops the constraint rows that would hold a wrong-side vertex where it is: the
//! cloths separate.
//!
//! **Tangled vertices**: a vertex of A whose nearest point of B along the vertical lies on B's
//! upper side, or a vertex of B whose nearest point of A along the vertical lies on A's lower
//! side; found with raycontact's own ray casts ([`raycontact::Scene::cast_rays`]) every frame.

use glam::{Affine3A, Vec3};
use rand::{Rng, SeedableRng};
use raycontact::meshes;
use raycontact::{BodyId, ContactFlags, GpuContext, IntersectionMode, Ray, Scene};

use crate::cloth::{Cloth, Material};
use crate::render::{Camera, Mesh};
use crate::world::{Stepping, World};

/// The example's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Vertices along each side of each cloth (1 m wide).
    pub size: u32,
    /// Frames (steps) to simulate.
    pub frames: usize,
    /// Steps of the push.
    pub push_steps: usize,
    /// How far the disc moves per push step (m).
    pub push_step: f32,
    /// Seed of B's placement over A (up to half a cell) and of a 0.5 mm jitter of the vertices.
    pub seed: u64,
    /// Inversion handling on (raycontact's default) or off.
    pub inversion: bool,
    /// The cloths' half-thickness (m).
    pub half_thickness: f32,
    /// The stepping (no gravity, no friction).
    pub stepping: Stepping,
    /// A starts with its disc already through B, and nothing pushes (issue 13).
    pub start_tangled: bool,
    /// Global intersection analysis (`IntersectionMode::Full`) on.
    pub analysis: bool,
}

impl Settings {
    /// The issue-13 variant: A started through B, nothing pushing, the analysis on (`analysis`
    /// false: inversion handling alone). The penalty is half as stiff: both cloths' wrong
    /// regions are pushed through the other, each with its reaction on the other cloth, which at
    /// full stiffness moves them four times as far as needed in one step.
    pub fn started_tangled(analysis: bool) -> Self {
        let d = Self::default();
        Self {
            start_tangled: true,
            analysis,
            push_steps: 0,
            stepping: Stepping { stiffness: 0.5, ..d.stepping },
            ..d
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            size: 32,
            frames: 90,
            push_steps: 3,
            push_step: 0.03,
            seed: 1,
            inversion: true,
            half_thickness: 0.005,
            stepping: Stepping {
                gravity: Vec3::ZERO,
                friction: None,
                prediction: 0.04,
                ..Stepping::default()
            },
            start_tangled: false,
            analysis: false,
        }
    }
}

/// Height of A's plateau when it starts through B: a disc of radius 0.15 m at 9 cm, down to A's
/// plane by 0.27 m.
fn plateau(r: f32) -> f32 {
    let t = ((r - 0.15) / 0.12).clamp(0.0, 1.0);
    0.09 * (1.0 - t * t * (3.0 - 2.0 * t))
}

/// One frame's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Frame {
    /// Collision contacts, inverted ones included.
    pub collisions: usize,
    /// Collisions flagged inverted.
    pub inverted: usize,
    /// Prediction contacts.
    pub predictions: usize,
    /// Tangled vertices of A and of B.
    pub tangled: (usize, usize),
    /// Height of A's centre above B's centre (m): negative while A is under B.
    pub lead: f32,
    /// Every position and velocity is finite.
    pub finite: bool,
    /// Edge–triangle crossings (with the analysis on).
    pub crossings: usize,
    /// Contour loops (with the analysis on).
    pub loops: usize,
    /// Vertices on the wrong side of the other cloth (with the analysis on).
    pub wrong: usize,
    /// Edge contacts and untangling contacts (with the analysis on).
    pub intersection_contacts: (usize, usize),
}

impl Frame {
    /// Tangled vertices of both cloths.
    pub fn tangled_total(&self) -> usize {
        self.tangled.0 + self.tangled.1
    }
}

/// The simulation.
#[derive(Debug)]
pub struct TangledCloths {
    world: World,
    settings: Settings,
    ids: [BodyId; 2],
    triangles: Vec<[u32; 3]>,
    /// A's pushed vertices.
    disc: Vec<usize>,
    centre: usize,
    step: usize,
}

impl TangledCloths {
    /// The scene on `ctx`'s GPU (the CPU backend with `None`).
    pub fn new(ctx: Option<&GpuContext>, settings: Settings) -> raycontact::Result<Self> {
        let mut scene = match ctx {
            Some(c) => Scene::new(c),
            None => Scene::new_cpu(None)?,
        };
        scene.set_inversion_handling(settings.inversion);
        if settings.analysis {
            scene.set_intersections(IntersectionMode::Full);
        }
        let mut rng = rand_pcg::Pcg64::seed_from_u64(settings.seed);
        let n = settings.size.max(3);
        let cell = 1.0 / (n - 1) as f32;
        let a = meshes::grid_sheet(1.0, 1.0, n - 1, n - 1);
        let shift = Vec3::new(rng.random_range(-0.5..0.5) * cell, rng.random_range(-0.5..0.5) * cell, 0.02);
        let mut b = a.transformed(Affine3A::from_translation(shift));
        let mut a = a;
        for p in a.positions.iter_mut().chain(&mut b.positions) {
            p.z += rng.random_range(-0.0005..0.0005);
        }
        if settings.start_tangled {
            for p in &mut a.positions {
                p.z += plateau(p.truncate().length());
            }
        }
        let material = Material { bend: 0.2, damping: 0.02, ..Material::default() };
        let (mut ca, mut cb) = (Cloth::new(&a, material), Cloth::new(&b, material));
        // Both cloths are held at their four corners, like sheets on a frame.
        for i in [0, n - 1, n * (n - 1), n * n - 1] {
            ca.inv_mass[i as usize] = 0.0;
            cb.inv_mass[i as usize] = 0.0;
        }
        let mut world = World::new(scene, settings.stepping, ca.vertex_mass)?;
        let e = settings.half_thickness;
        let ids = [world.add_cloth(ca, &a.triangles, e)?, world.add_cloth(cb, &b.triangles, e)?];
        let disc = (0..a.positions.len()).filter(|&i| a.positions[i].truncate().length() < 0.2).collect();
        let centre = (n / 2 * n + n / 2) as usize;
        Ok(Self { world, settings, ids, triangles: a.triangles, disc, centre, step: 0 })
    }

    /// The scene.
    pub fn scene(&self) -> &Scene {
        &self.world.scene
    }

    /// The two cloths (A, B).
    pub fn cloths(&self) -> [&Cloth; 2] {
        [&self.world.cloths[0].1, &self.world.cloths[1].1]
    }

    /// One step, and its figures.
    pub fn step(&mut self) -> raycontact::Result<Frame> {
        let (k, s) = (self.step, self.settings);
        let pushing = k < s.push_steps;
        let disc = &self.disc;
        let a = &mut self.world.cloths[0].1;
        for &i in disc {
            a.inv_mass[i] = if pushing { 0.0 } else { 1.0 / a.vertex_mass };
            if k == s.push_steps {
                // The finger stops, then lets go.
                a.velocities[i] = Vec3::ZERO;
            }
        }
        let report = self.world.step(|cloths| {
            if pushing {
                for &i in disc {
                    cloths[0].1.predicted[i].z += s.push_step;
                }
            }
        })?;
        self.step += 1;
        let [ca, cb] = self.cloths();
        let lead = ca.positions[self.centre].z - cb.positions[self.centre].z;
        let finite = ca.is_finite() && cb.is_finite();
        let x = &report.intersections;
        let kind = |f: ContactFlags| report.contacts.iter().filter(|c| c.flags.contains(f)).count();
        Ok(Frame {
            collisions: report.collisions(),
            inverted: report.inverted(),
            predictions: report.predictions(),
            tangled: self.tangled()?,
            lead,
            finite,
            crossings: x.crossings.len(),
            loops: x.loops.len(),
            wrong: x.counts.wrong_side_vertices as usize,
            intersection_contacts: (kind(ContactFlags::EDGE), kind(ContactFlags::UNTANGLE)),
        })
    }

    /// Tangled vertices of A and of B (see the module's docs), by vertical rays through the
    /// scene's BVHs (up to date: every step ends with an update at the committed positions).
    fn tangled(&mut self) -> raycontact::Result<(usize, usize)> {
        let count =
            |scene: &mut Scene, from: &[Vec3], target: BodyId, upper: bool| -> raycontact::Result<usize> {
                let rays: Vec<Ray> =
                    from.iter().flat_map(|p| [Ray::new(*p, Vec3::Z), Ray::new(*p, -Vec3::Z)]).collect();
                let hits = scene.cast_rays(target, &rays)?;
                let positions = scene.positions(target)?.to_vec();
                let triangles = scene.triangles(target)?;
                let mut n = 0;
                for (p, pair) in from.iter().zip(hits.chunks_exact(2)) {
                    let Some(h) =
                        pair.iter().filter(|h| h.triangle != u32::MAX).min_by(|x, y| x.t.total_cmp(&y.t))
                    else {
                        continue;
                    };
                    let [ta, tb, tc] = triangles[h.triangle as usize].map(|i| positions[i as usize]);
                    let side = (*p - ta).dot((tb - ta).cross(tc - ta));
                    if (side > 0.0) == upper && side != 0.0 {
                        n += 1;
                    }
                }
                Ok(n)
            };
        let [a, b] = self.ids;
        let (pa, pb) = (self.cloths()[0].positions.clone(), self.cloths()[1].positions.clone());
        let scene = &mut self.world.scene;
        Ok((count(scene, &pa, b, true)?, count(scene, &pb, a, false)?))
    }

    /// What to draw: A and B.
    pub fn meshes(&self) -> Vec<Mesh<'_>> {
        let [a, b] = self.cloths();
        vec![
            Mesh {
                positions: &a.positions,
                triangles: &self.triangles,
                color: [0.85, 0.25, 0.15],
                smooth: true,
            },
            Mesh {
                positions: &b.positions,
                triangles: &self.triangles,
                color: [0.20, 0.45, 0.80],
                smooth: true,
            },
        ]
    }

    /// The camera of the PNG frames.
    pub fn camera() -> Camera {
        Camera {
            eye: Vec3::new(0.75, -1.1, 0.42),
            target: Vec3::new(0.0, 0.0, 0.02),
            up: Vec3::Z,
            fov_y: 0.75,
        }
    }
}

/// What a run has shown so far, gathered frame by frame (no history is kept).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Frames seen.
    pub frames: usize,
    /// The push crossed the other cloth: tangled vertices or inverted contacts while pushing or
    /// at the release.
    pub crossed: bool,
    /// The most tangled vertices of a frame.
    pub most_tangled: usize,
    /// The first frame with a non-finite position or velocity.
    pub first_non_finite: Option<usize>,
    /// The last frame.
    pub last: Option<Frame>,
}

impl Outcome {
    /// Adds the next frame of a run of `s`.
    pub fn add(&mut self, s: &Settings, f: &Frame) {
        if self.frames <= s.push_steps && (f.inverted > 0 || f.tangled_total() > 0 || f.crossings > 0) {
            self.crossed = true;
        }
        self.most_tangled = self.most_tangled.max(f.tangled_total());
        if !f.finite && self.first_non_finite.is_none() {
            self.first_non_finite = Some(self.frames);
        }
        self.last = Some(*f);
        self.frames += 1;
    }

    /// Whether the run ended as it should: separated (no tangled vertex) with inversion
    /// handling, still tangled without it (started tangled: separated with the analysis, still
    /// tangled with inversion handling alone); finite throughout; and the push did cross (or the
    /// cloths started crossed).
    pub fn verdict(&self, s: &Settings) -> Result<(), String> {
        let Some(last) = self.last else { return Err("no frame".into()) };
        if let Some(i) = self.first_non_finite {
            return Err(format!("a non-finite position or velocity at frame {i}"));
        }
        if !self.crossed {
            return Err("the push never crossed the other cloth".into());
        }
        if s.start_tangled {
            return match (s.analysis, last.tangled_total()) {
                (true, 0) | (false, 1..) => Ok(()),
                (true, n) => {
                    Err(format!("with the analysis, still {n} tangled vertices after {} frames", self.frames))
                }
                (false, _) => {
                    Err(format!("inversion handling alone separated them after {} frames", self.frames))
                }
            };
        }
        match (s.inversion, last.tangled_total()) {
            (true, 0) | (false, 1..) => Ok(()),
            (true, n) => Err(format!(
                "with inversion handling, still {n} tangled vertices after {} frames",
                self.frames
            )),
            (false, _) => {
                Err(format!("without inversion handling the cloths came apart after {} frames", self.frames))
            }
        }
    }
}

/// [`Outcome::verdict`] of these frames.
pub fn verdict(s: &Settings, frames: &[Frame]) -> Result<(), String> {
    let mut o = Outcome::default();
    frames.iter().for_each(|f| o.add(s, f));
    o.verdict(s)
}
