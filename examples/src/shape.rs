//! A deformable body integrated by shape matching (Müller et al. 2005): each step, external
//! forces change the velocities, the vertices are pulled towards the rest shape rotated and
//! translated to best fit them (the goal positions), velocities are damped, then positions move
//! (semi-implicit Euler). Soft when `stiffness` is small, rigid at 1.

use glam::{Mat3, Quat, Vec3};

/// A deformable body's state.
#[derive(Clone, Debug)]
pub struct ShapeBody {
    /// Rest positions relative to their centroid.
    rest: Vec<Vec3>,
    /// Current positions.
    pub positions: Vec<Vec3>,
    /// Current velocities.
    pub velocities: Vec<Vec3>,
    /// Mass of each vertex.
    pub vertex_mass: f32,
    /// Pull towards the goal shape per step, in (0, 1].
    pub stiffness: f32,
    /// Fraction of the velocity lost per step.
    pub damping: f32,
    /// The last best-fit rotation (the next step starts from it).
    rotation: Quat,
}

impl ShapeBody {
    /// A body at rest at `positions`.
    pub fn new(positions: &[Vec3], vertex_mass: f32, stiffness: f32, damping: f32) -> Self {
        let c = centroid(positions);
        Self {
            rest: positions.iter().map(|p| *p - c).collect(),
            positions: positions.to_vec(),
            velocities: vec![Vec3::ZERO; positions.len()],
            vertex_mass,
            stiffness,
            damping,
            rotation: Quat::IDENTITY,
        }
    }

    /// One step of `dt` under `forces` (one per vertex).
    pub fn step(&mut self, forces: &[Vec3], dt: f32) {
        for (v, f) in self.velocities.iter_mut().zip(forces) {
            *v += *f * (dt / self.vertex_mass);
        }
        let predicted: Vec<Vec3> =
            self.positions.iter().zip(&self.velocities).map(|(x, v)| *x + *v * dt).collect();
        let c = centroid(&predicted);
        let mut apq = Mat3::ZERO;
        for (p, q) in predicted.iter().zip(&self.rest) {
            apq += outer(*p - c, *q);
        }
        self.rotation = extract_rotation(&apq, self.rotation, 20);
        for ((x, v), q) in self.positions.iter_mut().zip(self.velocities.iter_mut()).zip(&self.rest) {
            let goal = c + self.rotation * *q;
            let pred = *x + *v * dt;
            *v += (goal - pred) * (self.stiffness / dt);
            *v *= 1.0 - self.damping;
            *x += *v * dt;
        }
    }

    /// The centroid of the current positions.
    pub fn centroid(&self) -> Vec3 {
        centroid(&self.positions)
    }
}

fn centroid(p: &[Vec3]) -> Vec3 {
    p.iter().copied().sum::<Vec3>() / p.len().max(1) as f32
}

fn outer(a: Vec3, b: Vec3) -> Mat3 {
    Mat3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// The rotation of `a`'s polar decomposition, by Müller et al. 2016's iteration ("A robust
/// method to extract the rotational part of deformations") from `q`.
fn extract_rotation(a: &Mat3, mut q: Quat, iterations: u32) -> Quat {
    for _ in 0..iterations {
        let r = Mat3::from_quat(q);
        let omega = r.x_axis.cross(a.x_axis) + r.y_axis.cross(a.y_axis) + r.z_axis.cross(a.z_axis);
        let denom = (r.x_axis.dot(a.x_axis) + r.y_axis.dot(a.y_axis) + r.z_axis.dot(a.z_axis)).abs() + 1e-9;
        let w = omega / denom;
        let angle = w.length();
        if angle < 1e-9 {
            break;
        }
        q = (Quat::from_axis_angle(w / angle, angle) * q).normalize();
    }
    q
}
