//! Contacts as unilateral constraints, and Coulomb friction against static bodies.
//!
//! Lehericey et al. 2015: the response gives a **prediction** no force; a constraint solver
//! keeps its gap from closing. Each prediction becomes a row: the source vertex against the
//! point of the hit triangle at the contact's barycentric coordinates, along the contact's
//! normal, with the gap `−depth` it had at the positions it was detected at; the gap at other
//! positions is that gap plus the relative motion since, along the normal, and must stay ≥ 0.
//! A **collision** becomes a row of gap 0: the penalty force pushes it out, the row only keeps
//! the cloth's own constraints from pulling it in deeper than it was found.
//!
//! Rows are projected Gauss–Seidel, in the contacts' (deterministic) order, each correction
//! shared by inverse mass; static bodies have none.
//!
//! Friction ([`stick`], after Macklin et al. 2014, "Unified particle physics for real-time
//! applications") acts once per step on a cloth vertex touching a static body: its tangential
//! motion over the step is cancelled while under `stick × push`, else reduced by
//! `slide × push`, where `push` is how far the step's contacts and constraints moved it out
//! along the surface's normal.
//!
//! A row's plane is the hit triangle's, extended: good for a ray that meets the surface nearly
//! head-on, wrong for a grazing one (a cloth vertex hanging past a box's edge would be held at
//! the height of its top face). Only contacts whose ray meets the triangle within 60 degrees
//! of its normal (`weight = |cos α| ≥ MIN_WEIGHT`) become rows.

use glam::Vec3;
use raycontact::{BodyId, Contact, Scene};

use crate::cloth::Cloth;

/// The smallest `|cos α|` of a contact that becomes a row.
pub const MIN_WEIGHT: f32 = 0.5;

/// Coulomb friction coefficients, as fractions of the normal correction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Friction {
    /// Static coefficient: tangential motion under `stick × push` is cancelled.
    pub stick: f32,
    /// Kinetic coefficient: otherwise it is reduced by `slide × push`.
    pub slide: f32,
}

/// A vertex: the cloth it belongs to (its index in the world; `None` for a static body) and
/// its index.
type At = (Option<usize>, usize);

#[derive(Clone, Copy, Debug)]
struct Row {
    source: At,
    target: [At; 3],
    weights: [f32; 3],
    normal: Vec3,
    gap: f32,
}

/// The constraint rows of one detection, with the cloths' positions it ran at.
#[derive(Clone, Debug, Default)]
pub struct Gaps {
    rows: Vec<Row>,
    reference: Vec<Vec<Vec3>>,
}

impl Gaps {
    /// The rows of `contacts` that involve a cloth, detected with the cloths at their predicted
    /// positions.
    pub fn new(scene: &Scene, cloths: &[(BodyId, Cloth)], contacts: &[Contact]) -> raycontact::Result<Self> {
        let index = |id: BodyId| cloths.iter().position(|(c, _)| *c == id);
        let mut rows = Vec::new();
        for c in contacts.iter().filter(|c| c.weight >= MIN_WEIGHT) {
            let (s, t) = (index(c.source_body), index(c.target_body));
            if s.is_none() && t.is_none() {
                continue;
            }
            let tri = scene.triangles(c.target_body)?[c.target_triangle as usize];
            let (u, v) = (c.barycentric.x, c.barycentric.y);
            rows.push(Row {
                source: (s, c.source_vertex as usize),
                target: tri.map(|i| (t, i as usize)),
                weights: [1.0 - u - v, u, v],
                normal: c.normal,
                gap: (-c.depth).max(0.0),
            });
        }
        Ok(Self { rows, reference: cloths.iter().map(|(_, c)| c.predicted.clone()).collect() })
    }

    /// How many rows there are.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// One pass over the rows on the cloths' predicted positions; returns how many rows had to
    /// move something.
    pub fn project(&self, cloths: &mut [(BodyId, Cloth)]) -> u32 {
        let moved = |(b, i): At, cloths: &[(BodyId, Cloth)]| match b {
            Some(b) => cloths[b].1.predicted[i] - self.reference[b][i],
            None => Vec3::ZERO,
        };
        let w = |(b, i): At, cloths: &[(BodyId, Cloth)]| match b {
            Some(b) => cloths[b].1.inv_mass[i],
            None => 0.0,
        };
        let mut active = 0;
        for r in &self.rows {
            let mut rel = moved(r.source, cloths);
            let mut denom = w(r.source, cloths);
            for (t, k) in r.target.iter().zip(r.weights) {
                rel -= moved(*t, cloths) * k;
                denom += w(*t, cloths) * k * k;
            }
            let gap = r.gap + rel.dot(r.normal);
            if gap >= 0.0 || denom <= 0.0 {
                continue;
            }
            active += 1;
            let lambda = -gap / denom;
            if let (Some(b), i) = r.source {
                let c = &mut cloths[b].1;
                c.predicted[i] += r.normal * (lambda * c.inv_mass[i]);
            }
            for (t, k) in r.target.iter().zip(r.weights) {
                if let (Some(b), i) = *t {
                    let wi = cloths[b].1.inv_mass[i];
                    cloths[b].1.predicted[i] -= r.normal * (lambda * wi * k);
                }
            }
        }
        active
    }
}

/// Coulomb friction on vertex `i` of `cloth` against a static surface of normal `n` that
/// pushed it by `push` along `n`: its tangential motion over the step is cancelled while under
/// `stick × push`, else reduced by `slide × push`.
pub fn stick(cloth: &mut Cloth, i: usize, n: Vec3, push: f32, f: Friction) {
    if push <= 0.0 || cloth.inv_mass[i] <= 0.0 {
        return;
    }
    let d = cloth.predicted[i] - cloth.positions[i];
    let tangential = d - n * d.dot(n);
    let t = tangential.length();
    if t <= f.stick * push {
        cloth.predicted[i] -= tangential;
    } else {
        cloth.predicted[i] -= tangential * (f.slide * push / t).min(1.0);
    }
}
