//! The build from the sorted keys (`super`) of a large body on every thread of the current
//! rayon pool: the serial build's wide nodes, numbered otherwise. What the CPU backend's
//! rebuild makes of a large moving body alone in its build
//! ([`WideTree::builds_from_keys_in_parallel`], beside the collapse's rule), where it built the
//! body's LBVH and collapsed it on every thread.
//!
//! The top is the wide nodes whose range holds more than a grain of leaves; each of their lanes
//! of at most a grain (and more than one leaf) is a part. First, serially, the top is walked
//! depth first (its lanes chosen as the serial build chooses them, [`lanes_of`]) to list the
//! parts. Each part is then built by the serial build ([`Build`]) on any thread, into vectors
//! of its own kept from frame to frame ([`KeyPart`]), its nodes numbered from 0. The tree's
//! vectors hold the top's nodes (numbered in the order the walk meets them, the root first)
//! and after them each part's, in the order of the parts, renumbered as they are copied (on
//! every thread). Last, the same walk again writes the top's nodes, bottom up from their
//! lanes' boxes (a part's as its build returned it). Every node is the serial build's: the same
//! lanes, boxes and binary nodes; and the records are the same (leaf `j`'s in record `j`).

use glam::{Vec3, Vec3A};
use rayon::prelude::*;

use super::{Build, Lanes, Range, SortedLeaves, assemble, lanes_of};
use crate::layout::{LEAF_BIT, NONE};
use crate::wide_bvh::{BodyTree, KeyPart, WIDTH, WideNode, WideTree};

/// Parts a thread gets, about: enough for the threads to share out parts of uneven sizes.
const PARTS_PER_THREAD: usize = 8;

/// The fewest leaves of a grain (a shorter part is not worth its task).
const MIN_GRAIN: u32 = 1024;

/// The walk of the top: the sorted keys, the grain, and the top nodes and parts met so far.
struct Top<'a> {
    keys: &'a [u32],
    grain: u32,
    nodes: usize,
    parts: usize,
}

impl Top<'_> {
    /// Whether a lane of range `r` (more than one leaf) is a top node, not a part.
    fn is_top(&self, r: Range) -> bool {
        r.l - r.f >= self.grain
    }

    /// The lanes of the top node of range `r`.
    fn lanes(&self, r: Range) -> Lanes {
        let mut lanes = Lanes { f: [0; WIDTH], l: [0; WIDTH], left: [false; WIDTH], count: 0 };
        lanes_of(self.keys, r, &mut lanes);
        lanes
    }

    /// Lists the parts below the top node of range `r` in `parts` (growing it when it is
    /// short), depth first, counting the top nodes.
    fn list(&mut self, r: Range, parts: &mut Vec<KeyPart>) {
        self.nodes += 1;
        let lanes = self.lanes(r);
        for i in 0..lanes.count {
            let lane = lanes.get(i);
            if lane.f == lane.l {
                continue;
            }
            if self.is_top(lane) {
                self.list(lane, parts);
                continue;
            }
            if self.parts == parts.len() {
                parts.push(KeyPart::default());
            }
            let part = &mut parts[self.parts];
            (part.first, part.last, part.left) = (lane.f, lane.l, lane.left);
            self.parts += 1;
        }
    }

    /// Writes the top node of range `r` at `at` and, depth first, the top nodes below it
    /// (numbered and their parts met as [`Self::list`] met them, once the parts are built and
    /// placed); returns its box.
    fn write(&mut self, r: Range, at: usize, build: &mut Build<'_, '_>, parts: &[KeyPart]) -> (Vec3A, Vec3A) {
        let internal = self.keys.len() as u32 - 1;
        let lanes = self.lanes(r);
        let (node, source, bounds) = assemble(&lanes, internal, |lane| {
            if lane.f == lane.l {
                (LEAF_BIT | lane.f, build.leaf_box(lane.f))
            } else if self.is_top(lane) {
                let c = self.nodes;
                self.nodes += 1;
                (c as u32, self.write(lane, c, build, parts))
            } else {
                let part = &parts[self.parts];
                self.parts += 1;
                (part.base, part.bounds)
            }
        });
        build.nodes[at] = node;
        build.source[at] = source;
        bounds
    }
}

impl WideTree {
    /// [`Self::build_from_keys`] on every thread of the current rayon pool (the module's doc
    /// says how): the same wide nodes, but for their numbering, and the same records.
    pub fn build_from_keys_parallel(
        &mut self,
        leaves: SortedLeaves<'_>,
        body: BodyTree<'_>,
    ) -> Option<(Vec3, Vec3)> {
        let n = leaves.keys.len();
        debug_assert_eq!(n, body.leaves as usize, "a key per leaf");
        let threads = rayon::current_num_threads();
        let grain = (n / (PARTS_PER_THREAD * threads)).max(MIN_GRAIN as usize) as u32;
        let mut top = Top { keys: leaves.keys, grain, nodes: 0, parts: 0 };
        let whole = Range { f: 0, l: n.saturating_sub(1) as u32, left: false };
        if !top.is_top(whole) {
            // No top (nor a root, under two leaves): one part, the serial build.
            return self.build_from_keys(leaves, body);
        }
        // A root: more than a grain of leaves.
        let _ = self.start_over_in_place(n as u32);
        let (keys, values, tri_boxes) = (leaves.keys, leaves.values, leaves.tri_boxes);
        let mut parts = std::mem::take(&mut self.scratch.parts);
        top.list(whole, &mut parts);
        let parts_used = &mut parts[..top.parts];

        // The parts, each on its own.
        parts_used.par_iter_mut().with_max_len(1).for_each(|part| {
            let (nodes, source) = (&mut part.nodes, &mut part.source);
            let mut build = Build { keys, values, tri_boxes, nodes, source, next: 0 };
            part.bounds = build.subtree(Range { f: part.first, l: part.last, left: part.left });
        });

        // Their nodes after the top's, renumbered.
        let mut at = top.nodes;
        for part in parts_used.iter_mut() {
            part.base = at as u32;
            at += part.nodes.len();
        }
        self.nodes.resize(at, WideNode::default());
        self.source.resize(at, [NONE; WIDTH]);
        copy_parts(parts_used, &mut self.nodes[top.nodes..], &mut self.source[top.nodes..]);

        // The top's nodes, met again in the same order.
        let (nodes, source) = (&mut self.nodes, &mut self.source);
        let mut build = Build { keys, values, tri_boxes, nodes, source, next: 0 };
        (top.nodes, top.parts) = (1, 0);
        let (lo, hi) = top.write(whole, 0, &mut build, parts_used);
        self.scratch.parts = parts;
        self.fill_in_leaf_order(leaves, body);
        Some((lo.into(), hi.into()))
    }
}

/// Copies the nodes of `parts` one after another into `nodes` and their lanes' binary nodes
/// into `source`, each inner lane's child moved by its part's base, on every thread (halving the
/// parts: no task on the heap).
fn copy_parts(parts: &[KeyPart], nodes: &mut [WideNode], source: &mut [[u32; WIDTH]]) {
    match parts {
        [] => {}
        [part] => {
            let to = nodes.iter_mut().zip(source.iter_mut());
            for ((node, lanes), (from, from_lanes)) in to.zip(part.nodes.iter().zip(&part.source)) {
                *node = *from;
                for i in 0..node.count as usize {
                    if node.leaves >> i & 1 == 0 {
                        node.child[i] += part.base;
                    }
                }
                *lanes = *from_lanes;
            }
        }
        _ => {
            let half = parts.len() / 2;
            let before: usize = parts[..half].iter().map(|p| p.nodes.len()).sum();
            let (nodes_l, nodes_r) = nodes.split_at_mut(before);
            let (source_l, source_r) = source.split_at_mut(before);
            rayon::join(
                || copy_parts(&parts[..half], nodes_l, source_l),
                || copy_parts(&parts[half..], nodes_r, source_r),
            );
        }
    }
}
