//! The CPU backend's refit of its binary trees, measured on the way ([`refit_measured`]): the
//! boxes of [`cpu::fit`](crate::cpu::fit) (the twin of `fit.wgsl`), each tree's
//! [`sah_cost`] for `Auto` and whether its leaves are still the live triangles, in one pass
//! over each tree instead of three (but for the trees a `Refit` frame leaves behind:
//! `super::lag`).

use glam::Vec3;
use rayon::prelude::*;

use crate::bvh_update::{DEPTH_FIRST_NODES, PARALLEL_DEPTH, cost, half_area, sah_cost};
use crate::frame::{TreeMeasure, used_nodes};
use crate::layout::{BodyGpu, BodyState, LEAF_BIT, Node, TriBox};
use crate::packing::{Packing, has_moved};
use crate::prefetch::prefetch;

/// How many leaves ahead the refit asks for a leaf's triangle box.
const LEAF_AHEAD: usize = 16;

thread_local! {
    /// The serial walk's stack of subtree sums, kept per worker thread from frame to frame (a
    /// frame refits hundreds of subtrees: no allocation each).
    static SUMS: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What a measured refit found ([`refit_measured`]).
pub(crate) struct Refitted {
    /// Each packed body's [`sah_cost`] after the refit (NaN for a body left out).
    pub costs: Vec<f64>,
    /// Whether every body's tree (but those left out) holds exactly its triangles that are not
    /// degenerate now.
    pub leaves_match: bool,
}

/// The CPU backend's refit: the boxes of the trees of the bodies that `moved` marks (empty:
/// every body), equal bit for bit to [`cpu::fit`](crate::cpu::fit)'s (the same leaf boxes, and
/// the same minima and maxima of the same children in the same order), measured on the way:
/// each tree's [`sah_cost`] (its areas summed as `sah_cost` sums them) and whether its leaves
/// are all non-degenerate. One pass over each tree instead of three (fit, leaves, cost), and one
/// without `cpu::fit`'s walk from the root, a chain of loads each waiting for the one before:
/// the leaves are taken in order, each followed up through its `parents` while it completes a
/// subtree (the last leaf of the right child of its parent), so the loads of successive leaves
/// overlap. The other bodies, whose trees and triangle boxes are last frame's, are measured by
/// reading them, unless `measured` holds their measure (what this function last found for a
/// tree nothing has written since: `LbvhLag::measured`); but those that `skip` marks (empty:
/// none) are neither fitted nor measured. Leaves in `measured` each body's measure (`None` for
/// one skipped).
pub(crate) fn refit_measured(
    packing: &Packing,
    body_state: &[BodyState],
    tri_boxes: &[TriBox],
    nodes: &mut [Node],
    parents: &[u32],
    (moved, skip): (&[bool], &[bool]),
    measured: &mut Vec<Option<TreeMeasure>>,
) -> Refitted {
    let used = |body: &BodyGpu, b: usize| (body.node_offset as usize, used_nodes(body_state[b].leaf_count));
    let trees = packing.split_per_body(nodes, used);
    let bodies = packing.bodies.par_iter().zip(body_state).zip(trees).enumerate();
    let known = &*measured;
    let now: Vec<TreeMeasure> = bodies
        .map(|(b, ((body, state), tree))| {
            let n = state.leaf_count as usize;
            let boxes = &tri_boxes[body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize];
            let live = |b: &TriBox| b.flags & 1 == 0;
            if skip.get(b) == Some(&true) {
                return (f64::NAN, true);
            }
            if let (false, Some(&Some(m))) = (has_moved(moved, b), known.get(b)) {
                return m;
            }
            let (cost, leaves_live) = if !has_moved(moved, b) {
                let leaves = &tree[n.saturating_sub(1)..];
                (sah_cost(tree), leaves.iter().all(|l| live(&boxes[(l.child & !LEAF_BIT) as usize])))
            } else if n < 2 {
                // The root is the leaf, if any.
                let mut all = true;
                for leaf in tree.iter_mut() {
                    all &= Fit::leaf(boxes, leaf).3;
                }
                (sah_cost(tree), all)
            } else {
                let (start, len) = used(body, b);
                let fit = Fit { boxes, parents: &parents[start..start + len], n_internal: n - 1 };
                let (internal, leaves) = tree.split_at_mut(n - 1);
                let (_, _, sum, all) = fit.node(internal, leaves, 0, 0, n - 1, 0);
                // Fitted in cache: a small tree is summed node by node, as `sah_cost` does.
                let cost = if tree.len() < DEPTH_FIRST_NODES { sah_cost(tree) } else { cost(tree, sum) };
                (cost, all)
            };
            // The leaves are distinct triangles (a rebuild's, each once), so when every one is
            // live and they are all the body's triangles, they are exactly the live ones.
            let matches = leaves_live && (boxes.len() == n || boxes.iter().filter(|b| live(b)).count() == n);
            (cost, matches)
        })
        .collect();
    measured.clear();
    measured.extend(now.iter().enumerate().map(|(b, &m)| (skip.get(b) != Some(&true)).then_some(m)));
    let leaves_match = now.iter().all(|&(_, m)| m);
    Refitted { costs: now.into_iter().map(|(c, _)| c).collect(), leaves_match }
}

/// A node's box, the sum of its subtree's areas (as [`sah_cost`] adds them) and whether its
/// leaves are all non-degenerate.
type Fitted = (Vec3, Vec3, f64, bool);

/// One body's tree to refit: its triangles' boxes, its parent links (the last rebuild's: a refit
/// keeps the links) and its number of internal nodes.
struct Fit<'a> {
    /// The body's triangle boxes.
    boxes: &'a [TriBox],
    /// The parent of each node (body-local).
    parents: &'a [u32],
    /// The tree's internal nodes.
    n_internal: usize,
}

impl Fit<'_> {
    /// Fits a leaf: its triangle's box, as `cpu::fit` sets it.
    #[inline]
    fn leaf(boxes: &[TriBox], leaf: &mut Node) -> Fitted {
        let t = boxes[(leaf.child & !LEAF_BIT) as usize];
        (leaf.min, leaf.max) = (t.min, t.max);
        (t.min, t.max, half_area(leaf), t.flags & 1 == 0)
    }

    /// Fits internal node `node`, of leaf range `[f, l]`, and its subtree. `window` and `leaves`
    /// hold the internal nodes and the leaves `f..` (in a Karras tree the internal nodes of a
    /// subtree have indices within its leaf range, so the two children's windows `[f, g]` and
    /// `[g + 1, l]` are disjoint and are fitted in parallel near the root of a large tree, as
    /// `cpu::fit` does).
    fn node(
        &self,
        window: &mut [Node],
        leaves: &mut [Node],
        f: usize,
        node: usize,
        l: usize,
        depth: u32,
    ) -> Fitted {
        if depth >= PARALLEL_DEPTH || window.len() < 4096 {
            return self.serial(window, leaves, f, node, l);
        }
        let n_internal = self.n_internal;
        let left = window[node - f].child as usize;
        let right =
            if left >= n_internal { leaves[left - n_internal - f].escape } else { window[left - f].escape }
                as usize;
        // First leaf of the right child (g + 1): an internal right child has index g + 1.
        let split = if right >= n_internal { right - n_internal } else { right };
        let (lw, rw) = window.split_at_mut((split - f).min(window.len()));
        let (ll, rl) = leaves.split_at_mut(split - f);
        let sub = |w: &mut [Node], lv: &mut [Node], first: usize, c: usize, last: usize| {
            if c >= n_internal {
                Fit::leaf(self.boxes, &mut lv[c - n_internal - first])
            } else {
                self.node(w, lv, first, c, last, depth + 1)
            }
        };
        let (lb, rb) = rayon::join(|| sub(lw, ll, f, left, split - 1), || sub(rw, rl, split, right, l));
        // `+ 0.0` turns -0 into +0 and leaves every other value as it is (as `cpu::fit`).
        let (lo, hi) = (lb.0.min(rb.0) + Vec3::ZERO, lb.1.max(rb.1) + Vec3::ZERO);
        let me = &mut window[node - f];
        (me.min, me.max) = (lo, hi);
        (lo, hi, lb.2 + rb.2 + half_area(me), lb.3 && rb.3)
    }

    /// [`Self::node`] on one thread: the leaves `f..=l` in order, each followed up while it
    /// completes a subtree (while it is a right child: the subtree of a node ends with the last
    /// leaf of its right child), which is then fitted from its left child's box, fitted before,
    /// and the box just computed: each node after its children, every node once. The subtrees'
    /// sums wait on a stack (a node's are its two children's, the right one on top), its top in
    /// a register (`top`: the sum just made is the next one read, and a load of the value just
    /// stored would wait for the store on the walk's critical path).
    fn serial(&self, window: &mut [Node], leaves: &mut [Node], f: usize, root: usize, l: usize) -> Fitted {
        let n_internal = self.n_internal;
        let mut sums = SUMS.with(|s| std::mem::take(&mut *s.borrow_mut()));
        sums.clear();
        let (mut all, mut top) = (true, 0.0);
        for j in f..=l {
            // The leaves come in order: ask for the triangle box of the one LEAF_AHEAD later.
            if let Some(ahead) = leaves.get(j - f + LEAF_AHEAD) {
                prefetch(self.boxes, (ahead.child & !LEAF_BIT) as usize);
            }
            let (mut lo, mut hi, area, live) = Fit::leaf(self.boxes, &mut leaves[j - f]);
            all &= live;
            if j > f {
                sums.push(top);
            }
            top = area;
            let mut x = n_internal + j;
            while x != root {
                let p = self.parents[x] as usize;
                let left = window[p - f].child as usize;
                if left == x {
                    break;
                }
                let lb = if left >= n_internal { &leaves[left - n_internal - f] } else { &window[left - f] };
                // `+ 0.0` turns -0 into +0 and leaves every other value as it is (as `cpu::fit`).
                (lo, hi) = (lb.min.min(lo) + Vec3::ZERO, lb.max.max(hi) + Vec3::ZERO);
                let me = &mut window[p - f];
                (me.min, me.max) = (lo, hi);
                let left = sums.pop().expect("the left child's sum");
                top = left + top + half_area(me);
                x = p;
            }
        }
        let me = &window[root - f];
        SUMS.with(|s| *s.borrow_mut() = sums);
        (me.min, me.max, top, all)
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;
    use crate::bvh_update::sah_costs;
    use crate::{BodyKind, BvhUpdate, Pairs, Scene, cpu, meshes};

    /// What the backend checked before `refit_measured`: every body's leaves are all
    /// non-degenerate and as many as its non-degenerate triangles.
    fn leaves_match(packing: &Packing, state: &[BodyState], tri_boxes: &[TriBox], nodes: &[Node]) -> bool {
        packing.bodies.iter().zip(state).all(|(body, state)| {
            let boxes = &tri_boxes[body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize];
            let live = boxes.iter().filter(|b| b.flags & 1 == 0).count();
            let n = state.leaf_count as usize;
            let off = body.node_offset as usize;
            let leaves = &nodes[off..off + used_nodes(state.leaf_count)][n.saturating_sub(1)..];
            live == n && leaves.iter().all(|l| boxes[(l.child & !LEAF_BIT) as usize].flags & 1 == 0)
        })
    }

    #[test]
    fn a_measure_kept_for_a_body_that_did_not_move_is_its_trees_measure() {
        // A static box (measured once, then kept), a torus that moves, rests (its refitted tree
        // measured, then rebuilt while at rest) and moves again, and a sheet with a degenerate
        // triangle that moves every other frame; under `Refit` (the torus's LBVH left behind),
        // `Auto` (at 1.001, rebuilding whenever a refit degrades a tree, and at 100, refitting)
        // and `Rebuild`, with the frame read now and then (which fits the trees left behind).
        let torus = meshes::torus(1.0, 0.35, 64, 24);
        let ground = meshes::cuboid(Vec3::new(3.0, 0.2, 3.0), 6);
        let mut sheet = meshes::grid_sheet(1.0, 1.0, 8, 8);
        sheet.positions[1] = sheet.positions[0];
        let mut s = Scene::new_cpu(Some(2)).unwrap();
        s.set_background_trees(false);
        let ids = [
            s.add_body(&torus.positions, &torus.triangles, BodyKind::Volumetric).unwrap(),
            s.add_body(&ground.positions, &ground.triangles, BodyKind::Volumetric).unwrap(),
            s.add_body(&sheet.positions, &sheet.triangles, BodyKind::Cloth { half_thickness: 0.01 }).unwrap(),
        ];
        s.set_static(ids[1], true).unwrap();
        let (lazy, eager) =
            (BvhUpdate::Auto { max_degradation: 100.0 }, BvhUpdate::Auto { max_degradation: 1.001 });
        let mut kept_ground = 0;
        for frame in 0..24 {
            let policy = match frame {
                0..8 => BvhUpdate::Refit,
                // The torus at rest (frames 8-13; the sheet moves in odd frames): its refitted
                // tree measured (frame 9), rebuilt (11) and measured again (13).
                8..11 | 12 | 13 => lazy,
                11 => BvhUpdate::Rebuild,
                _ => [BvhUpdate::Refit, eager, lazy][frame % 3],
            };
            s.set_bvh_update(policy).unwrap();
            let k = frame as f32 * 0.04;
            if !(8..14).contains(&frame) {
                let swell = |p: &Vec3| *p * (1.0 + k * p.y.sin()) + Vec3::new(0.0, 0.5, 0.0);
                s.set_positions(ids[0], &torus.positions.iter().map(swell).collect::<Vec<_>>()).unwrap();
            }
            if frame % 2 == 1 {
                let p: Vec<Vec3> = sheet.positions.iter().map(|p| *p + Vec3::splat(0.01 * k)).collect();
                s.set_positions(ids[2], &p).unwrap();
            }
            s.detect(Pairs::Overlapping).unwrap();
            if frame % 5 == 4 {
                s.frame_data().unwrap();
            }
            let f = s.cpu_frame().unwrap();
            let packing = s.packing();
            // The trees measured are fitted to the frame's triangle boxes (those built: a
            // `Rebuild` frame builds none for a moving body, `crate::wide_direct`, nor measures
            // it).
            let mut fitted = f.nodes.clone();
            let built: Vec<bool> = (0..3).map(|b| f.lag.unbuilt.get(b) != Some(&true)).collect();
            cpu::fit(packing, &f.body_state, &f.tri_boxes, &mut fitted, &built);
            for b in 0..3 {
                let Some(Some((cost, matches))) = f.lag.measured.get(b).copied() else { continue };
                assert!(f.lag.behind.get(b) != Some(&true), "frame {frame}: body {b} measured while behind");
                let tree = f.lbvh_for_wide_walk(packing, b);
                let off = packing.bodies[b].node_offset as usize;
                assert!(tree == &fitted[off..off + tree.len()], "frame {frame}: body {b}'s tree fitted");
                assert_eq!(cost.to_bits(), sah_cost(tree).to_bits(), "frame {frame}: body {b}'s cost");
                let body = &packing.bodies[b];
                let boxes =
                    &f.tri_boxes[body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize];
                let live = |t: u32| boxes[t as usize].flags & 1 == 0;
                let n = f.body_state[b].leaf_count as usize;
                let leaves = &tree[n.saturating_sub(1)..];
                let fresh = (0..body.tri_count).filter(|&t| live(t)).count() == n
                    && leaves.iter().all(|l| live(l.child & !LEAF_BIT));
                assert_eq!(matches, fresh, "frame {frame}: body {b}'s leaves");
                kept_ground += usize::from(b == 1);
            }
        }
        assert!(kept_ground > 10, "the ground's measure kept in {kept_ground} frames");
    }

    #[test]
    fn the_measured_refit_is_the_fit_and_its_measures_bit_for_bit() {
        // A torus large enough for the parallel walk and the depth-first sum, a small ball, and
        // a sheet built with two degenerate triangles (its tree holds fewer leaves than it has
        // triangles).
        let torus = meshes::torus(1.0, 0.3, 128, 48);
        let ball = meshes::icosphere(0.5, 2);
        let mut sheet = meshes::grid_sheet(1.0, 1.0, 4, 4);
        sheet.positions[1] = sheet.positions[0];
        let meshes = [&torus, &ball, &sheet];
        let mut scene = Scene::new_cpu(Some(2)).unwrap();
        for m in meshes {
            scene.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap();
        }
        scene.detect(Pairs::Overlapping).unwrap();
        let frame = scene.frame_data().unwrap();
        let packing = scene.packing().clone();
        let nudge = |i: usize, k: usize| ((i * 7919 + k * 104_729) % 17) as f32 * 1e-3 - 8e-3;
        for round in 0..6 {
            let mut positions = Vec::new();
            for (b, m) in meshes.into_iter().enumerate() {
                let at = positions.len();
                // The sheet moved whole, so that its collapsed triangles stay collapsed.
                let shift = |i: usize| Vec3::splat(nudge(if b == 2 { 0 } else { at + i }, round));
                positions.extend(m.positions.iter().enumerate().map(|(i, p)| *p + shift(i)));
            }
            match round {
                // The sheet's degenerate triangles made valid (live triangles the tree lacks).
                1 => positions[torus.positions.len() + ball.positions.len() + 1].x += 0.1,
                // A torus triangle made degenerate (a leaf not live).
                2 => positions[torus.triangles[5][1] as usize] = positions[torus.triangles[5][0] as usize],
                // Zeros of both signs, and a NaN (degenerate triangles: leaves not live).
                3 => {
                    for p in positions.iter_mut().step_by(3) {
                        p.x = if p.x < 0.0 { -0.0 } else { 0.0 };
                    }
                    positions[40].y = f32::NAN;
                }
                _ => {}
            }
            // Round 4 refits the torus alone, round 5 the others alone.
            let moved: &[bool] = match round {
                4 => &[true, false, false],
                5 => &[false, true, true],
                _ => &[],
            };
            let (mut tri_boxes, mut state) = (frame.tri_boxes.clone(), frame.body_state.clone());
            cpu::triangle_bounds(&packing, &positions, &mut tri_boxes, &mut state, moved);
            let mut want = frame.nodes.clone();
            cpu::fit(&packing, &state, &tri_boxes, &mut want, moved);
            let mut got = frame.nodes.clone();
            let r = refit_measured(
                &packing,
                &state,
                &tri_boxes,
                &mut got,
                &frame.parents,
                (moved, &[]),
                &mut vec![],
            );
            let words = |n: &[Node]| bytemuck::cast_slice::<Node, u32>(n).to_vec();
            assert!(words(&got) == words(&want), "round {round}: the nodes");
            let bits = |c: &[f64]| c.iter().map(|c| c.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&r.costs),
                bits(&sah_costs(&packing, &state, &want, &[])),
                "round {round}: costs"
            );
            let matches = leaves_match(&packing, &state, &tri_boxes, &want);
            assert_eq!(r.leaves_match, matches, "round {round}: leaves");
            assert_eq!(matches, ![1, 2, 3].contains(&round), "round {round}: what the round tests");
        }
    }
}
