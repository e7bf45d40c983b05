//! Rebuilds left for when the pair list is known ([`LbvhLag::deferred`]).
//!
//! A detection on the CPU backend updates the frame (normals, boxes, trees), then makes its
//! pair list from the body boxes, then casts rays into the trees of the bodies in a pair. A
//! moving body in no pair needs no tree in that frame, so under [`BvhUpdate::Rebuild`] the
//! detection's update stops after the boxes ([`FrameData::defer_rebuild`]: every body it
//! would rebuild is deferred, its leaf counts set from the live triangles its boxes' pass
//! counted, as the `morton` stage would set them), and the full pass builds the deferred
//! bodies of its pairs, timed as the `morton`, `sort` and `hierarchy` stages, before its rays
//! ([`CpuScene::build_deferred`]). Whatever else reads a tree (an iterative pass, the
//! intersection stages, a ray query or walk, `Scene::frame_data`) builds every deferred body
//! first, as it builds the binary trees left unbuilt (`super::lag`); a later frame rebuilds
//! or defers them again (their positions still count as moved, `Changes`). The trees are those
//! the update would have built (the same keys from the same positions, boxes and counts), so
//! the same contacts; only the bodies in no pair go without.
//!
//! The GPU frame builds every tree (its pair list is made on the GPU, after them), and so does
//! [`Scene::update`](crate::Scene::update) on the CPU backend, whose caller may read the trees
//! next.

use glam::Vec3;

use super::CpuScene;
use crate::changes::Changes;
use crate::frame::{FrameData, LbvhLag, NOT_COUNTED};
use crate::layout::BodyPair;
use crate::packing::Packing;
use crate::stats::{FrameStats, Stage};

impl FrameData {
    /// Defers the rebuild of the bodies that `stale` marks, all of them, when each moved since
    /// its trees' last update (`moved`) and had its live triangles counted with its boxes
    /// (this frame's normals pass): their leaf and degenerate counts are set from those counts
    /// (what the `morton` stage sets), their keys and trees left to [`Self::build_deferred`].
    /// Returns whether it deferred them; nothing is deferred when there is no such body, or
    /// one that does not qualify (the caller rebuilds then, as before).
    pub(super) fn defer_rebuild(&mut self, packing: &Packing, stale: &[bool], moved: &[bool]) -> bool {
        let bodies = packing.bodies.len();
        if stale.len() != bodies || moved.len() != bodies || !stale.contains(&true) {
            return false;
        }
        let FrameData { lag, body_state, .. } = self;
        let counted = |b: usize| lag.live.get(b).is_some_and(|&l| l != NOT_COUNTED);
        if (0..bodies).any(|b| stale[b] && !(moved[b] && counted(b))) {
            return false;
        }
        lag.deferred.resize(bodies, false);
        lag.unbuilt.resize(bodies, false);
        lag.behind.resize(bodies, false);
        for (b, body) in packing.bodies.iter().enumerate().filter(|&(b, _)| stale[b]) {
            // Its binary tree, left unbuilt or behind by an earlier frame, is rebuilt with the
            // rest: nothing builds or fits it meanwhile.
            (lag.deferred[b], lag.unbuilt[b], lag.behind[b]) = (true, false, false);
            let live = lag.live[b];
            (body_state[b].leaf_count, body_state[b].degenerate_count) = (live, body.tri_count - live);
        }
        lag.awaiting_pairs = true;
        true
    }

    /// Builds the deferred bodies that `only` marks (`None`: every one) at `positions` (the
    /// frame's, whose normals and boxes the update computed), as the update's rebuild would
    /// have, each stage's wall time to `time`; `changes` then counts their trees as fresh. The
    /// first such build after a deferring update runs even for no body: it does what that
    /// rebuild did for the bodies it did not build ([`LbvhLag::awaiting_pairs`]).
    pub(super) fn build_deferred(
        &mut self,
        packing: &Packing,
        positions: &[Vec3],
        changes: &mut Changes,
        only: Option<&[bool]>,
        mut time: impl FnMut(Stage, f64),
    ) {
        let mut building = std::mem::take(&mut self.scratch.building);
        building.clear();
        let wanted = |b: usize| only.is_none_or(|o| o.get(b) == Some(&true));
        building.extend(self.lag.deferred.iter().enumerate().map(|(b, &d)| d && wanted(b)));
        let awaiting = std::mem::take(&mut self.lag.awaiting_pairs);
        if building.contains(&true) || awaiting {
            let mut clock = web_time::Instant::now();
            let mut lap = |s: Stage| {
                let now = web_time::Instant::now();
                time(s, (now - clock).as_nanos() as f64);
                clock = now;
            };
            // The first build after the deferring update does what its rebuild did for the
            // other bodies too, their binary trees built or fitted first (a deferred body's
            // are neither unbuilt nor behind: `Self::defer_rebuild`); a later one (a reader's,
            // in the same frame or after) builds its bodies alone: the others' trees are of
            // their positions already, whatever the bodies that moved since.
            if awaiting {
                self.fit_lagging(packing);
            }
            let moved = std::mem::take(&mut changes.moved);
            self.rebuild_tree(packing, positions, &building, Some(&moved), false, awaiting, &mut lap);
            changes.moved = moved;
            changes.rebuilt_bodies(&building);
            for (d, &b) in self.lag.deferred.iter_mut().zip(&building) {
                *d &= !b;
            }
        }
        self.scratch.building = building;
    }
}

impl LbvhLag {
    /// Whether some body's rebuild is deferred.
    pub fn any_deferred(&self) -> bool {
        self.deferred.contains(&true)
    }
}

impl CpuScene {
    /// Builds the deferred bodies ([`FrameData::build_deferred`]) of the pairs `pairs`
    /// (`None`: every deferred body), with their stages' wall times added to `stats` when given.
    pub(crate) fn build_deferred(
        &mut self,
        packing: &Packing,
        pairs: Option<&[BodyPair]>,
        stats: Option<&mut FrameStats>,
    ) {
        if !self.frame.lag.any_deferred() {
            return;
        }
        let mut in_pairs = std::mem::take(&mut self.in_pairs);
        if let Some(pairs) = pairs {
            in_pairs.clear();
            in_pairs.resize(packing.bodies.len(), false);
            for p in pairs {
                for b in [p.a, p.b] {
                    if let Some(x) = in_pairs.get_mut(b as usize) {
                        *x = true;
                    }
                }
            }
        }
        let only = pairs.map(|_| &in_pairs[..]);
        let (frame, current, changes) = (&mut self.frame, &self.current, &mut self.changes);
        let mut stats = stats;
        self.pool.install(|| {
            let time = |stage, ns| {
                if let Some(s) = stats.as_deref_mut() {
                    *s.stage(stage).cpu_ns.get_or_insert(0.0) += ns;
                }
            };
            frame.build_deferred(packing, current, changes, only, time)
        });
        // What the build did to the trees (binned-SAH trees made for bodies at rest, put in
        // place), counted in the frame's figures (else in the next frame's).
        if let Some(s) = stats {
            self.frame.wide.count_trees(&mut s.bvh);
        }
        self.in_pairs = in_pairs;
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use crate::{BodyKind, Pairs, Scene, meshes};

    #[test]
    fn a_body_in_no_pair_is_built_when_read_into_the_trees_an_update_builds() {
        // Two interpenetrating tori and a third far from both, all moving: the detection builds
        // the two tori's trees and leaves the third's; reading the frame builds it. The
        // contacts and, once read, the frame are those of a scene whose update builds every
        // tree before its detection.
        let torus = meshes::torus(1.0, 0.35, 24, 12);
        let at = |dx: f32, k: f32| -> Vec<Vec3> {
            let shift = Vec3::new(dx + 0.01 * k, 0.02 * k, 0.0);
            torus.positions.iter().map(|p| *p + shift).collect()
        };
        let offsets = [0.0, 1.2, 10.0];
        let mut scenes = [0, 1].map(|_| {
            let mut s = Scene::new_cpu(Some(2)).unwrap();
            s.set_background_trees(false);
            let ids =
                offsets.map(|dx| s.add_body(&at(dx, 0.0), &torus.triangles, BodyKind::Volumetric).unwrap());
            // The first frame (a new packing) rebuilds every tree.
            s.detect(Pairs::Overlapping).unwrap();
            (s, ids)
        });
        for frame in 1..5 {
            let k = frame as f32;
            for (s, ids) in &mut scenes {
                for (id, dx) in ids.iter().zip(offsets) {
                    s.set_positions(*id, &at(dx, k)).unwrap();
                }
            }
            let [(s, _), (eager, _)] = &mut scenes;
            let found = s.detect(Pairs::Overlapping).unwrap();
            eager.update().unwrap();
            let want = eager.detect(Pairs::Overlapping).unwrap();
            assert!(!want.contacts.is_empty(), "frame {frame}: contacts");
            assert_eq!(found.contacts, want.contacts, "frame {frame}: the contacts");
            let deferred = s.cpu_frame().unwrap().lag.deferred.clone();
            let deferred = [0, 1, 2].map(|b| deferred.get(b) == Some(&true));
            assert_eq!(deferred, [false, false, true], "frame {frame}: the far torus is left");
            let hierarchy = found.stats.stages.iter().find(|(s, _)| *s == crate::Stage::Hierarchy);
            let built = hierarchy.and_then(|(_, st)| st.cpu_ns);
            assert!(built.is_some(), "frame {frame}: the pairs' trees built in the detection");
            let (read, built) = (s.frame_data().unwrap(), eager.frame_data().unwrap());
            assert!(read == built, "frame {frame}: the frame read is the eager scene's");
            assert!(!s.cpu_frame().unwrap().lag.deferred.contains(&true), "frame {frame}: built");
        }
    }
}
