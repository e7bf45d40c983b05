//! The demo's own integrator: position-based dynamics (Müller et al. 2007) for the cloth, with
//! raycontact's contacts as constraints. Each step predicts the positions under gravity, then
//! a few times over projects the distance constraints (the mesh's edges, and every second
//! vertex along the grid for bending), every contact of the frame, and the ground (y = 0);
//! velocities follow from the positions, with friction along the contacts' surfaces.
//!
//! A contact gives the constraint `(target point − source point) · normal <= 0` (its `depth`
//! must not stay positive), each point carried by the vertices that move it: the source vertex
//! when the source body is the cloth, the hit triangle's vertices by their barycentric weights
//! when the target is. Predictions (negative depth) give the same constraint, which stays
//! inactive unless the step would close the gap: speculative contacts, so that nothing passes
//! through a surface between two detections as long as no vertex moves further than the
//! prediction distance in a step (velocities are clamped to it).
//!
//! Only `+`, `−`, `×`, `÷` and square roots of `f32`, in a fixed order: the same bits on every
//! target for the same contacts.

use glam::Vec3;
use raycontact::{BodyId, Contact};

/// Settings of the integrator.
#[derive(Clone, Copy, Debug)]
pub struct ClothSettings {
    /// Gravity.
    pub gravity: Vec3,
    /// Constraint projections per step.
    pub iterations: u32,
    /// Stiffness of the bending constraints, per projection (the edges are stiff: 1).
    pub bending: f32,
    /// Fraction of the velocity lost per step.
    pub damping: f32,
    /// Fraction of the tangential velocity a contact or the ground removes.
    pub friction: f32,
    /// The most a vertex may move in a step.
    pub max_step: f32,
    /// The cloth's half-thickness (how far above y = 0 the ground holds it).
    pub half_thickness: f32,
}

/// One side of a contact constraint: what carries its point.
#[derive(Clone, Copy, Debug)]
enum Side {
    /// A fixed body's point.
    Fixed(Vec3),
    /// A cloth vertex and the offset from it to the point.
    Vertex(u32, Vec3),
    /// A cloth triangle's vertices, their weights, and the offset from the weighted sum.
    Triangle([u32; 3], [f32; 3], Vec3),
}

/// A contact as a constraint.
#[derive(Clone, Copy, Debug)]
struct ContactConstraint {
    source: Side,
    target: Side,
    normal: Vec3,
}

/// The cloth's state and constraints.
#[derive(Clone, Debug)]
pub struct Cloth {
    /// Current positions.
    pub positions: Vec<Vec3>,
    velocities: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    /// (vertex, vertex, rest length, stiffness per projection).
    links: Vec<(u32, u32, f32, f32)>,
    settings: ClothSettings,
}

impl Cloth {
    /// A cloth at rest at `positions`, a grid of `grid.0` vertices along x by `grid.1` (row
    /// major) triangulated by `triangles`.
    pub fn new(
        positions: &[Vec3],
        triangles: &[[u32; 3]],
        grid: (u32, u32),
        settings: ClothSettings,
    ) -> Self {
        let mut edges: Vec<(u32, u32)> = triangles
            .iter()
            .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        edges.sort_unstable();
        edges.dedup();
        let rest = |a: u32, b: u32| positions[a as usize].distance(positions[b as usize]);
        let mut links: Vec<(u32, u32, f32, f32)> =
            edges.iter().map(|&(a, b)| (a, b, rest(a, b), 1.0)).collect();
        let (nx, nz) = grid;
        let at = |i: u32, j: u32| j * nx + i;
        for j in 0..nz {
            for i in 0..nx {
                if i + 2 < nx {
                    links.push((at(i, j), at(i + 2, j), rest(at(i, j), at(i + 2, j)), settings.bending));
                }
                if j + 2 < nz {
                    links.push((at(i, j), at(i, j + 2), rest(at(i, j), at(i, j + 2)), settings.bending));
                }
            }
        }
        Self {
            positions: positions.to_vec(),
            velocities: vec![Vec3::ZERO; positions.len()],
            triangles: triangles.to_vec(),
            links,
            settings,
        }
    }

    /// One step of `dt` with this frame's `contacts` (found on the current positions; `cloth`
    /// is the cloth's id, every other body is fixed).
    pub fn step(&mut self, contacts: &[Contact], cloth: BodyId, dt: f32) {
        let s = self.settings;
        let constraints: Vec<ContactConstraint> =
            contacts.iter().filter_map(|c| self.constraint(c, cloth)).collect();
        let mut p: Vec<Vec3> = self
            .positions
            .iter()
            .zip(&self.velocities)
            .map(|(x, v)| *x + (*v + s.gravity * dt) * dt)
            .collect();
        let mut touched: Vec<Vec3> = vec![Vec3::ZERO; p.len()];
        for _ in 0..s.iterations {
            for &(a, b, rest, k) in &self.links {
                let (a, b) = (a as usize, b as usize);
                let d = p[b] - p[a];
                let len = d.length();
                if len > 1e-9 {
                    let corr = d * (k * 0.5 * (len - rest) / len);
                    p[a] += corr;
                    p[b] -= corr;
                }
            }
            for c in &constraints {
                project(c, &mut p, &mut touched);
            }
            for (q, t) in p.iter_mut().zip(touched.iter_mut()) {
                if q.y < s.half_thickness {
                    q.y = s.half_thickness;
                    *t = Vec3::Y;
                }
            }
        }
        let keep = 1.0 - s.damping;
        for (((x, v), q), n) in self.positions.iter_mut().zip(&mut self.velocities).zip(&p).zip(&touched) {
            let mut nv = (*q - *x) / dt * keep;
            if *n != Vec3::ZERO {
                let along = *n * nv.dot(*n);
                nv = along + (nv - along) * (1.0 - s.friction);
            }
            // A vertex moves at most `max_step` a step: what the prediction distance covers.
            let speed = nv.length() * dt;
            if speed > s.max_step {
                nv *= s.max_step / speed;
            }
            *v = nv;
            *x = *q;
        }
    }

    /// The constraint of a contact that involves the cloth.
    fn constraint(&self, c: &Contact, cloth: BodyId) -> Option<ContactConstraint> {
        if c.source_body != cloth && c.target_body != cloth {
            return None;
        }
        let source = if c.source_body == cloth {
            let v = c.source_vertex;
            Side::Vertex(v, c.source_point - self.positions[v as usize])
        } else {
            Side::Fixed(c.source_point)
        };
        let target = if c.target_body == cloth {
            let t = self.triangles[c.target_triangle as usize];
            let (u, v) = (c.barycentric.x, c.barycentric.y);
            let w = [1.0 - u - v, u, v];
            let on = self.positions[t[0] as usize] * w[0]
                + self.positions[t[1] as usize] * w[1]
                + self.positions[t[2] as usize] * w[2];
            Side::Triangle(t, w, c.target_point - on)
        } else {
            Side::Fixed(c.target_point)
        };
        Some(ContactConstraint { source, target, normal: c.normal })
    }
}

/// Where a side's point is now, and the sum of its squared weights (its inverse mass along
/// the normal).
fn point(side: &Side, p: &[Vec3]) -> (Vec3, f32) {
    match *side {
        Side::Fixed(q) => (q, 0.0),
        Side::Vertex(v, off) => (p[v as usize] + off, 1.0),
        Side::Triangle(t, w, off) => (
            p[t[0] as usize] * w[0] + p[t[1] as usize] * w[1] + p[t[2] as usize] * w[2] + off,
            w[0] * w[0] + w[1] * w[1] + w[2] * w[2],
        ),
    }
}

/// Moves the side's vertices by `delta` (scaled by their weights) and marks them touched
/// along `n`.
fn push(side: &Side, delta: Vec3, n: Vec3, p: &mut [Vec3], touched: &mut [Vec3]) {
    match *side {
        Side::Fixed(_) => {}
        Side::Vertex(v, _) => {
            p[v as usize] += delta;
            touched[v as usize] = n;
        }
        Side::Triangle(t, w, _) => {
            for (i, wi) in t.iter().zip(w) {
                p[*i as usize] += delta * wi;
                touched[*i as usize] = n;
            }
        }
    }
}

/// Projects one contact constraint: the source moves along the normal, the target against it.
fn project(c: &ContactConstraint, p: &mut [Vec3], touched: &mut [Vec3]) {
    let (s, ws) = point(&c.source, p);
    let (t, wt) = point(&c.target, p);
    let depth = (t - s).dot(c.normal);
    let w = ws + wt;
    if depth <= 0.0 || w == 0.0 {
        return;
    }
    let lambda = depth / w;
    push(&c.source, c.normal * lambda, c.normal, p, touched);
    push(&c.target, -(c.normal * lambda), c.normal, p, touched);
}
