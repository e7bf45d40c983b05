//! What rapier itself reports of the soft bodies' contacts after a step, read through its public
//! API: the candidates of its soft–soft pairs (`NarrowPhase::contact_pairs`,
//! `ContactPair::soft`), the constraints its soft-body solver built against the soft bodies'
//! surfaces, self contacts included (`SoftBody::vertex_contact_segments` and
//! `SoftBody::edge_contact_segments`), and the solver contacts of the soft bodies against the
//! ground (the soft–rigid manifolds).

use rapier3d::geometry::SoftPairContacts;

use crate::scene::World;

/// rapier's soft contacts at the end of a step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RapierContacts {
    /// Candidates of rapier's soft–soft pairs in contact (separation ≤ 0, skins deducted):
    /// vertex–element and edge–edge candidates and volume bins of crossed closed surfaces.
    pub soft_soft: usize,
    /// Vertex and edge constraints the soft-body solver built against the soft bodies' surfaces
    /// in the step, speculative ones included: soft–soft and self contacts (rapier does not tell
    /// them apart through its public API).
    pub constraints: usize,
    /// Solver contacts between the soft bodies and the ground.
    pub ground: usize,
}

impl RapierContacts {
    /// Reads them from the world after its step.
    pub fn of(world: &World) -> Self {
        let p = &world.physics;
        let mut c = Self::default();
        for pair in p.narrow_phase.contact_pairs() {
            if let Some(soft) = pair.soft() {
                c.soft_soft += touching(soft);
            } else if pair.collider1 == world.ground || pair.collider2 == world.ground {
                c.ground += pair.manifolds().iter().map(|m| m.data.solver_contacts.len()).sum::<usize>();
            }
        }
        for h in world.soft_bodies() {
            let sb = &p.soft_bodies[h];
            c.constraints += sb.vertex_contact_segments(&p.soft_bodies).count()
                + sb.edge_contact_segments(&p.soft_bodies).count();
        }
        c
    }
}

/// The enabled candidates of a soft–soft pair within contact (separation ≤ 0).
fn touching(soft: &SoftPairContacts) -> usize {
    let vertices: usize = soft
        .vertex_passes
        .iter()
        .map(|pass| pass.candidates.iter().filter(|x| x.enabled && x.dist <= 0.0).count())
        .sum();
    let edges =
        soft.edges.as_ref().map_or(0, |e| e.candidates.iter().filter(|x| x.enabled && x.dist <= 0.0).count());
    let bins = soft.volume.as_ref().map_or(0, |v| v.bins.iter().filter(|b| b.enabled).count());
    vertices + edges + bins
}
