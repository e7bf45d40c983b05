//! Twin of `shaders/broad_phase.wgsl`: the pairs of bodies whose boxes, grown by the pair's
//! reach, overlap, and the self pairs.

use glam::Vec3;

use super::shared::common::reach;
use crate::layout::{BODY_CLOTH, BODY_STATIC, BodyGpu, BodyPair, BodyState, SELF_CLOTH, SELF_VOLUMETRIC};

/// Twin of `broad_phase.wgsl`: every pair (i, j), i < j, of packed bodies with leaves whose
/// boxes, grown by the pair's [`reach`] `max(prediction, e_i + e_j)`, overlap, and the self
/// pairs (i, i) of the kinds in `self_collision` ([`crate::layout::SELF_CLOTH`],
/// [`crate::layout::SELF_VOLUMETRIC`]), in (i, j) order (the GPU appends them in any order); all
/// with the prediction distance `prediction`. No pair of two static bodies ([`BODY_STATIC`]),
/// a self pair of one included.
pub fn broad_phase(
    bodies: &[BodyGpu],
    body_state: &[BodyState],
    self_collision: u32,
    prediction: f32,
) -> Vec<BodyPair> {
    let boxes: Vec<Option<(Vec3, Vec3)>> = body_state.iter().map(|s| s.bounds()).collect();
    let mut pairs = Vec::new();
    for (i, bi) in boxes.iter().enumerate() {
        let Some((li, hi)) = bi else { continue };
        let fixed = bodies[i].flags & BODY_STATIC != 0;
        let wanted = if bodies[i].flags & BODY_CLOTH != 0 { SELF_CLOTH } else { SELF_VOLUMETRIC };
        if self_collision & wanted != 0 && !fixed {
            pairs.push(BodyPair { a: i as u32, b: i as u32, prediction, pad: 0 });
        }
        for (j, bj) in boxes.iter().enumerate().skip(i + 1) {
            let Some((lj, hj)) = bj else { continue };
            if fixed && bodies[j].flags & BODY_STATIC != 0 {
                continue;
            }
            let reach = reach(prediction, bodies[i].half_thickness, bodies[j].half_thickness);
            if (li - reach).cmple(*hj).all() && (lj - reach).cmple(*hi).all() {
                pairs.push(BodyPair { a: i as u32, b: j as u32, prediction, pad: 0 });
            }
        }
    }
    pairs
}
