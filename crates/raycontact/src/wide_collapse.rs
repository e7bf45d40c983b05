//! The collapse of a body's binary tree into its 4-wide tree (`crate::wide_bvh`): serially
//! ([`WideTree::collapse`], for any binary tree in Karras' numbering of internal nodes and
//! leaves: the LBVH and the binned-SAH tree), and for an LBVH on every core
//! ([`WideTree::collapse_lbvh_parallel`]): the same wide nodes (the same lanes, chosen by the
//! same rule), numbered by the LBVH's own layout instead of the order a serial walk meets them,
//! so that every subtree can be collapsed on its own thread and written straight into place.
//! [`WideTree::collapse_lbvh`] chooses between the two.
//!
//! Why it can: in Karras' layout an internal node is numbered by one end of its leaf range
//! (`[f, l]`), and every internal node below it by a leaf of that range. So a wide node rooted
//! at binary node `b` is given slot `b` of a sparse array of `n - 1` slots (one per binary
//! internal node), its lanes' subtrees own disjoint windows of slots (their leaf ranges), and
//! the records are numbered by leaf (leaf `j`'s triangle in record `j`, the LBVH's sorted, that
//! is Morton, order). A compaction then moves the used slots, in order, into the tree's nodes and
//! renames the lanes. A subtree's wide nodes stay together, as in the serial layout.
//!
//! It does more work than the serial collapse (a second pass, over the used slots, that reads
//! the lanes' binary boxes again), so [`WideTree::collapse_lbvh`] uses it only for bodies of at
//! least [`PARALLEL_BODY_LEAVES`] leaves in pools of at least [`PARALLEL_THREADS`] threads, or of
//! two or more when fewer such bodies than threads collapse in the build
//! ([`WideBvh::splits_collapse`]: the other threads would wait for them).
//! Measured with `raycontact-bench --cpu --no-parry` (the `fit` stage of `cpu-rayon`, which was
//! then the collapse; medians of 10 or 3 frames, serial → parallel; the 2-thread figures of the
//! armadillo pair are the `hierarchy` stage's, which holds the collapse now):
//!
//! | | 16 threads (H200 host) | 8 threads | 4 threads | 2 threads (2-core VM) |
//! |---|---|---|---|---|
//! | armadillo pair (one moving body of 52k) | 3.8–7.2 → 1.0–1.1 ms | 5.8–8.4 → 1.1 | 5.2–5.9 → 1.5–1.6 | 2.21–2.52 → 2.00–2.17 |
//! | `mesh-scaling`, 159k triangles | 4.4–6.6 → 1.5–1.9 ms | 6.8–7.7 → 2.5–2.7 | 7.1–8.0 → 4.6–4.7 | |
//! | `mesh-scaling`, 641k triangles | 26–37 → 15–19 ms | 25–31 → 23–24 | 30–31 → 26–27 | 40–50 → 57–69 |
//!
//! The serial collapse writes each lane's child straight into its wide node and each triangle
//! record field by field in place
//! ([`BodyTree::write_record`](crate::wide_bvh::BodyTree::write_record)): an array built on the
//! stack one element at a time and then copied whole is read by wide loads before the narrow
//! stores have reached the cache, a stall each time (a quarter of the collapse's samples in
//! `perf`). `cargo bench -p raycontact-benches --bench cpu_bvh -- wide-collapse` (two bodies of
//! 12.8k triangles, one thread): 685 µs -> 575–620 µs. For the same reason a wide node's lanes
//! are chosen in locals ([`lanes`]: the array of lanes, shifted element by element and returned
//! whole, was still such a copy) and its boxes transposed in registers ([`wide_node`]), and the
//! walk lists its leaves' triangles for [`WideTree::fill`] to write each record once, rather
//! than pushing records half-written for it to complete: the same bench, alternated with the
//! build before, 751–763 -> 640–653 µs; `raycontact-bench --cpu --no-parry --frames 30`,
//! `cpu-1`'s `hierarchy` stage (3 runs alternated), `mesh-scaling` 641k triangles 49.2–50.3 ->
//! 43.7–44.7 ms, the armadillo pair 5.32–5.55 -> 4.83–5.02 ms.
//!
//! Where the serial collapse's time goes, and what did not shorten it (2-core VM, `mesh-scaling`
//! 641k: two bodies of 320k leaves, each collapsed in 14.1–15.2 ms, 3.5 of them `fill`; about
//! 100 ns a wide node). `perf` puts a quarter of the walk's samples on the first loads of a
//! node's left child and of the child it opens, but taking the lane choice off that path lost:
//! every internal node's lanes computed first in one pass in index order, for the walk to read
//! (`cpu-1`'s `hierarchy` stage 41.5–45.4 -> 51.7–53.6 ms, `cpu-rayon`'s 21.9–23.6 ->
//! 28.0–29.3), or by the bottom-up build as it writes each node, while the node's subtree is in
//! the cache (`cpu-1` 41.4–43.8 -> 46.4–51.1 ms, the armadillo pair 3.9–4.2 -> 5.2–5.8;
//! `cpu-rayon` 22.7–23.5 -> 25.0–25.9): three times as many choices (one per internal node, not
//! per wide node) cost more than the misses they save. Four stack entries popped at once, so
//! that their loads overlap, took a body 17.6–19.1 ms; the lane choice written with selects
//! instead of branches, 14.9–17.1 ms. Without the choice at all (each wide node a binary
//! node's grandchildren) the stage was no faster (641k `cpu-1` 45.7–46.2 -> 46.2–47.0 ms) and
//! the rays 2–6 % slower (the armadillo pair's `cpu-1` ray stage 39.3–39.5 -> 41.8–41.9 ms).
//! Nor did taking the right child off the chain: in the LBVH's layout a node's right child
//! follows from its own words (its left child names the split, its escape the end of its
//! range), so both children's loads can start together instead of the right one waiting for
//! the left's escape; `cpu-1`'s `hierarchy` stage was 2.49–4.05 ms against 2.52–3.57 on
//! `mesh-scaling`'s 40k triangles and 63.6–65.2 against 59.4–66.8 on 641k (4 runs alternated,
//! one scratch binary switched by an environment variable).
//!
//! A 4-wide tree built straight from the sorted keys, with no binary tree (top-down: a range
//! split where the keys' highest differing bit changes, found by a binary search as the
//! `hierarchy` kernel finds it, the range of most leaves split again until four lanes, the
//! boxes on the way back up), takes one body of 20k leaves (a torus of `mesh-scaling`'s 40k
//! triangles) 0.94–1.73 ms against 1.19–2.09 for the binary build and this collapse together
//! (0.77–1.29 of it the collapse), records included: the two alternated 200 times in each of
//! 10 runs of a scratch program, one thread, the direct build faster by 11–21 % in every run;
//! the same hits, through 6.43 wide nodes a ray against 6.36. It pays only where no binary
//! tree is built, and the backend's other parts read one (ray queries, the intersection
//! stages, the refits, the binned-SAH trees): so under `Rebuild` the CPU backend builds a
//! moving body's wide tree that way (on every thread for a large body alone in its build), and
//! its binary tree only when one of them asks (`crate::wide_direct`, `cpu_backend/lag.rs`).

use glam::Vec3;
use rayon::prelude::*;

use crate::layout::{BodyState, LEAF_BIT, NONE, Node};
use crate::packing::Packing;
use crate::sah_tree::half_area;
use crate::wide_bvh::{BodyTree, TriRecord, WIDTH, WideBvh, WideNode, WideTree};
use crate::wide_update::{Making, Motion};

/// Subtrees of at least this many leaves collapse their lanes in parallel.
const PARALLEL_LEAVES: u32 = 4096;

/// Bodies of fewer leaves are collapsed serially by [`WideTree::collapse_lbvh`].
pub const PARALLEL_BODY_LEAVES: u32 = 16_384;

/// Pools of fewer threads collapse serially ([`WideTree::collapse_lbvh`]).
pub const PARALLEL_THREADS: usize = 4;

/// Slots per block of the compaction.
const BLOCK: usize = 4096;

/// The slots a subtree writes: binary internal nodes `base..` (its leaf range).
struct Slots<'a> {
    base: u32,
    used: &'a mut [u32],
    lanes: &'a mut [[u32; WIDTH]],
}

impl<'a> Slots<'a> {
    /// The slots before `at` and those from `at`.
    fn split(self, at: u32) -> (Slots<'a>, Slots<'a>) {
        let k = (at.saturating_sub(self.base) as usize).min(self.used.len());
        let (used_l, used_r) = self.used.split_at_mut(k);
        let (lanes_l, lanes_r) = self.lanes.split_at_mut(k);
        (
            Slots { base: self.base, used: used_l, lanes: lanes_l },
            Slots { base: self.base + k as u32, used: used_r, lanes: lanes_r },
        )
    }
}

/// A binary tree of `n` leaves in Karras' layout (internal nodes `0 .. n - 1`, then the leaves).
struct Lbvh<'a> {
    binary: &'a [Node],
    internal: u32,
}

impl Lbvh<'_> {
    /// The first leaf (sorted index) of the subtree of node `k` that follows another in
    /// depth-first order (an escape target: a leaf, or an internal node whose range starts at
    /// its own index); `n` past the end.
    fn first_leaf_of_next(&self, k: u32) -> u32 {
        match k {
            NONE => self.internal + 1,
            k if k < self.internal => k,
            k => k - self.internal,
        }
    }

    /// Collapses the subtree of internal node `b`, whose leaves start at sorted leaf `first`,
    /// into `slots` (its leaf range's slots).
    fn collapse(&self, b: u32, first: u32, slots: Slots<'_>) {
        let (kids, count) = lanes(self.binary, self.internal, b);
        let mut rest = slots;
        let i = (b - rest.base) as usize;
        (rest.used[i], rest.lanes[i]) = (1, kids);
        let mut jobs: [Option<(u32, u32, Slots<'_>)>; WIDTH] = [None, None, None, None];
        let mut start = first;
        let mut big = false;
        for (i, &k) in kids[..count].iter().enumerate() {
            let end = self.first_leaf_of_next(self.binary[k as usize].escape);
            let (mine, after) = rest.split(end);
            rest = after;
            if k < self.internal {
                big |= end - start >= PARALLEL_LEAVES;
                jobs[i] = Some((k, start, mine));
            }
            start = end;
        }
        self.run(&mut jobs[..count], big);
    }

    /// Collapses the lanes' subtrees, in parallel when `big`.
    fn run(&self, jobs: &mut [Option<(u32, u32, Slots<'_>)>], big: bool) {
        match jobs {
            [] => {}
            [one] => {
                if let Some((k, first, slots)) = one.take() {
                    self.collapse(k, first, slots);
                }
            }
            _ => {
                let (l, r) = jobs.split_at_mut(jobs.len() / 2);
                if big {
                    rayon::join(|| self.run(l, big), || self.run(r, big));
                } else {
                    self.run(l, big);
                    self.run(r, big);
                }
            }
        }
    }
}

/// The lanes of the wide node rooted at binary internal node `b` of a tree whose internal
/// nodes are `0 .. internal` (the leaves after them), in the binary left-to-right order: its
/// two children, then, while fewer than [`WIDTH`], the internal lane of largest surface area
/// replaced by its two children (the first of equal ones); [`NONE`] past the count returned.
///
/// Written out for the two openings a 4-wide node can take, with the lanes and their areas in
/// locals rather than in an array shifted element by element: that array, stored a lane at a
/// time and then copied whole, was read by a 16-byte load before its 4-byte stores could reach
/// it, a stall on every wide node (a sixth of the serial collapse's samples in `perf`).
#[inline(always)]
fn lanes(binary: &[Node], internal: u32, b: u32) -> ([u32; WIDTH], usize) {
    const _: () = assert!(WIDTH == 4, "two openings: 2, 3 then 4 lanes");
    // Half areas of the internal children (-1 for a leaf, which is never opened).
    let area = |c: u32| {
        let n = &binary[c as usize];
        if c < internal { half_area(n.min, n.max) } else { -1.0 }
    };
    // The two children of internal node `c`.
    let open = |c: u32| {
        let l = binary[c as usize].child;
        (l, binary[l as usize].escape)
    };
    let (k0, k1) = open(b);
    let (a0, a1) = (area(k0), area(k1));
    // Two lanes: the larger (the first of equal ones) opened, if internal.
    let second = a1 > a0;
    if (if second { a1 } else { a0 }) < 0.0 {
        return ([k0, k1, NONE, NONE], 2);
    }
    let (l, r) = open(if second { k1 } else { k0 });
    let (al, ar) = (area(l), area(r));
    let (k0, k1, k2, a0, a1, a2) = if second { (k0, l, r, a0, al, ar) } else { (l, r, k1, al, ar, a1) };
    // Three lanes: the largest, as above.
    let (mut i, mut largest) = (0, a0);
    if a1 > largest {
        (i, largest) = (1, a1);
    }
    if a2 > largest {
        (i, largest) = (2, a2);
    }
    if largest < 0.0 {
        return ([k0, k1, k2, NONE], 3);
    }
    let kids = match i {
        0 => {
            let (l, r) = open(k0);
            [l, r, k1, k2]
        }
        1 => {
            let (l, r) = open(k1);
            [k0, l, r, k2]
        }
        _ => {
            let (l, r) = open(k2);
            [k0, k1, l, r]
        }
    };
    (kids, 4)
}

/// The box of no lane: the lanes past a wide node's count hold zeros.
const NO_LANE: Node = Node { min: Vec3::ZERO, child: 0, max: Vec3::ZERO, escape: 0 };

/// The wide node of lanes `kids` (binary nodes of a tree whose internal nodes are
/// `0 .. internal`) and lane children `child` (a wide node index for an internal lane,
/// [`LEAF_BIT`] `|` a record for a leaf): their boxes, with the binary node of each lane.
/// The boxes are the lanes' corners transposed in registers ([`WideNode::rows`] of the four
/// minima, then of the maxima), not gathered one float at a time into arrays then read as
/// vectors (a load that waits for the narrow stores before it).
#[inline]
fn wide_node(binary: &[Node], internal: u32, kids: &[u32], child: [u32; WIDTH]) -> (WideNode, [u32; WIDTH]) {
    let lane = |i: usize| kids.get(i).map_or(&NO_LANE, |&k| &binary[k as usize]);
    let n = [lane(0), lane(1), lane(2), lane(3)];
    // One corner of the four lanes, transposed: per axis, the four lanes' values.
    let axes = |corner: fn(&Node) -> Vec3| WideNode::rows(n.map(|l| corner(l).extend(0.0)));
    let (mut src, mut leaves) = ([NONE; WIDTH], 0);
    for (i, &k) in kids.iter().enumerate() {
        src[i] = k;
        if k >= internal {
            leaves |= 1 << i;
        }
    }
    let node = WideNode { lo: axes(|l| l.min), hi: axes(|l| l.max), child, count: kids.len() as u32, leaves };
    (node, src)
}

impl WideTree {
    /// Empties this tree (its vectors kept) for a new one over `leaves` leaves, of an LBVH (no
    /// binned-SAH tree, no refit plan, no cost); with its root node in place where there are two
    /// leaves or more, else no records either (the LBVH's root alone is walked): whether it
    /// has a root.
    pub(crate) fn start_over(&mut self, leaves: u32) -> bool {
        self.nodes.clear();
        self.source.clear();
        if !self.start_over_in_place(leaves) {
            return false;
        }
        self.nodes.push(WideNode::default());
        self.source.push([NONE; WIDTH]);
        true
    }

    /// [`Self::start_over`] but for the nodes and their sources, left as they are (for a build
    /// that writes each node over the last one's, `crate::wide_direct`; emptied where there are
    /// fewer than two leaves): whether the tree will have a root.
    pub(crate) fn start_over_in_place(&mut self, leaves: u32) -> bool {
        self.sah.clear();
        self.refit_plan.clear();
        (self.collapse_cost, self.cost) = (0.0, 0.0);
        if leaves < 2 {
            self.nodes.clear();
            self.source.clear();
            self.tris.clear();
            return false;
        }
        true
    }

    /// Collapses a body's fitted binary tree (internal nodes first, then the leaves) into this
    /// tree, reusing its vectors, and fills the triangle records (in the order the collapse
    /// meets the leaves).
    pub fn collapse(&mut self, body: BodyTree<'_>) {
        let (binary, leaves) = (body.binary, body.leaves);
        if !self.start_over(leaves) {
            return;
        }
        let internal = leaves - 1;
        let mut stack = std::mem::take(&mut self.scratch.stack);
        let mut order = std::mem::take(&mut self.scratch.leaf_tris);
        stack.clear();
        order.clear();
        stack.push((0u32, 0usize));
        while let Some((b, w)) = stack.pop() {
            let (kids, count) = lanes(binary, internal, b);
            (self.nodes[w], self.source[w]) = wide_node(binary, internal, &kids[..count], [NONE; WIDTH]);
            // Each lane's child written into the node in place: an array of them built here
            // and copied whole would be read before its stores could reach the load.
            for (i, &k) in kids[..count].iter().enumerate() {
                let c = if k < internal {
                    let at = self.nodes.len();
                    self.nodes.push(WideNode::default());
                    self.source.push([NONE; WIDTH]);
                    stack.push((k, at));
                    at as u32
                } else {
                    // The record's place, written by `fill`.
                    order.push(binary[k as usize].child & !LEAF_BIT);
                    LEAF_BIT | (order.len() - 1) as u32
                };
                self.nodes[w].child[i] = c;
            }
        }
        self.scratch.stack = stack;
        // The records' corners and vertices gathered apart, in a loop of independent loads
        // whose cache misses overlap (in the walk above each waited behind the next node).
        self.fill(body, &order);
        self.scratch.leaf_tris = order;
    }

    /// Collapses a fitted LBVH of `leaves` leaves (its used nodes, in Karras' layout: the
    /// `hierarchy` stage's) into this tree, as [`Self::collapse_lbvh_parallel`] does where the
    /// body has at least [`PARALLEL_BODY_LEAVES`] leaves and the current rayon pool at least
    /// [`PARALLEL_THREADS`] threads, or at least two with `alone` (fewer bodies that large
    /// collapse their LBVH in this build than the pool has threads:
    /// [`WideBvh::splits_collapse`](crate::wide_bvh::WideBvh::splits_collapse)), else as
    /// [`Self::collapse`] does: with every thread collapsing a large body of its own, the
    /// parallel collapse's second pass costs more than it gains; a large body the other
    /// threads would wait for is collapsed sooner on all of them. The same wide nodes either
    /// way.
    pub fn collapse_lbvh(&mut self, body: BodyTree<'_>, alone: bool) {
        if Self::collapses_in_parallel(body.leaves, alone) {
            self.collapse_lbvh_parallel(body);
        } else {
            self.collapse(body);
        }
    }

    /// Whether a rebuild builds the tree of a body of `leaves` leaves from its keys on every
    /// thread of the current rayon pool ([`Self::build_from_keys_parallel`]), not on one
    /// ([`Self::build_from_keys`]): a large body ([`PARALLEL_BODY_LEAVES`] leaves or more)
    /// `alone` in its build (fewer such bodies than the pool has threads:
    /// [`WideBvh::splits_collapse`](crate::wide_bvh::WideBvh::splits_collapse)), on two
    /// threads or more. Where every thread has such a body of its own, each builds its own: the
    /// parallel build costs about 1.4 times the serial one in all (`crate::wide_direct`'s doc).
    pub fn builds_from_keys_in_parallel(leaves: u32, alone: bool) -> bool {
        leaves >= PARALLEL_BODY_LEAVES && alone && rayon::current_num_threads() >= 2
    }

    /// Whether [`Self::collapse_lbvh`] collapses an LBVH of `leaves` leaves on every thread of
    /// the current rayon pool (with its `alone`).
    pub(crate) fn collapses_in_parallel(leaves: u32, alone: bool) -> bool {
        let threads = rayon::current_num_threads();
        leaves >= PARALLEL_BODY_LEAVES && (threads >= PARALLEL_THREADS || alone && threads >= 2)
    }

    /// Collapses a fitted LBVH of `leaves` leaves (its used nodes, in Karras' layout: the
    /// `hierarchy` stage's) into this tree on every core of the current rayon pool, reusing its
    /// vectors, and fills the triangle records (leaf `j`'s in record `j`). The same wide nodes
    /// as [`Self::collapse`], numbered otherwise (the module's doc says how).
    pub fn collapse_lbvh_parallel(&mut self, body: BodyTree<'_>) {
        let (binary, leaves) = (body.binary, body.leaves);
        self.sah.clear();
        self.refit_plan.clear();
        (self.collapse_cost, self.cost) = (0.0, 0.0);
        if leaves < 2 {
            self.nodes.clear();
            self.source.clear();
            self.tris.clear();
            return;
        }
        let lbvh = Lbvh { binary, internal: leaves - 1 };
        let slots = (leaves - 1) as usize;
        let s = &mut self.scratch;
        s.used.resize(slots, 0);
        s.lanes.resize(slots, [NONE; WIDTH]);
        s.rank.resize(slots, 0);
        s.used.par_iter_mut().with_min_len(BLOCK).for_each(|u| *u = 0);
        lbvh.collapse(0, 0, Slots { base: 0, used: &mut s.used, lanes: &mut s.lanes });

        // Ranks: each block's used slots counted, then numbered from the blocks before.
        let blocks = slots.div_ceil(BLOCK);
        s.blocks.resize(blocks + 1, 0);
        s.rank.par_chunks_mut(BLOCK).zip(s.used.par_chunks(BLOCK)).zip(&mut s.blocks[1..]).for_each(
            |((rank, used), total)| {
                let mut count = 0;
                for (r, &u) in rank.iter_mut().zip(used) {
                    *r = count;
                    count += u;
                }
                *total = count;
            },
        );
        for j in 0..blocks {
            s.blocks[j + 1] += s.blocks[j];
        }
        let count = s.blocks[blocks] as usize;
        self.nodes.resize(count, Default::default());
        self.source.resize(count, [NONE; WIDTH]);
        let (rank, blocks_at) = (&s.rank, &s.blocks);
        let rename = |k: u32| {
            if k < lbvh.internal {
                blocks_at[k as usize / BLOCK] + rank[k as usize]
            } else {
                LEAF_BIT | (k - lbvh.internal)
            }
        };
        let fill = |j: usize, nodes: &mut [WideNode], source: &mut [[u32; WIDTH]]| {
            let first = j * BLOCK;
            let used = s.used[first..].iter().take(BLOCK);
            let mut out = nodes.iter_mut().zip(source.iter_mut());
            for (i, _) in used.enumerate().filter(|(_, u)| **u != 0) {
                let (n, src) = out.next().expect("a slot per used node");
                let kids = s.lanes[first + i];
                let count = kids.iter().take_while(|&&k| k != NONE).count();
                let child = kids.map(|k| if k == NONE { NONE } else { rename(k) });
                (*n, *src) = wide_node(binary, lbvh.internal, &kids[..count], child);
            }
        };
        scatter(&mut self.nodes, &mut self.source, blocks_at, 0..blocks, &fill);

        self.tris.resize(leaves as usize, TriRecord::default());
        let leaf_nodes = &binary[lbvh.internal as usize..];
        self.tris.par_iter_mut().zip(leaf_nodes).with_min_len(1024).for_each(|(r, leaf)| {
            body.write_record(r, leaf.child & !LEAF_BIT);
        });
    }
}

impl WideBvh {
    /// Whether fewer bodies of at least [`PARALLEL_BODY_LEAVES`] leaves collapse their LBVH in
    /// a build ([`WideTree::build`] of every body, after [`Self::prepare`], with `motion(b)` and
    /// `refitted` as there) than the current rayon pool has threads: then each of them is
    /// collapsed on every thread ([`WideTree::collapse_lbvh`]'s `alone`), as [`Self::refit`]
    /// splits a lone large body, where two large bodies on two threads are not split for
    /// nothing. On the 2-core VM, the armadillo pair's one moving body (52k triangles, the
    /// README has the command): `cpu-rayon`'s `hierarchy` stage 2.21–2.52 -> 2.00–2.17 ms, 6
    /// runs alternated; a body of 52k triangles in random vertex order alone, 1.18–1.73 ms
    /// serially against 0.96–1.17 on two threads (a scratch criterion bench, 3 runs).
    pub fn splits_collapse(
        &self,
        packing: &Packing,
        body_state: &[BodyState],
        motion: impl Fn(usize) -> Motion,
        refitted: bool,
    ) -> bool {
        // In the background, a moved body's binned-SAH tree is its LBVH's collapse meanwhile.
        let collapses_lbvh = |m: Making, b: usize| {
            m == Making::Lbvh || self.background && m == Making::Sah && motion(b) == Motion::Moved
        };
        let large = self.trees.iter().enumerate().filter(|&(b, tree)| {
            body_state[b].leaf_count >= PARALLEL_BODY_LEAVES
                && collapses_lbvh(tree.making(packing.bodies[b].flags, motion(b), refitted), b)
        });
        large.count() < rayon::current_num_threads()
    }
}

/// Calls `fill(j, nodes, source)` for every block `j` of `blocks`, with the block's part of the
/// compacted arrays (from `at[j]` to `at[j + 1]`), on every core.
fn scatter<N: Send, F>(
    nodes: &mut [N],
    source: &mut [[u32; WIDTH]],
    at: &[u32],
    blocks: std::ops::Range<usize>,
    fill: &F,
) where
    F: Fn(usize, &mut [N], &mut [[u32; WIDTH]]) + Sync,
{
    if blocks.len() == 1 {
        return fill(blocks.start, nodes, source);
    }
    let mid = blocks.start + blocks.len() / 2;
    let k = (at[mid] - at[blocks.start]) as usize;
    let (nl, nr) = nodes.split_at_mut(k);
    let (sl, sr) = source.split_at_mut(k);
    rayon::join(
        || scatter(nl, sl, at, blocks.start..mid, fill),
        || scatter(nr, sr, at, mid..blocks.end, fill),
    );
}
