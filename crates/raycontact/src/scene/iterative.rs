//! Iterative detection's bookkeeping on the host: the displacement of each body since the last
//! full pass, and the choice between a full and an iterative pass (Lehericey et al. 2013,
//! section 3.3).

use glam::{Affine3A, Vec3};

use super::Scene;
use crate::body::BodyId;
use crate::error::{Error, Result};
use crate::layout::{BODY_CLOTH, SELF_CLOTH, SELF_VOLUMETRIC};
use crate::plan::{DetectPlan, PairSelection, Pass};
use crate::walk::Iterative;

/// What the last full pass remembers.
#[derive(Debug, Default)]
pub(super) struct Memory {
    /// A full pass ran with these settings and nothing invalidated it since.
    pub valid: bool,
    /// Detections since the last full pass.
    pub since_full: u32,
    /// The pairs that pass tested (the backends keep the pair list and the contacts).
    pub pairs: Option<PairSelection>,
}

/// A body's reference for its displacement: positions (and pose) at the last full pass.
#[derive(Debug, Default)]
pub(super) struct Reference {
    pub positions: Vec<Vec3>,
    pub pose: Option<Affine3A>,
    /// The current pose, when the body was placed by [`Scene::set_pose`].
    pub current_pose: Option<Affine3A>,
    /// Bound of the displacement of any of its vertices since the reference.
    pub displacement: f32,
}

/// The largest distance between matching points (finite points: no NaN). Every frame's
/// positions go through it with iterative detection on: eight running maxima, so that the
/// compiler vectorises the loop (a single `f32::max` fold stays scalar, for its NaN rule); on
/// resting-pile's 50 moving bodies of 513 vertices, 0.050 ms a frame as one fold, 0.015 so.
/// Maxima are exact, so the result is the same whatever the grouping.
fn max_distance(a: &[Vec3], b: &[Vec3]) -> f32 {
    const LANES: usize = 8;
    let (a8, b8) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let mut tail = 0.0f32;
    for (p, q) in a8.remainder().iter().zip(b8.remainder()) {
        tail = tail.max(p.distance_squared(*q));
    }
    let mut lanes = [0.0f32; LANES];
    for (p, q) in a8.zip(b8) {
        for i in 0..LANES {
            let d = p[i].distance_squared(q[i]);
            lanes[i] = if d > lanes[i] { d } else { lanes[i] };
        }
    }
    lanes.into_iter().fold(tail, f32::max).sqrt()
}

/// Angle of the rotation between two rigid poses.
fn rotation_angle(a: &Affine3A, b: &Affine3A) -> f32 {
    let qa = glam::Quat::from_mat3a(&a.matrix3);
    let qb = glam::Quat::from_mat3a(&b.matrix3);
    qa.angle_between(qb)
}

impl Scene {
    /// Enables iterative detection ([`Iterative`], Lehericey et al. 2013) for the next
    /// detections, or disables it (`None`). The next detection is a full pass.
    /// Errors: [`Error::InvalidInput`] for a threshold or confidence out of range.
    ///
    /// ```
    /// let mut scene = raycontact::Scene::new_cpu(Some(1)).unwrap();
    /// scene.set_iterative(Some(raycontact::Iterative::new(0.02))).unwrap();
    /// ```
    pub fn set_iterative(&mut self, iterative: Option<Iterative>) -> Result<()> {
        if let Some(it) = &iterative {
            it.validate()?;
        }
        self.iterative = iterative;
        self.memory = Memory::default();
        Ok(())
    }

    /// The iterative detection settings, if enabled.
    pub fn iterative(&self) -> Option<Iterative> {
        self.iterative
    }

    /// Places a rigid body: its positions become `pose` applied to the positions it was added
    /// with. With iterative detection its displacement since the last full pass is then bounded
    /// as the paper does, by the translation plus the rotation angle times the body's radius
    /// (the largest distance of a vertex from its origin), not by comparing every vertex.
    /// Errors: [`Error::InvalidInput`] when `pose` is not a rotation and a translation (or not
    /// finite), [`Error::UnknownBody`].
    pub fn set_pose(&mut self, id: BodyId, pose: Affine3A) -> Result<()> {
        let m = pose.matrix3;
        let rigid =
            (m.transpose() * m - glam::Mat3A::IDENTITY).to_cols_array().iter().all(|x| x.abs() < 1e-4)
                && m.determinant() > 0.0
                && pose.translation.is_finite();
        if !rigid {
            return Err(Error::InvalidInput {
                what: format!("set_pose({id}): not a rotation and a translation"),
            });
        }
        let body = self.body(id)?;
        let positions: Vec<Vec3> = body.rest.iter().map(|p| pose.transform_point3(*p)).collect();
        self.set_positions(id, &positions)?;
        let body = self.slots[id.index as usize].body.as_mut().expect("checked above");
        body.reference.current_pose = Some(pose);
        if let Some(r) = body.reference.pose {
            let moved = (pose.translation - r.translation).length() + rotation_angle(&pose, &r) * body.radius;
            body.reference.displacement = moved;
        }
        Ok(())
    }

    /// The bound of a body's displacement since the last full pass of iterative detection (0
    /// without it): the largest distance of a vertex from its position then, or, for a body
    /// placed with [`Scene::set_pose`] both then and now, translation plus angle times radius.
    pub fn displacement(&self, id: BodyId) -> Result<f32> {
        Ok(self.body(id)?.reference.displacement)
    }

    /// Updates the displacement bound of a body whose positions were just set.
    pub(super) fn track_displacement(&mut self, id: BodyId) {
        if self.iterative.is_none() {
            return;
        }
        let body = self.slots[id.index as usize].body.as_mut().expect("live body");
        body.reference.current_pose = None;
        if body.reference.positions.len() == body.data.positions.len() {
            body.reference.displacement = max_distance(&body.data.positions, &body.reference.positions);
        }
    }

    /// Whether this detection can be an iterative pass: the last full pass tested the same
    /// pairs with the same settings, fewer than `full_pass_every` detections ago, and no pair
    /// may have moved more than the threshold since (the sum of its bodies' displacement
    /// bounds; for overlapping pairs, the two largest bounds of the scene, or twice a body's own
    /// for its self pair).
    pub(super) fn can_walk(&self, pairs: &PairSelection) -> bool {
        let Some(it) = self.iterative else { return false };
        let m = &self.memory;
        if !m.valid || m.since_full + 1 >= it.full_pass_every || m.pairs.as_ref() != Some(pairs) {
            return false;
        }
        let d: Vec<f32> = self
            .packing
            .ids
            .iter()
            .map(|id| self.body(*id).map_or(f32::INFINITY, |b| b.reference.displacement))
            .collect();
        let over = match pairs {
            PairSelection::Listed(list) => {
                list.iter().any(|p| d[p.a as usize] + d[p.b as usize] > it.displacement_threshold)
            }
            PairSelection::Overlapping { self_collision, .. } => {
                let (mut first, mut second, mut own) = (0.0f32, 0.0f32, 0.0f32);
                for (x, body) in d.iter().zip(&self.packing.bodies) {
                    if *x > first {
                        second = first;
                        first = *x;
                    } else if *x > second {
                        second = *x;
                    }
                    // A self pair's two "bodies" are the same one: twice its displacement.
                    let kind = if body.flags & BODY_CLOTH != 0 { SELF_CLOTH } else { SELF_VOLUMETRIC };
                    if self_collision & kind != 0 {
                        own = own.max(2.0 * x);
                    }
                }
                (first + second).max(own) > it.displacement_threshold
            }
        };
        !over
    }

    /// After a detection: a full pass becomes the new reference of every body.
    pub(super) fn after_detect(&mut self, plan: &DetectPlan) {
        if self.iterative.is_none() {
            return;
        }
        if plan.pass != Pass::Full {
            self.memory.since_full += 1;
            return;
        }
        self.memory.valid = true;
        self.memory.since_full = 0;
        self.memory.pairs = Some(plan.pairs.clone());
        for slot in &mut self.slots {
            if let Some(b) = slot.body.as_mut() {
                let r = &mut b.reference;
                r.positions.clear();
                r.positions.extend_from_slice(&b.data.positions);
                r.pose = r.current_pose;
                r.displacement = 0.0;
            }
        }
    }
}
