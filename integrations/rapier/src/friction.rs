//! Coulomb friction at raycontact's collision contacts, added by the coupling (raycontact's
//! response is frictionless): after the response's velocity changes, each contact's tangential
//! relative velocity — the source vertex against the hit point, its target triangle's vertices
//! weighted by the hit's barycentrics — is reduced by at most `μ` times the contact's normal
//! impulse, the source vertex and the target triangle's vertices taking opposite impulses
//! (momentum is conserved). The contacts are taken one after the other, in raycontact's order
//! (deterministic), each seeing the velocities the previous ones left.

use glam::Vec3;
use raycontact::{BodyId, Contact, ContactForces};

/// The velocities and masses of the bodies' surface vertices, in raycontact's numbering.
pub struct Velocities {
    /// Per body (the scene's id), its vertices' velocities.
    pub bodies: Vec<(BodyId, Vec<Vec3>)>,
    /// Per body, its vertices' inverse masses (0: pinned).
    pub inv_mass: Vec<Vec<f32>>,
}

impl Velocities {
    fn index(&self, id: BodyId) -> Option<usize> {
        self.bodies.iter().position(|(b, _)| *b == id)
    }
}

/// Applies friction coefficient `mu` at every collision contact of `contacts`, the normal
/// impulse of a contact being its source vertex's response force along the contact normal
/// (`forces`), shared by that vertex's collision contacts, times `dt`. Returns how many
/// contacts slid (the friction reached its Coulomb bound) and how many stuck.
pub fn apply(
    v: &mut Velocities,
    triangles: &[&[[u32; 3]]],
    contacts: &[Contact],
    forces: &ContactForces,
    mu: f32,
    dt: f32,
) -> (usize, usize) {
    // Collision contacts per source vertex (they share its force).
    let mut count: Vec<Vec<u16>> = v.bodies.iter().map(|(_, x)| vec![0; x.len()]).collect();
    for c in contacts.iter().filter(|c| c.is_collision()) {
        if let Some(s) = v.index(c.source_body) {
            count[s][c.source_vertex as usize] += 1;
        }
    }
    let (mut slid, mut stuck) = (0, 0);
    for c in contacts.iter().filter(|c| c.is_collision()) {
        let (Some(s), Some(t)) = (v.index(c.source_body), v.index(c.target_body)) else { continue };
        let i = c.source_vertex as usize;
        let f = forces.of(c.source_body).map_or(Vec3::ZERO, |f| f[i]);
        let load = f.dot(c.normal).max(0.0) * dt / f32::from(count[s][i].max(1));
        if load == 0.0 {
            continue;
        }
        let tri = triangles[t][c.target_triangle as usize];
        let w = [1.0 - c.barycentric.x - c.barycentric.y, c.barycentric.x, c.barycentric.y];
        let hit: Vec3 = (0..3).map(|k| v.bodies[t].1[tri[k] as usize] * w[k]).sum();
        let rel = v.bodies[s].1[i] - hit;
        let tangential = rel - c.normal * rel.dot(c.normal);
        let speed = tangential.length();
        // The impulse that stops the sliding: the relative velocity over the inverse mass of
        // the pair along it (the source vertex, and the hit point through the barycentrics).
        let inv =
            v.inv_mass[s][i] + (0..3).map(|k| w[k] * w[k] * v.inv_mass[t][tri[k] as usize]).sum::<f32>();
        if speed <= 1e-9 || inv <= 0.0 {
            continue;
        }
        let stop = speed / inv;
        let j = if stop <= mu * load {
            stuck += 1;
            stop
        } else {
            slid += 1;
            mu * load
        };
        let impulse = -tangential / speed * j;
        v.bodies[s].1[i] += impulse * v.inv_mass[s][i];
        for k in 0..3 {
            let m = tri[k] as usize;
            v.bodies[t].1[m] -= impulse * (w[k] * v.inv_mass[t][m]);
        }
    }
    (slid, stuck)
}
