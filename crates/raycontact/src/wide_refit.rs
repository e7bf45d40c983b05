//! The refit of a wide tree collapsed from a binned-SAH tree ([`WideTree::refit_sah`]: the
//! trees of `BvhUpdate::Refit` and of `Auto`'s refitting frames), and what its collapse
//! prepares for it ([`WideTree::prepare_refit`]): the records numbered in node order, and for
//! a large body the split of the refit into subtrees refitted in parallel
//! ([`RefitPlan`](crate::wide_bvh::RefitPlan)).
//!
//! Why the subtrees can be refitted apart: the serial collapse ([`WideTree::collapse`]) numbers
//! a node's children when it meets the node, from a stack, so every node met between a node
//! and the next one outside its subtree is numbered inside its subtree: the descendants of a
//! node are a range of node indices (starting at its first inner child), and their records,
//! numbered in node order, a range of records. A refit reads a node's children and writes the
//! node, so the descendants of different nodes of one depth are refitted at once, each range
//! from its last node, then the nodes above them (the plan's `top`), from the last.

use glam::{BVec4A, Vec3, Vec4, Vec4Swizzles};

use crate::layout::LEAF_BIT;
use crate::sah_tree::half_area;
use crate::wide_bvh::{TriRecord, WideNode, WideTree};

/// Trees of at least this many records are refitted in parallel (in a pool of several
/// threads): below it the refit takes well under a millisecond, about what the joins cost.
pub const PARALLEL_REFIT_RECORDS: usize = 16_384;

/// A parallel refit splits the tree at the first depth that has at least this many nodes (each
/// node's descendants one task): enough for rayon to even out subtrees of unequal size.
const TASKS: usize = 32;

impl WideTree {
    /// What a tree collapsed from a binned-SAH tree needs for its refits: its records numbered
    /// in the order of the wide nodes and lanes that hold them (a node's records are numbered
    /// when the collapse meets it, its index when it meets its parent: two different orders),
    /// so that [`Self::refit_sah`], which walks the nodes from the last, reads the records
    /// from the last too; and, for a tree of at least [`PARALLEL_REFIT_RECORDS`] records, its
    /// [`RefitPlan`](crate::wide_bvh::RefitPlan).
    pub(crate) fn prepare_refit(&mut self) {
        let mut tris = std::mem::take(&mut self.scratch.tris);
        tris.clear();
        for n in &mut self.nodes {
            let mut leaves = n.leaves;
            while leaves != 0 {
                let i = leaves.trailing_zeros() as usize;
                leaves &= leaves - 1;
                let r = n.child[i] & !LEAF_BIT;
                n.child[i] = LEAF_BIT | tris.len() as u32;
                tris.push(self.tris[r as usize]);
            }
        }
        std::mem::swap(&mut self.tris, &mut tris);
        self.scratch.tris = tris;
        self.plan_refit();
    }

    /// The [`RefitPlan`](crate::wide_bvh::RefitPlan) of this tree (its records in node
    /// order): empty below [`PARALLEL_REFIT_RECORDS`] records; else a task per node of the
    /// first depth of at least [`TASKS`] nodes (the deepest there is when none has), its
    /// descendants.
    fn plan_refit(&mut self) {
        let plan = &mut self.refit_plan;
        plan.clear();
        if self.tris.len() < PARALLEL_REFIT_RECORDS || self.nodes.is_empty() {
            return;
        }
        // Per node counts, in the parallel collapse's scratch vectors (rewritten by each use).
        let (mut below, mut first_record) =
            (std::mem::take(&mut self.scratch.used), std::mem::take(&mut self.scratch.rank));
        let nodes = &self.nodes;
        let inner = |w: u32| {
            let n = &nodes[w as usize];
            (0..n.count as usize).filter(move |&i| n.leaves >> i & 1 == 0).map(move |i| n.child[i])
        };
        // Depth by depth from the root, the nodes above the split into `top`.
        let mut level = vec![0u32];
        loop {
            let next: Vec<u32> = level.iter().flat_map(|&w| inner(w)).collect();
            if level.len() >= TASKS || next.is_empty() {
                break;
            }
            plan.top.append(&mut level);
            level = next;
        }
        // Descendants and records before each node: a node's descendants follow its first
        // inner child, and its records those of the nodes before it.
        below.clear();
        below.resize(nodes.len(), 0);
        for w in (0..nodes.len()).rev() {
            below[w] = inner(w as u32).map(|c| 1 + below[c as usize]).sum();
        }
        first_record.clear();
        let mut records = 0;
        for n in nodes {
            first_record.push(records);
            records += n.leaves.count_ones();
        }
        first_record.push(records);
        for &c in &level {
            plan.top.push(c);
            if let Some(start) = inner(c).min() {
                let end = start + below[c as usize];
                plan.tasks.push([start, end, first_record[start as usize], first_record[end as usize]]);
            }
        }
        plan.tasks.sort_unstable();
        plan.top.sort_unstable_by(|a, b| b.cmp(a));
        (self.scratch.used, self.scratch.rank) = (below, first_record);
    }

    /// Refits a tree collapsed from a binned-SAH tree (the serial collapse's numbering: a wide
    /// node's children come after it; its records in node order, as [`Self::collapse_sah`]
    /// numbers them) to this frame's `positions`, in one pass over the wide nodes from the last:
    /// a leaf lane's record takes this frame's corners and the lane their box
    /// (`min(min(a, b), c)` and the same for the maximum, the triangle's box as
    /// [`cpu::triangle_box`](crate::cpu::triangle_box) computes it: the same floats), an inner
    /// lane the union of its child node's lanes (fitted before it), `+ 0.0` turning -0 into +0
    /// (as the LBVH's refit). So each lane holds the box that the SAH tree's node it names would
    /// have refitted, the same floats but NaN, and the SAH tree itself ([`Self::sah`]) is not
    /// refitted: its boxes stay those of the collapse, its shape is what the tree keeps. One pass
    /// instead of three (the SAH tree's refit, the lanes copied from it, the records refilled):
    /// on `mesh-scaling` 159k (two bodies of 79.5k triangles, one a thread) those took
    /// 0.94–1.00, 1.11–1.43 and 1.10–1.34 ms a body. With `split`, a
    /// [`RefitPlan`](crate::wide_bvh::RefitPlan) and a pool of several threads, the plan's
    /// tasks in parallel (rayon), then its top nodes: the same boxes, each node computed from
    /// the same children.
    ///
    /// The pass reads the records from the last too, since they are numbered in node order,
    /// and computes the leaf boxes from the corners it has just read instead of reading the
    /// frame's triangle boxes (in triangle order, not the tree's). Measured with
    /// `raycontact-bench --cpu --no-parry --scene mesh-scaling --triangles 640712,159048
    /// --implementations cpu-refit --frames 5`, the `fit` stage (this pass and the LBVH's refit
    /// that measures the tree's quality), 3 runs alternated: with the records numbered as the
    /// collapse met them and the boxes read, 641k 18.38 / 18.20 / 18.49 ms and 159k
    /// 4.12 / 4.78 / 4.18; now 12.20 / 11.76 / 12.03 and 2.89 / 3.01 / 2.91 (this pass alone,
    /// timed in a scratch build: 15–16 ms -> 7.3 ms at 641k, two bodies on two threads).
    /// Computing the boxes from the corners alone, records numbered as before, changed nothing
    /// measurable; asking for the positions of the record 8 ahead gained nothing either.
    ///
    /// Split (same command, `--scene files,cloth-layers,mesh-scaling` with the armadillo pair,
    /// `--frames 8`, 3 runs alternated with the build that refitted every tree serially): the
    /// armadillo pair, whose one moving body is refitted alone, `fit` 2.05 / 2.62 / 2.13 ->
    /// 1.64 / 1.66 / 1.66 ms on two threads. Where there are as many large bodies as threads
    /// (mesh-scaling's two on two) the trees are not split: split anyway, 641k took
    /// 12.57–12.68 ms against 11.69–12.44 refitted whole.
    ///
    /// Each node's lanes are written in place, a leaf lane's box comes from the corners as
    /// loaded (not read back from the record just written), and an inner lane's box is its
    /// child's lanes reduced four at a time: before, a copy of the node set lane by lane and a
    /// record's corners were read back by wide loads that waited for narrow stores (a fifth of
    /// the pass's samples in `perf`). `cargo bench -p raycontact-benches --bench cpu_bvh --
    /// update-refit` (a refit frame's normals, boxes and refits, 25.6k triangles on one thread):
    /// 1.42–1.49 ms -> 1.00–1.05.
    ///
    /// The pass also measures the refitted tree ([`Self::cost`]): each lane's area is taken
    /// from the box just computed, in registers.
    pub fn refit_sah(&mut self, positions: &[Vec3], split: bool) {
        let plan = &self.refit_plan;
        let whole = Part { nodes: &mut self.nodes, node_base: 0, tris: &mut self.tris, tri_base: 0 };
        let areas = if !split || !plan.splits() || rayon::current_num_threads() < 2 {
            whole.refit_all(positions)
        } else {
            let below = whole.run(&plan.tasks, positions);
            let mut whole = Part { nodes: &mut self.nodes, node_base: 0, tris: &mut self.tris, tri_base: 0 };
            below + plan.top.iter().map(|&w| f64::from(whole.refit_node(w as usize, positions))).sum::<f64>()
        };
        self.cost = self.cost_of(areas);
    }

    /// This tree's SAH cost over its lanes: the half areas of every lane's box and of the root's
    /// box (the union of the root's lanes), over the root's, as [`sah_cost`](crate::sah_cost)
    /// measures a binary tree (a lane is a binary node the collapse kept; the ones it dropped
    /// are not counted). A tree with a flat root box costs its lane count; an empty one 0.
    pub(crate) fn lane_cost(&self) -> f64 {
        let areas = self.nodes.iter().rev().map(|n| f64::from(lane_areas(n))).sum();
        self.cost_of(areas)
    }

    /// The box of this tree's root (the union of its lanes, as a binary tree's fit makes it
    /// from the same leaves), or `None` for an empty tree.
    pub(crate) fn root_box(&self) -> Option<(Vec3, Vec3)> {
        self.nodes.first().map(union)
    }

    /// The cost of this tree whose lanes' half areas sum to `areas` ([`Self::lane_cost`]).
    fn cost_of(&self, areas: f64) -> f64 {
        let Some(root) = self.nodes.first() else { return 0.0 };
        let (lo, hi) = union(root);
        let d = (hi - lo).max(Vec3::ZERO).as_dvec3();
        let root_area = d.x * d.y + d.y * d.z + d.z * d.x;
        if root_area <= 0.0 {
            return self.nodes.iter().map(|n| n.count as f64).sum();
        }
        (areas + root_area) / root_area
    }
}

/// The half areas of wide node `k`'s used lanes, summed lane after lane (as
/// [`Part::refit_node`] sums them).
fn lane_areas(k: &WideNode) -> f32 {
    let lane = |i: usize| {
        let lo = Vec3::new(k.lo[0][i], k.lo[1][i], k.lo[2][i]);
        half_area(lo, Vec3::new(k.hi[0][i], k.hi[1][i], k.hi[2][i]))
    };
    (0..k.count as usize).map(lane).fold(0.0, |s, a| s + a)
}

/// A range of a tree's nodes and of its records: node `node_base + i` is `nodes[i]`.
struct Part<'a> {
    nodes: &'a mut [WideNode],
    node_base: u32,
    tris: &'a mut [TriRecord],
    tri_base: u32,
}

impl Part<'_> {
    /// Refits node `w` (of this part) from its records and its children (in this part, after
    /// it), its lanes written in place (a copy of the node set lane by lane and stored whole is
    /// read before its stores have reached memory); returns the half areas of its lanes' new
    /// boxes, summed ([`lane_areas`]).
    #[inline]
    fn refit_node(&mut self, w: usize, positions: &[Vec3]) -> f32 {
        let (head, after) = self.nodes.split_at_mut(w + 1);
        let n = &mut head[w];
        let mut areas = 0.0;
        for i in 0..n.count as usize {
            let c = n.child[i];
            let (lo, hi) = if c & LEAF_BIT != 0 {
                let r = &mut self.tris[((c & !LEAF_BIT) - self.tri_base) as usize];
                let [a, b, c] = r.move_to(positions);
                (a.min(b).min(c).into(), a.max(b).max(c).into())
            } else {
                union(&after[(c - self.node_base) as usize - (w + 1)])
            };
            n.set_lane(i, lo, hi);
            areas += half_area(lo, hi);
        }
        areas
    }

    /// Refits every node of this part, from the last; returns their lanes' half areas, summed.
    fn refit_all(mut self, positions: &[Vec3]) -> f64 {
        (0..self.nodes.len()).rev().map(|w| f64::from(self.refit_node(w, positions))).sum()
    }

    /// Refits the ranges of `tasks` (in node order, within this part), halves of them in
    /// parallel; returns their lanes' half areas, summed.
    fn run(self, tasks: &[[u32; 4]], positions: &[Vec3]) -> f64 {
        match tasks {
            [] => 0.0,
            [[n0, n1, r0, r1]] => {
                let nodes = &mut self.nodes[(n0 - self.node_base) as usize..(n1 - self.node_base) as usize];
                let tris = &mut self.tris[(r0 - self.tri_base) as usize..(r1 - self.tri_base) as usize];
                Part { nodes, node_base: *n0, tris, tri_base: *r0 }.refit_all(positions)
            }
            _ => {
                let (left, right) = tasks.split_at(tasks.len() / 2);
                let [n0, _, r0, _] = right[0];
                let (ln, rn) = self.nodes.split_at_mut((n0 - self.node_base) as usize);
                let (lt, rt) = self.tris.split_at_mut((r0 - self.tri_base) as usize);
                let l = Part { nodes: ln, node_base: self.node_base, tris: lt, tri_base: self.tri_base };
                let r = Part { nodes: rn, node_base: n0, tris: rt, tri_base: r0 };
                let (l, r) = rayon::join(|| l.run(left, positions), || r.run(right, positions));
                l + r
            }
        }
    }
}

/// The union of wide node `k`'s lanes, `+ 0.0` turning -0 into +0: each axis's lanes reduced at
/// once (the lanes past `count` first made copies of lane 0). The minima and maxima of finite
/// floats do not depend on the order they are taken in, but for the sign of a zero, which the
/// `+ 0.0` drops, so this is the box the lanes' minima and maxima taken one by one give (the
/// positions are finite: `Error::NonFinite`).
#[inline]
fn union(k: &WideNode) -> (Vec3, Vec3) {
    let used = BVec4A::new(true, true, k.count > 2, k.count > 3);
    let reduce = |v: Vec4, pick: fn(Vec4, Vec4) -> Vec4| {
        let v = Vec4::select(used, v, Vec4::splat(v.x));
        let v = pick(v, v.zwxy());
        pick(v, v.yxwz()).x
    };
    let lo = Vec3::new(reduce(k.lo[0], Vec4::min), reduce(k.lo[1], Vec4::min), reduce(k.lo[2], Vec4::min));
    let hi = Vec3::new(reduce(k.hi[0], Vec4::max), reduce(k.hi[1], Vec4::max), reduce(k.hi[2], Vec4::max));
    (lo + Vec3::ZERO, hi + Vec3::ZERO)
}
