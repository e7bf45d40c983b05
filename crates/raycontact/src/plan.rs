//! The detection plan: everything one detection does, decided once on the host before anything
//! is recorded, and executed as it is by either backend (the GPU's `gpu::detect`, the CPU's
//! `cpu_backend::detect`).

use crate::contact::OverflowPolicy;
use crate::layout::{BODY_CLOTH, BODY_STATIC, BodyGpu, BodyPair, ContactGpu, SELF_CLOTH, SELF_VOLUMETRIC};

/// Which pairs a full pass tests.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PairSelection {
    /// Every pair of bodies whose boxes, grown by the pair's reach ([`crate::cpu::reach`]),
    /// overlap, found by the broad phase with this prediction distance; and the self pairs of
    /// the kinds in `self_collision` ([`crate::layout::SELF_CLOTH`],
    /// [`crate::layout::SELF_VOLUMETRIC`]).
    Overlapping {
        /// Self-collision bits.
        self_collision: u32,
        /// Prediction distance of every pair.
        prediction: f32,
    },
    /// These pairs (packed body indices), each with its own prediction distance.
    Listed(Vec<BodyPair>),
}

impl PairSelection {
    /// The listed pairs, `None` for [`PairSelection::Overlapping`].
    pub fn list(&self) -> Option<&[BodyPair]> {
        match self {
            PairSelection::Listed(l) => Some(l),
            PairSelection::Overlapping { .. } => None,
        }
    }

    /// The broad phase's settings: self-collision bits and prediction distance (zeros for a
    /// list, which carries its own distances and skips the broad phase).
    pub fn broad_phase(&self) -> (u32, f32) {
        match *self {
            PairSelection::Overlapping { self_collision, prediction } => (self_collision, prediction),
            PairSelection::Listed(_) => (0, 0.0),
        }
    }
}

/// A full pass, or an iterative pass that re-casts last frame's contacts by walking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Pass {
    /// Every ray of every source vertex through the BVHs.
    Full,
    /// Lehericey et al. 2013: last frame's contacts re-cast by walking from their triangles.
    Iterative {
        /// [`crate::layout::WALK_FALLBACK_BVH`] or [`crate::layout::WALK_FALLBACK_DROP`].
        fallback: u32,
        /// `confidence × displacement threshold`: how far a walk may go.
        reach: f32,
    },
}

/// One detection, as both backends execute it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DetectPlan {
    /// The pairs of a full pass; an iterative pass keeps those of the last full pass.
    pub pairs: PairSelection,
    /// Full or iterative.
    pub pass: Pass,
    /// Contacts remember their triangles for the next iterative pass (iterative detection is on).
    pub remember: bool,
    /// Inversion handling ([`crate::Scene::set_inversion_handling`]).
    pub inversions: bool,
    /// The BVHs are brought up to date this frame (rebuilt or refitted, as the scene's
    /// [`BvhUpdate`](crate::BvhUpdate) says): a full pass, or an iterative pass whose failed
    /// walks fall back to the BVH.
    pub bvh: bool,
    /// Most pairs a full pass may test (the list's length, or every pair and self pair).
    pub pair_capacity: u64,
    /// Source vertices the list holds at least for a full pass: every vertex of every directed
    /// pair of a list; for overlapping pairs, [`overlapping_sources`] within the budget (the
    /// list keeps its capacity, and grows when a detection finds it short).
    pub source_need: u64,
    /// The most source vertices a full pass can list (for a list, `source_need`): the list never
    /// grows past it.
    pub source_most: u64,
    /// Most contacts the detection may return.
    pub contact_capacity: u64,
    /// What happens past `contact_capacity` (and past `intersect.crossing_capacity`).
    pub overflow: OverflowPolicy,
    /// The intersection stages.
    pub intersect: IntersectPlan,
}

/// The intersection stages of a detection.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct IntersectPlan {
    /// [`crate::IntersectionMode::code`]: 0 when they do not run.
    pub mode: u32,
    /// Most crossings the detection may store.
    pub crossing_capacity: u64,
}

/// What a detection found, from either backend: its contacts in no particular order (bodies by
/// packed index) and its counters.
#[derive(Default)]
pub(crate) struct Outcome {
    /// The contacts (on the GPU, in the readback's mapping where they could be read there).
    pub contacts: crate::found::FoundContacts,
    /// Pairs tested.
    pub pairs: u32,
    /// Contacts re-cast by an iterative pass.
    pub walked: u32,
    /// The walks' outcomes and fallback casts.
    pub walk: crate::layout::WalkCounts,
    /// Sources a full pass classified (0 in an iterative pass).
    pub sources: u32,
    /// Of them, those whose `may_reach` said no.
    pub unreached: u32,
    /// The contact capacity after the detection: larger than the plan's when
    /// [`OverflowPolicy::Grow`] grew it.
    pub contact_capacity: u64,
    /// What the intersection stages produced (mode 0 when they did not run).
    pub intersections: crate::intersection::RawIntersections,
    /// The crossing capacity after the detection (grown as the contact capacity, with the same
    /// headroom).
    pub crossing_capacity: u64,
}

/// Source-list entries (8 bytes) per contact of the contact capacity that a full pass over the
/// overlapping pairs reserves at most ([`overlapping_sources`]): the list then takes at most the
/// bytes of one of the two contact buffers.
pub(crate) const SOURCES_PER_CONTACT: u64 = size_of::<ContactGpu>() as u64 / 8;

/// The most source vertices a full pass over the overlapping pairs of `bodies` (packed) can list:
/// each body's vertices once for every other body it may pair with (no pair of two static
/// bodies) and once for its self pair where `self_collision` asks for one, the pairs
/// [`crate::cpu::broad_phase`] may find. The GPU's list is sized so at the first detection
/// where that is within [`SOURCES_PER_CONTACT`] entries a contact of the contact capacity, and
/// then never grows while bodies come into reach of each other frame after frame (sheets
/// settling on a scene: `raycontact-bench --size paper --scene eight-sheets` grew it twice in
/// its 30 timed frames when it held four entries a vertex); past that budget it holds the
/// budget and grows when a detection lists more, never past this bound.
pub(crate) fn overlapping_sources(bodies: &[BodyGpu], self_collision: u32) -> u64 {
    let fixed = |b: &BodyGpu| b.flags & BODY_STATIC != 0;
    let moving = bodies.iter().filter(|b| !fixed(b)).count() as u64;
    let n = bodies.len() as u64;
    bodies
        .iter()
        .map(|b| {
            let wanted = if b.flags & BODY_CLOTH != 0 { SELF_CLOTH } else { SELF_VOLUMETRIC };
            let own = u64::from(self_collision & wanted != 0 && !fixed(b));
            let others = if fixed(b) { moving } else { n - 1 };
            b.vertex_count as u64 * (others + own)
        })
        .sum()
}

/// The capacity a grown contact buffer gets for `needed` contacts: twice as many and 256, so
/// that a slowly rising count does not re-run the rays every frame (and fills less than three
/// quarters of it: [`with_headroom`] leaves it).
pub(crate) fn grown_capacity(needed: u64) -> u64 {
    2 * needed + 256
}

/// The capacity the next detection gets after one that found `found` within `capacity`: under
/// [`OverflowPolicy::Grow`], a detection that filled more than three quarters of it raises it to
/// [`grown_capacity`] (at least 1.5 times the capacity, the step by which the GPU's buffers
/// grow), so that a count rising from frame to frame (cloth settling into more contacts) grows
/// the buffers before the frame that would overflow them: that frame allocates instead of
/// casting its rays twice. Under [`OverflowPolicy::Error`] the capacity stays as set.
pub(crate) fn with_headroom(policy: OverflowPolicy, found: u64, capacity: u64) -> u64 {
    match policy {
        OverflowPolicy::Grow if fills_most(found, capacity) => grown_capacity(found),
        _ => capacity,
    }
}

/// Whether `found` entries fill more than three quarters of `capacity`: the point past which a
/// buffer grows before the next detection ([`with_headroom`]; the GPU's source list too).
pub(crate) fn fills_most(found: u64, capacity: u64) -> bool {
    found > capacity - capacity / 4
}

/// Applies `policy` when `found` contacts exceed `capacity`: the capacity to use (grown with
/// headroom), or the overflow error.
pub(crate) fn on_overflow(policy: OverflowPolicy, found: u64, capacity: u64) -> crate::Result<u64> {
    if found <= capacity {
        return Ok(capacity);
    }
    match policy {
        OverflowPolicy::Error => Err(crate::Error::ContactOverflow { needed: found, capacity }),
        OverflowPolicy::Grow => Ok(grown_capacity(found)),
    }
}

/// [`on_overflow`] for crossings: the capacity to use, or [`crate::Error::CrossingOverflow`].
pub(crate) fn on_crossing_overflow(policy: OverflowPolicy, found: u64, capacity: u64) -> crate::Result<u64> {
    on_overflow(policy, found, capacity)
        .map_err(|_| crate::Error::CrossingOverflow { needed: found, capacity })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overlapping_pairs_list_each_vertex_once_a_pair_they_may_form() {
        let body = |vertex_count, flags| BodyGpu { vertex_count, flags, ..BodyGpu::default() };
        // A cloth, a volumetric body, a static body and a static cloth.
        let bodies =
            [body(10, BODY_CLOTH), body(20, 0), body(30, BODY_STATIC), body(40, BODY_STATIC | BODY_CLOTH)];
        // Each moving body with the three others, the static ones with the two moving ones.
        assert_eq!(overlapping_sources(&bodies, 0), 10 * 3 + 20 * 3 + 30 * 2 + 40 * 2);
        // Self pairs of the moving bodies of the kinds asked for, none of a static one.
        assert_eq!(overlapping_sources(&bodies, SELF_CLOTH), 10 * 4 + 20 * 3 + 30 * 2 + 40 * 2);
        assert_eq!(
            overlapping_sources(&bodies, SELF_CLOTH | SELF_VOLUMETRIC),
            10 * 4 + 20 * 4 + 30 * 2 + 40 * 2
        );
        assert_eq!(overlapping_sources(&bodies[..1], SELF_CLOTH), 10);
        assert_eq!(overlapping_sources(&[], SELF_CLOTH), 0);
    }
}
