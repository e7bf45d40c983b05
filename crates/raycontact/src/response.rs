//! The contact response's settings and result (Hermann et al. 2008, section 4): a penalty force
//! per collision contact, on the source vertex, and the opposite force on the hit triangle's
//! vertices by barycentric weights. [`Scene::contact_forces`](crate::Scene::contact_forces)
//! computes them for the last detection (`shaders/response.wgsl`, its CPU twin on the CPU
//! backend).

use glam::Vec3;

use crate::error::{Error, Result};
use crate::id::BodyId;

/// The direction of a contact's force.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ForceDirection {
    /// Along the ray, from the source vertex towards its hit, oriented to resolve the contact
    /// (Hermann et al. 2008).
    #[default]
    AlongRay,
    /// Along the contact's re-projected normal (Lehericey et al. 2015, section 3.3): against a
    /// flat surface, no tangential force at all.
    AlongNormal,
}

/// How contacts become forces.
///
/// Each collision contact gives `max(k × depth − damping × v, 0)` along its direction, where `k`
/// is the pair's stiffness, `depth` the contact's re-projected penetration (the ray length times
/// `cos α`, plus the cloth thicknesses: Hermann's force "proportional to the distance, times
/// cos α") and `v` the rate at which the source vertex and the hit point separate along that
/// direction (their positions minus the previous frame's, over `time_step`). Predictions give no
/// force: a penalty acts only in contact; a constraint solver uses them as unilateral
/// constraints (gap ≥ 0) or to limit a step, from [`crate::Contacts`].
///
/// Forces are summed per vertex in fixed point, `resolution` force units per integer step,
/// with integer atomics: the same bits on every run, whatever the order of the contacts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Response {
    /// Stiffness `k` of every pair (force per unit of depth), unless
    /// [`Scene::set_pair_stiffness`](crate::Scene::set_pair_stiffness) overrides it.
    pub stiffness: f32,
    /// Damping along the force direction (force per unit of separating velocity); 0: none.
    pub damping: f32,
    /// The time between two frames, for the velocities of the damping.
    pub time_step: f32,
    /// Along the ray or along the normal.
    pub direction: ForceDirection,
    /// Force units per fixed-point step: the precision of the sums. A vertex whose
    /// contributions could overflow `i32::MAX` steps is an error
    /// ([`Error::ForceOverflow`]).
    pub resolution: f32,
}

impl Default for Response {
    /// Unit stiffness, no damping, 60 frames a second, along the ray, 2⁻¹⁶ force units a step.
    fn default() -> Self {
        Self {
            stiffness: 1.0,
            damping: 0.0,
            time_step: 1.0 / 60.0,
            direction: ForceDirection::AlongRay,
            resolution: 1.0 / 65536.0,
        }
    }
}

impl Response {
    pub(crate) fn validate(&self) -> Result<()> {
        let positive = |x: f32| x.is_finite() && x > 0.0;
        let non_negative = |x: f32| x.is_finite() && x >= 0.0;
        let bad = |what: &str, x: f32| Err(Error::InvalidInput { what: format!("response {what}: {x}") });
        if !non_negative(self.stiffness) {
            return bad("stiffness must be finite and >= 0", self.stiffness);
        }
        if !non_negative(self.damping) {
            return bad("damping must be finite and >= 0", self.damping);
        }
        if !positive(self.time_step) {
            return bad("time step must be finite and > 0", self.time_step);
        }
        if !positive(self.resolution) || !(1.0 / self.resolution).is_finite() {
            return bad("resolution must be finite and > 0", self.resolution);
        }
        Ok(())
    }
}

/// The forces of one response: per body, per vertex.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContactForces {
    pub(crate) ids: Vec<BodyId>,
    /// Offset of each body's vertices in `forces`, then the total.
    pub(crate) offsets: Vec<usize>,
    pub(crate) forces: Vec<Vec3>,
    /// Collision contacts that gave a force.
    pub contacts: u32,
}

impl ContactForces {
    /// The force on each vertex of a body (`None` for a body that was not in the scene).
    pub fn of(&self, id: BodyId) -> Option<&[Vec3]> {
        let b = self.ids.iter().position(|&x| x == id)?;
        Some(&self.forces[self.offsets[b]..self.offsets[b + 1]])
    }

    /// The sum of the forces on a body's vertices.
    pub fn total(&self, id: BodyId) -> Option<Vec3> {
        self.of(id).map(|f| f.iter().copied().sum())
    }

    /// The bodies and their forces, in packing order.
    pub fn iter(&self) -> impl Iterator<Item = (BodyId, &[Vec3])> {
        self.ids.iter().enumerate().map(|(b, &id)| (id, &self.forces[self.offsets[b]..self.offsets[b + 1]]))
    }
}
