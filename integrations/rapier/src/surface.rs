//! A soft body's boundary as raycontact sees it: the particles on rapier's boundary triangles,
//! renumbered `0..n`, and the triangles over those numbers. Built once when the body is added;
//! every step it gathers the particles' positions for [`raycontact::Scene::set_positions`] and
//! scatters raycontact's per-vertex forces back onto the particles as velocity changes.

use glam::Vec3;
use rapier3d::dynamics::SoftBody;

/// The boundary of one rapier soft body, renumbered for raycontact.
#[derive(Clone, Debug)]
pub struct Surface {
    /// The rapier particle behind each raycontact vertex.
    pub particles: Vec<u32>,
    /// The boundary triangles over raycontact's vertex numbers (rapier's orientation: outward
    /// for a closed body).
    pub triangles: Vec<[u32; 3]>,
    /// The body's topology version when the surface was taken (a tear would change the
    /// boundary: the surface is then stale, see [`Surface::is_current`]).
    topology: u32,
}

impl Surface {
    /// The boundary of `body` (`SoftBody::boundary`: particle indices, oriented outward).
    pub fn of(body: &SoftBody) -> Self {
        let mut index = vec![u32::MAX; body.num_particles()];
        let mut particles = Vec::new();
        let triangles = body
            .boundary()
            .iter()
            .map(|t| {
                t.map(|p| {
                    let slot = &mut index[p as usize];
                    if *slot == u32::MAX {
                        *slot = particles.len() as u32;
                        particles.push(p);
                    }
                    *slot
                })
            })
            .collect();
        Self { particles, triangles, topology: body.topology_version() }
    }

    /// Whether `body` still has the boundary this surface was taken from (no tear since).
    pub fn is_current(&self, body: &SoftBody) -> bool {
        body.topology_version() == self.topology
    }

    /// The positions of the surface's particles, in raycontact's vertex order, into `out`.
    pub fn gather(&self, body: &SoftBody, out: &mut Vec<Vec3>) {
        out.clear();
        out.extend(self.particles.iter().map(|&p| body.particle_position(p as usize)));
    }

    /// The velocities and inverse masses (0: pinned) of the surface's particles.
    pub fn velocities(&self, body: &SoftBody) -> (Vec<Vec3>, Vec<f32>) {
        let particles = body.particles();
        self.particles
            .iter()
            .map(|&p| (particles[p as usize].velocity(), particles[p as usize].inv_mass()))
            .unzip()
    }

    /// Sets the velocity of every free particle whose entry in `after` differs from `before`
    /// (`SoftBody::set_particle_velocity`; a pinned particle keeps its own).
    pub fn set_velocities(&self, body: &mut SoftBody, before: &[Vec3], after: &[Vec3]) {
        for ((&p, b), a) in self.particles.iter().zip(before).zip(after) {
            if a != b && !body.particles()[p as usize].is_pinned() {
                body.set_particle_velocity(p as usize, *a);
            }
        }
    }
}
