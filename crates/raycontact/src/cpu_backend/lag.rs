//! The binary trees that the CPU backend's `Refit` frames leave behind ([`LbvhLag`]).
//!
//! Under [`BvhUpdate::Refit`] with the wide trees on, a moving body's rays walk its wide tree,
//! collapsed from a binned-SAH tree and refitted on its own nodes
//! ([`WideTree::refit_sah`](crate::wide_bvh::WideTree::refit_sah)), and nothing in a full pass
//! reads its LBVH but the root's box, which the wide walks test first. Refitting the LBVH as
//! well (`refit_measured`: its boxes, its SAH cost and its degenerate check) took about half of
//! the `fit` stage, for a tree the rays do not walk (the README's A/B, `cpu-refit` 3 runs
//! alternated: `mesh-scaling` 641k's `fit` 7.6-8.0 ms with it, 3.9-4.1 without). So a `Refit`
//! frame leaves the LBVH of such a body behind:
//! - its root's box is set from the wide tree's root (the union of the same leaves' boxes, the
//!   box the LBVH's fit gives);
//! - its degradation is the wide tree's own: its SAH cost over its lanes now against its cost
//!   when it was collapsed (`WideTree::cost`, measured in the refit's pass);
//! - its degenerate triangles are checked by count: the live triangles, counted with the body
//!   boxes, against the tree's leaves, and only when some triangle of the body is degenerate,
//!   its leaves one by one;
//! - its other boxes are fitted ([`FrameData::fit_lagging`], the twin `cpu::fit`, from the
//!   triangle boxes of the positions the body was last brought to) before anything else reads
//!   them: an iterative pass, the intersection stages, a ray query or walk,
//!   `Scene::frame_data`, or a frame under another policy or with the wide trees off. In debug
//!   builds, reading such a tree ([`FrameData::body_nodes`]) asserts that it is not behind.
//!
//! `Auto` still measures the LBVHs on both backends (the GPU scene's mirror takes its decisions
//! on them), so its frames refit them as before.
//!
//! Under `Rebuild` a moving body whose LBVH would be collapsed gets its wide tree from its
//! sorted keys instead (`crate::wide_direct`), and no LBVH at all (`LbvhLag::unbuilt`): its
//! root's box is set from the wide tree's, and the rest is built ([`FrameData::build_unbuilt`],
//! `tree_build` from that rebuild's keys, which stay until the body is sorted again, and the
//! current triangle boxes) when anything but a full pass or an iterative pass's walks reads it:
//! the same readers as above, and a rebuild for the bodies it does not write.

use crate::bvh_update::{BvhUpdate, Quality, ratio, worst};
use crate::cpu;
use crate::frame::{FrameData, NOT_COUNTED};
use crate::layout::{BODY_STATIC, LEAF_BIT, Node};
use crate::packing::{Packing, has_moved};
use crate::tree_build;

use super::refit::Refitted;

impl FrameData {
    /// Marks in `lag.skip` the bodies whose LBVH this refit may leave behind: under `Refit`,
    /// with the wide trees on and built (`for_rays`: the CPU backend, not the GPU's mirror),
    /// those whose wide tree is collapsed from a binned-SAH tree (so it has lanes) and not
    /// static (the bodies whose wide trees are refitted on their own nodes when they move, and
    /// kept when they do not). Returns whether there is one.
    pub(super) fn plan_lag(&mut self, packing: &Packing, policy: BvhUpdate, for_rays: bool) -> bool {
        let bodies = packing.bodies.len();
        let lag = &mut self.lag;
        lag.behind.resize(bodies, false);
        lag.skip.clear();
        if policy != BvhUpdate::Refit || !for_rays || self.wide.off || self.wide.trees.len() != bodies {
            return false;
        }
        let skips = self.wide.trees.iter().zip(&packing.bodies);
        let skips =
            skips.map(|(t, body)| body.flags & BODY_STATIC == 0 && !t.sah.is_empty() && !t.nodes.is_empty());
        lag.skip.extend(skips);
        lag.skip.contains(&true)
    }

    /// Builds the binary trees not built and fits those left behind, with the twin `cpu::fit`:
    /// the boxes a refit at the bodies' current triangle boxes gives.
    pub(crate) fn fit_lagging(&mut self, packing: &Packing) {
        self.build_unbuilt(packing);
        self.fit_behind(packing, false);
    }

    /// Builds the binary trees that rebuilds did not build (`lag.unbuilt`): from the keys and
    /// values of that rebuild, which no frame has sorted again since (a frame that sorts a
    /// body's keys rebuilds its trees), and the current triangle boxes (a refit frame's, about
    /// to be fitted anyway, or the rebuild's own).
    pub(crate) fn build_unbuilt(&mut self, packing: &Packing) {
        if !self.lag.unbuilt.contains(&true) {
            return;
        }
        // Their measures are of no tree (a rebuild forgot them): nothing to forget.
        let (keys, values, boxes) = (&self.keys, &self.values, &self.tri_boxes);
        let (nodes, parents, unbuilt) = (&mut self.nodes, &mut self.parents, &self.lag.unbuilt);
        tree_build::build_trees(packing, &self.body_state, keys, values, boxes, nodes, parents, unbuilt);
        self.lag.unbuilt.fill(false);
    }

    /// Fits the binary trees left behind, but with `keep` those this frame leaves behind again
    /// (`lag.skip`).
    pub(super) fn fit_behind(&mut self, packing: &Packing, keep: bool) {
        let lag = &mut self.lag;
        if !lag.any_behind() {
            return;
        }
        lag.fit.clear();
        let skip = |b: usize| keep && lag.skip.get(b) == Some(&true);
        lag.fit.extend(lag.behind.iter().enumerate().map(|(b, &behind)| behind && !skip(b)));
        if lag.fit.contains(&true) {
            // (No measure to forget: a tree behind is a skipped body's, whose measure
            // `refit_measured` does not keep.)
            cpu::fit(packing, &self.body_state, &self.tri_boxes, &mut self.nodes, &lag.fit);
        }
        for (behind, &fitted) in lag.behind.iter_mut().zip(&lag.fit) {
            *behind &= !fitted;
        }
    }

    /// After the wide trees' refit of a frame that leaves trees behind ([`Self::plan_lag`]):
    /// each skipped body that `moved` is behind, its root's box its wide tree's. Returns the
    /// frame's degradation (the skipped bodies' wide trees' costs against their costs when
    /// collapsed, the others' `fitted` costs against `quality`) and whether some skipped body's
    /// degenerate triangles are not its tree's (the others' are `fitted.leaves_match`).
    pub(super) fn settle_lag(
        &mut self,
        packing: &Packing,
        moved: &[bool],
        fitted: &Refitted,
        quality: &Quality,
    ) -> (f32, bool) {
        let mut changed = false;
        for (b, body) in packing.bodies.iter().enumerate() {
            if self.lag.skip[b] {
                let off = body.node_offset as usize;
                // A skipped tree has lanes (`plan_lag`).
                if let (true, Some((lo, hi))) = (has_moved(moved, b), self.wide.trees[b].root_box()) {
                    let root = &mut self.nodes[off];
                    (root.min, root.max) = (lo, hi);
                    self.lag.behind[b] = true;
                    // (Its measure is already forgotten: `refit_measured` keeps none of a
                    // skipped body.)
                }
                changed |= !self.leaves_live(packing, b);
            }
        }
        let trees = &self.wide.trees;
        let skip = &self.lag.skip;
        let body_ratio = |b: usize| {
            if skip[b] {
                ratio(trees[b].cost, trees[b].collapse_cost)
            } else {
                quality.ratio(b, fitted.costs[b])
            }
        };
        (worst((0..packing.bodies.len()).map(body_ratio)), changed)
    }

    /// Whether packed body `b`'s tree holds exactly its live triangles (as `refit_measured`
    /// checks it): as many live triangles as leaves, and when some triangle is degenerate,
    /// every leaf live.
    fn leaves_live(&self, packing: &Packing, b: usize) -> bool {
        let body = &packing.bodies[b];
        let boxes = &self.tri_boxes[body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize];
        let live = |t: u32| boxes[t as usize].flags & 1 == 0;
        let n = self.body_state[b].leaf_count;
        let counted = match self.lag.live.get(b) {
            Some(&c) if c != NOT_COUNTED => c,
            _ => (0..body.tri_count).filter(|&t| live(t)).count() as u32,
        };
        if counted != n {
            return false;
        }
        if counted == body.tri_count {
            return true;
        }
        // A tree's leaves follow its `n - 1` internal nodes.
        let off = body.node_offset as usize + (n as usize).saturating_sub(1);
        let leaves: &[Node] = &self.nodes[off..off + n as usize];
        leaves.iter().all(|l| live(l.child & !LEAF_BIT))
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use crate::{BodyId, BodyKind, BvhAction, BvhUpdate, Pairs, Scene, meshes};

    /// A torus, a ball of `ball` kind and a static box, added to `s`: the meshes and the ids.
    fn three_bodies(s: &mut Scene, ball: BodyKind) -> ([meshes::TriMesh; 2], [BodyId; 3]) {
        let torus = meshes::torus(1.0, 0.35, 48, 24);
        let sphere = meshes::icosphere(0.6, 3);
        let ground = meshes::cuboid(Vec3::new(3.0, 0.2, 3.0), 4);
        let ids = [
            s.add_body(&torus.positions, &torus.triangles, BodyKind::Volumetric).unwrap(),
            s.add_body(&sphere.positions, &sphere.triangles, ball).unwrap(),
            s.add_body(&ground.positions, &ground.triangles, BodyKind::Volumetric).unwrap(),
        ];
        s.set_static(ids[2], true).unwrap();
        ([torus, sphere], ids)
    }

    /// Checks that the torus's root box, before the frame is read, is the body box over the
    /// same leaves (what its LBVH's fit or build gives), then reads the frame, which leaves no
    /// binary tree behind or unbuilt.
    fn root_then_read(s: &mut Scene, frame: usize) -> crate::internals::FrameData {
        let f = s.cpu_frame().unwrap();
        let (lo, hi) = f.body_state[0].bounds().unwrap();
        let root = f.lbvh_for_wide_walk(s.packing(), 0)[0];
        assert_eq!((root.min, root.max), (lo, hi), "frame {frame}: the torus's root");
        let read = s.frame_data().unwrap();
        assert!(!s.cpu_frame().unwrap().lag.any_behind(), "frame {frame}: every tree read");
        read
    }

    #[test]
    fn a_refit_frame_leaves_the_moving_bodies_lbvhs_behind_and_fits_them_when_read() {
        // A torus (moving every frame), a ball (every other frame) and a static box.
        let mut s = Scene::new_cpu(Some(2)).unwrap();
        // The binned-SAH trees, whose LBVHs are left behind, made in the first frame.
        s.set_background_trees(false);
        s.set_bvh_update(BvhUpdate::Refit).unwrap();
        let ([torus, ball], ids) = three_bodies(&mut s, BodyKind::Cloth { half_thickness: 0.01 });
        for frame in 0..4 {
            let k = frame as f32 * 0.05;
            let swell = |p: &Vec3| *p * (1.0 + k * p.y.sin()) + Vec3::new(0.0, 0.9, 0.0);
            s.set_positions(ids[0], &torus.positions.iter().map(swell).collect::<Vec<_>>()).unwrap();
            if frame % 2 == 1 {
                let p: Vec<Vec3> = ball.positions.iter().map(|p| *p + Vec3::splat(0.01 * k)).collect();
                s.set_positions(ids[1], &p).unwrap();
            }
            s.detect(Pairs::Overlapping).unwrap();
            let f = s.cpu_frame().unwrap();
            // Frame 0 rebuilds; then the torus moves every frame, the ball in frames 1 and 3
            // (its tree fitted when the last frame was read), and the static ground never.
            let want = [frame > 0, frame % 2 == 1, false];
            let behind = [0, 1, 2].map(|b| f.lag.behind.get(b) == Some(&true));
            assert_eq!(behind, want, "frame {frame}");
            // Reading the frame fits them.
            let read = root_then_read(&mut s, frame);
            let mut fitted = read.clone();
            crate::cpu::fit(s.packing(), &read.body_state, &read.tri_boxes, &mut fitted.nodes, &[]);
            assert!(read.nodes == fitted.nodes, "frame {frame}: the trees read are fitted");
        }
    }

    #[test]
    fn a_rebuild_builds_a_moving_bodys_lbvh_only_when_read() {
        // A torus moving every frame, a ball moving every other frame, a static box; under
        // `Rebuild`, then `Refit` from frame 4 (whose first frame refits the LBVHs not built).
        let mut s = Scene::new_cpu(Some(2)).unwrap();
        s.set_background_trees(false);
        let ([torus, ball], ids) = three_bodies(&mut s, BodyKind::Volumetric);
        // The same bodies, their trees the kernels' twins' (no wide trees).
        let mut reference = Scene::new_cpu(Some(2)).unwrap();
        reference.set_wide_bvh(false);
        let (_, reference_ids) = three_bodies(&mut reference, BodyKind::Volumetric);
        assert_eq!(reference_ids, ids);
        for frame in 0..7 {
            if frame == 4 {
                s.set_bvh_update(BvhUpdate::Refit).unwrap();
            }
            let k = frame as f32 * 0.05;
            let swell: Vec<Vec3> = torus
                .positions
                .iter()
                .map(|p| *p * (1.0 + k * p.y.sin()) + Vec3::new(0.0, 0.9, 0.0))
                .collect();
            let lift: Vec<Vec3> =
                ball.positions.iter().map(|p| *p + Vec3::new(0.3, 0.7 + 0.01 * k, 0.0)).collect();
            for (scene, ids) in [(&mut s, ids), (&mut reference, ids)] {
                scene.set_positions(ids[0], &swell).unwrap();
                if frame % 2 == 0 {
                    scene.set_positions(ids[1], &lift).unwrap();
                }
            }
            let found = s.detect(Pairs::Overlapping).unwrap();
            let want = reference.detect(Pairs::Overlapping).unwrap();
            assert_eq!(found.contacts, want.contacts, "frame {frame}: the binary trees' contacts");
            let f = s.cpu_frame().unwrap();
            // Under `Rebuild` the moving bodies' LBVHs are not built (the ball's in the frames
            // it moves), the static box's is (its binned-SAH tree is made from it); under
            // `Refit` every LBVH is.
            let rebuild = frame < 4;
            let want = [rebuild, rebuild && frame % 2 == 0, false];
            let unbuilt = [0, 1, 2].map(|b| f.lag.unbuilt.get(b) == Some(&true));
            assert_eq!(unbuilt, want, "frame {frame}");
            // Reading the frame builds them: the trees of the kernels' twins, rebuilt (the
            // first `Refit` frame rebuilds), then refitted.
            let read = root_then_read(&mut s, frame);
            if frame <= 4 {
                let twins = reference.frame_data().unwrap();
                assert!(read.nodes == twins.nodes, "frame {frame}: the trees read are the twins'");
            } else {
                let mut fitted = read.clone();
                crate::cpu::fit(s.packing(), &read.body_state, &read.tri_boxes, &mut fitted.nodes, &[]);
                assert!(read.nodes == fitted.nodes, "frame {frame}: the trees read are fitted");
            }
        }
    }

    #[test]
    fn a_tree_left_behind_reports_a_degenerate_triangle_swapped_for_another() {
        // A sheet whose triangle 5 starts flat; then it opens while another one, away from it,
        // goes flat: as many live triangles as leaves, but not the same ones.
        let mut m = meshes::grid_sheet(1.0, 1.0, 6, 6);
        let flatten = |p: &mut Vec<Vec3>, t: [u32; 3]| {
            p[t[2] as usize] = (p[t[0] as usize] + p[t[1] as usize]) * 0.5;
        };
        let (first, second) = (m.triangles[5], m.triangles[60]);
        assert!(first.iter().all(|v| !second.contains(v)), "the triangles share no vertex");
        let open = m.positions.clone();
        flatten(&mut m.positions, first);
        for policy in [BvhUpdate::Refit, BvhUpdate::auto()] {
            let mut s = Scene::new_cpu(Some(2)).unwrap();
            // The binned-SAH tree, whose LBVH is left behind, made in the first frame.
            s.set_background_trees(false);
            s.set_bvh_update(policy).unwrap();
            let id =
                s.add_body(&m.positions, &m.triangles, BodyKind::Cloth { half_thickness: 0.01 }).unwrap();
            let st = s.update().unwrap();
            assert_eq!((st.bvh.action, s.body_state(id).unwrap().degenerate_count), (BvhAction::Rebuilt, 1));
            let mut p = open.clone();
            flatten(&mut p, second);
            s.set_positions(id, &p).unwrap();
            let st = s.update().unwrap();
            assert!(st.bvh.degenerate_changed, "{policy:?}");
            let f = s.cpu_frame().unwrap();
            if policy == BvhUpdate::Refit {
                assert_eq!(f.lag.live[0], f.body_state[0].leaf_count, "the same count");
                assert!(f.lag.behind[0], "left behind");
                assert_eq!(st.bvh.action, BvhAction::Refitted);
            } else {
                assert_eq!(st.bvh.action, BvhAction::Rebuilt);
            }
        }
    }
}
