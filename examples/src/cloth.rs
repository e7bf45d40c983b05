//! A cloth integrated by position-based dynamics (Müller et al. 2007, "Position based
//! dynamics"): each step predicts positions from the velocities (gravity and damping applied),
//! projects distance constraints on them, Gauss–Seidel, a fixed number of iterations (stretch
//! and shear along every triangle edge, bending across every interior edge, between the two
//! vertices opposite it), and later commits them, the velocities becoming the displacement over
//! the step. Between the projection and the commit the caller corrects the predicted positions
//! (contacts: [`crate::world`]). A vertex of inverse mass 0 moves only where the caller puts it.

use std::collections::HashMap;

use glam::Vec3;
use raycontact::meshes::TriMesh;

/// The cloth's material and solver settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// Mass of the whole cloth (kg), spread evenly over its vertices.
    pub mass: f32,
    /// Stretch and shear stiffness in (0, 1]: the fraction of an edge's error removed by the
    /// projection over all iterations.
    pub stretch: f32,
    /// Bending stiffness in [0, 1] (the same, for the distance across each interior edge).
    pub bend: f32,
    /// Gauss–Seidel iterations per step.
    pub iterations: u32,
    /// Fraction of each velocity lost per step (air drag).
    pub damping: f32,
}

impl Default for Material {
    fn default() -> Self {
        Self { mass: 0.5, stretch: 1.0, bend: 0.05, iterations: 40, damping: 0.004 }
    }
}

/// A distance constraint between two vertices.
#[derive(Clone, Copy, Debug)]
struct Link {
    a: u32,
    b: u32,
    rest: f32,
    /// Per-iteration stiffness.
    k: f32,
    /// Along a triangle edge (stretch or shear), not across one (bending).
    edge: bool,
}

/// A cloth's state: positions and velocities, the predicted positions of the current step, and
/// each vertex's inverse mass.
#[derive(Clone, Debug)]
pub struct Cloth {
    /// Committed positions.
    pub positions: Vec<Vec3>,
    /// Committed velocities.
    pub velocities: Vec<Vec3>,
    /// The current step's predicted (then corrected) positions.
    pub predicted: Vec<Vec3>,
    /// Inverse mass of each vertex (0: pinned or driven by the caller).
    pub inv_mass: Vec<f32>,
    /// Mass of a vertex of inverse mass > 0.
    pub vertex_mass: f32,
    material: Material,
    links: Vec<Link>,
}

impl Cloth {
    /// A cloth at rest at `mesh`'s positions (its rest shape), every vertex free.
    pub fn new(mesh: &TriMesh, material: Material) -> Self {
        let n = mesh.positions.len();
        let vertex_mass = material.mass / n.max(1) as f32;
        let per_iteration =
            |k: f32| 1.0 - (1.0 - k.clamp(0.0, 1.0)).powf(1.0 / material.iterations.max(1) as f32);
        let (stretch, bend) = (per_iteration(material.stretch), per_iteration(material.bend));
        let p = &mesh.positions;
        let link = |a: u32, b: u32, k: f32, edge: bool| Link {
            a,
            b,
            rest: p[a as usize].distance(p[b as usize]),
            k,
            edge,
        };
        // Every edge once, with the vertices opposite it (one on a boundary edge, two inside).
        let mut opposite: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
        for t in &mesh.triangles {
            for i in 0..3 {
                let (a, b, c) = (t[i], t[(i + 1) % 3], t[(i + 2) % 3]);
                opposite.entry((a.min(b), a.max(b))).or_default().push(c);
            }
        }
        let mut edges: Vec<_> = opposite.into_iter().collect();
        edges.sort_unstable_by_key(|(e, _)| *e);
        let mut links: Vec<Link> = edges.iter().map(|((a, b), _)| link(*a, *b, stretch, true)).collect();
        if bend > 0.0 {
            links.extend(
                edges.iter().filter(|(_, o)| o.len() == 2).map(|(_, o)| link(o[0], o[1], bend, false)),
            );
        }
        Self {
            positions: p.clone(),
            velocities: vec![Vec3::ZERO; n],
            predicted: p.clone(),
            inv_mass: vec![1.0 / vertex_mass; n],
            vertex_mass,
            material,
            links,
        }
    }

    /// The material.
    pub fn material(&self) -> Material {
        self.material
    }

    /// Starts a step: velocities get `gravity` and lose the damping fraction, and the predicted
    /// positions are the committed ones moved by the velocities over `dt` (a vertex of inverse
    /// mass 0 stays, unless the caller moves it before [`Cloth::project`]).
    pub fn predict(&mut self, dt: f32, gravity: Vec3) {
        let keep = 1.0 - self.material.damping;
        for (((x, v), p), w) in
            self.positions.iter().zip(&mut self.velocities).zip(&mut self.predicted).zip(&self.inv_mass)
        {
            if *w > 0.0 {
                *v = (*v + gravity * dt) * keep;
                *p = *x + *v * dt;
            } else {
                *p = *x;
            }
        }
    }

    /// Projects the distance constraints on the predicted positions, the material's number of
    /// Gauss–Seidel iterations.
    pub fn project(&mut self) {
        for _ in 0..self.material.iterations {
            self.project_once();
        }
    }

    /// One Gauss–Seidel pass over the distance constraints, in a fixed order (the result
    /// depends on nothing but the inputs). The stiffness per pass is the material's spread over
    /// its number of iterations.
    pub fn project_once(&mut self) {
        {
            for l in &self.links {
                let (a, b) = (l.a as usize, l.b as usize);
                let (wa, wb) = (self.inv_mass[a], self.inv_mass[b]);
                let w = wa + wb;
                let d = self.predicted[a] - self.predicted[b];
                let len = d.length();
                if w <= 0.0 || len <= 1e-12 {
                    continue;
                }
                let corr = d * (l.k * (len - l.rest) / (len * w));
                self.predicted[a] -= corr * wa;
                self.predicted[b] += corr * wb;
            }
        }
    }

    /// Moves the predicted positions by `forces` (one per vertex) acting over the step: the
    /// velocity change `f dt / m` of semi-implicit Euler, times `dt`.
    pub fn apply_forces(&mut self, forces: &[Vec3], dt: f32) {
        for ((p, f), w) in self.predicted.iter_mut().zip(forces).zip(&self.inv_mass) {
            *p += *f * (dt * dt * *w);
        }
    }

    /// Moves the predicted positions by `displacements` (one per vertex; the caller weighed
    /// them by inverse mass).
    pub fn apply_displacements(&mut self, displacements: &[Vec3]) {
        for (p, d) in self.predicted.iter_mut().zip(displacements) {
            *p += *d;
        }
    }

    /// Ends the step: the velocities become the displacement over `dt`, the predicted positions
    /// the committed ones.
    pub fn commit(&mut self, dt: f32) {
        for ((x, v), p) in self.positions.iter_mut().zip(&mut self.velocities).zip(&self.predicted) {
            *v = (*p - *x) / dt;
            *x = *p;
        }
    }

    /// Kinetic energy of the committed state (J).
    pub fn kinetic_energy(&self) -> f32 {
        0.5 * self.vertex_mass * self.velocities.iter().map(|v| v.length_squared()).sum::<f32>()
    }

    /// Gravitational potential energy of the committed state above height `z0` along z (J).
    pub fn potential_energy(&self, g: f32, z0: f32) -> f32 {
        self.vertex_mass * g * self.positions.iter().map(|p| p.z - z0).sum::<f32>()
    }

    /// The largest relative stretch of a triangle edge (|len − rest| / rest).
    pub fn max_strain(&self) -> f32 {
        self.links
            .iter()
            .filter(|l| l.edge && l.rest > 0.0)
            .map(|l| {
                (self.positions[l.a as usize].distance(self.positions[l.b as usize]) - l.rest).abs() / l.rest
            })
            .fold(0.0, f32::max)
    }

    /// Whether every position and velocity is finite.
    pub fn is_finite(&self) -> bool {
        self.positions.iter().chain(&self.velocities).all(|p| p.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use raycontact::meshes;

    #[test]
    fn a_pinned_cloth_hangs_without_stretching_much() {
        let mesh = meshes::grid_sheet(1.0, 1.0, 8, 8);
        let mut c = Cloth::new(&mesh, Material::default());
        // Pin the row at y = +0.5.
        for (w, p) in c.inv_mass.iter_mut().zip(&mesh.positions) {
            if p.y > 0.49 {
                *w = 0.0;
            }
        }
        let dt = 1.0 / 60.0;
        for _ in 0..300 {
            c.predict(dt, Vec3::new(0.0, 0.0, -9.81));
            c.project();
            c.commit(dt);
        }
        assert!(c.is_finite());
        let lowest = c.positions.iter().map(|p| p.z).fold(f32::INFINITY, f32::min);
        assert!(lowest < -0.8, "it hangs: {lowest}");
        assert!(c.max_strain() < 0.05, "stretch {}", c.max_strain());
        for (p, q) in c.positions.iter().zip(&mesh.positions) {
            if q.y > 0.49 {
                assert_eq!(p, q, "pinned vertices stay");
            }
        }
    }
}
