//! A body's 4-wide tree (`crate::wide_bvh`) built straight from its sorted Morton keys, with no
//! binary tree: what the CPU backend's rebuild makes of a moving body under
//! [`BvhUpdate::Rebuild`](crate::BvhUpdate::Rebuild), whose LBVH it then builds only when
//! something reads it (`cpu_backend/lag.rs`: a ray query, the intersection stages, a refit, a
//! binned-SAH tree, `Scene::frame_data`; a full pass and an iterative pass's walks read only
//! the root's box, which the rebuild sets from this tree's).
//!
//! From the root down: a range of leaves splits where the keys' highest differing bit changes
//! (`tree_build::split`, the LBVH's own split, so every lane is a node of the LBVH the keys
//! give and remembers it in [`WideTree::source`] as a collapse does), and the range of most
//! leaves splits again until the node has four lanes or only leaves; the boxes come back up.
//! The lanes are chosen by leaf count where [`WideTree::collapse`] opens the child of largest
//! area: another tree over the same leaves, so the same closest hits. Its records are in leaf
//! (Morton) order, as the parallel collapse writes them.
//!
//! Measured on one thread (a torus of `mesh-scaling`'s 40k triangles, 20,160 leaves, the two
//! alternated 200 times in each of 10 runs of a scratch program): 0.94–1.73 ms against
//! 1.19–2.09 for the LBVH's build and its collapse, faster in every run; the rays walk 6.43
//! wide nodes against 6.36. In the frame, with the leaves' boxes and the records' corners asked
//! for ahead as the LBVH's build and the collapse's `fill` ask (without them it was slower
//! than the two), 3 runs alternated with the build before (`raycontact-bench --cpu --no-parry
//! --scene hermann-tori,resting-pile,cloth-layers,eight-sheets,mesh-scaling,files --triangles
//! 40000,640000 --implementations cpu-1,cpu-rayon --frames 10`, the armadillo pair as files,
//! 2-core VM): the `hierarchy` stage on `mesh-scaling` 641k 64.0–67.0 -> 45.4–52.3 ms
//! (`cpu-1`) and 33.0–35.1 -> 27.7–28.6 (`cpu-rayon`, whose frame 100.3–109.6 -> 93.8–96.9),
//! on `cloth-layers` 5.0–5.5 -> 4.5–4.8 and 2.9–3.0 -> 2.6–2.8, with its ray stage 61.8–64.4
//! -> 56.8–58.5 ms (`cpu-rayon`'s frame 68.7–71.9 -> 63.0–64.9: other trees, their records
//! in leaf order; not measured apart), the armadillo pair's `cpu-1` 5.5–5.6 -> 4.5–4.9 (under
//! `cpu-rayon` its moving body of 52k leaves is collapsed on both threads, as before);
//! `resting-pile` and `hermann-tori` (bodies of 900 and 1,600 triangles) within the noise.
//! The same contacts in every run (none differ from the reference).
//!
//! Each wide node is written once, at its place in the last build's vectors (handed out in
//! order, the vectors cut to the nodes used at the end), where a node pushed as a default and
//! written when its subtree was done was two writes of memory the core may no longer hold; and
//! it is written from whole vectors: each lane's box kept whole and the node's rows made by a
//! 4x4 transpose, as the collapse's `wide_node` makes them, and the lanes kept as arrays of one
//! type each ([`Lanes`]). Before, lane-by-lane stores of 4 bytes into the node's rows and of
//! 12-byte ranges were read back by 16-byte loads (the node's copy into the tree, the lanes'
//! return), which the core cannot forward from the stores: `perf annotate` of `Build::node` on
//! `hermann-tori` put a quarter of its samples on those loads. 3 runs alternated with the build
//! before these changes (the command above, 2026-12-07): `hierarchy` (`cpu-1`) on
//! `mesh-scaling` 641k 33.5–33.7 -> 27.7–28.9 ms, 40k 1.94 -> 1.56–1.58, `cloth-layers` 2.68–2.71
//! -> 2.18–2.21, `eight-sheets` 2.94–3.03 -> 2.39–2.48, `resting-pile` 2.20–2.26 -> 1.74–1.79,
//! the armadillo pair 2.56–2.69 -> 2.10–2.23; `cpu-rayon`'s frame on `resting-pile` 7.34–7.36 ->
//! 6.91–7.13, `mesh-scaling` 40k 3.37–3.43 -> 3.18–3.19, the others within the noise. The
//! writes once alone had given 641k 33.9–35.2 -> 32.5–32.9 ms. The lanes are then chosen in
//! place ([`Build::lanes`] writes the caller's [`Lanes`]): returned, they were copied by loads
//! wider than the stores just made (the build's hottest instruction after the changes above).
//! 3 runs alternated (2026-12-07, later): `hierarchy` (`cpu-1`) on 641k 28.4–29.0 -> 25.8–26.1
//! ms, 40k 1.57–1.64 -> 1.44–1.47, `cloth-layers` 2.23–2.25 -> 1.98–2.00, `resting-pile`
//! 1.86–1.91 -> 1.65–1.74.
//!
//! A range of at most four leaves takes its leaves as its lanes without a split search
//! ([`lanes_of`]: the same lanes). 6 runs alternated with the build before (2026-12-08:
//! `raycontact-bench --cpu --no-parry --scene hermann-tori,tori-scaling,resting-pile,
//! cloth-layers,eight-sheets,mesh-scaling,files --tori 8,64 --triangles 10000,640000
//! --implementations cpu-1,cpu-rayon --frames 10`, the armadillo pair as files), `hierarchy`
//! (`cpu-1`, min / median): `mesh-scaling` 641k 26.6 / 27.1 -> 23.1 / 24.1 ms, 9.8k 0.333 / 0.343
//! -> 0.295 / 0.300, `cloth-layers` 2.09 / 2.10 -> 1.80 / 1.84, `eight-sheets` 2.31 / 2.42 ->
//! 1.93 / 2.03, `resting-pile` 1.69 / 1.79 -> 1.47 / 1.51, `tori-scaling` 64 4.00 / 4.12 -> 3.47 /
//! 3.55, the armadillo pair 2.07 / 2.12 -> 1.81 / 1.94; `cpu-rayon`'s likewise 9–21 % (but
//! `tori-scaling` 8's and `hermann-tori`'s medians, within the noise), the same contacts.
//!
//! Measured and dropped: a range of two leaves that a node's four lanes leave whole ending
//! there as one leaf lane of both records (consecutive, being in leaf order; its box the LBVH
//! node's of the two), where it is a wide node of two lanes. The tree has fewer nodes, so the
//! build is shorter, but a ray that enters the lane tests both triangles where the node's two
//! boxes turned one of them away. 3 runs alternated (the command above with
//! `parry-refit-rayon`): `hierarchy` (`cpu-1`) on `mesh-scaling` 641k 32.8–34.0 -> 28.1–28.4 ms,
//! `cloth-layers` 2.69–2.75 -> 2.24–2.26, `resting-pile` 2.20–2.26 -> 1.85–1.89, but the ray
//! stages 0–4 % longer (the armadillo pair's 33.7–35.2 -> 35.1–36.3, `cloth-layers`' 69.8–73.1
//! -> 71.8–72.5), so `cpu-rayon`'s frame 5–7 % shorter on `mesh-scaling` 641k (55.8–57.0 ->
//! 52.4–53.2) and 2–4 % longer on `cloth-layers` (39.4–40.5 -> 40.5–42.3), the others within
//! the noise. Lanes of up to three or four leaves shortened the build further (641k: 26.0 and
//! 21.9 ms) and lengthened `cloth-layers`' ray stage by 3–5 and 5–7 %; a lane of two made only
//! where its box's surface area is at most its triangles' boxes' together (the SAH's rule for a
//! leaf) measured as pairs everywhere (one scratch binary switched by an environment variable,
//! 2–4 alternated runs). Every variant found the same contacts, and the same sources turned
//! away once a lane's records were tested against the reach box by box.
//!
//! A large body alone in its build (fewer such bodies than threads) is built on every thread
//! (`parallel.rs`: the top serially, its parts in parallel, the same wide nodes;
//! `WideTree::builds_from_keys_in_parallel` says when). Until then it was built the other way,
//! its LBVH and the parallel collapse, which on two threads took longer than this build on
//! one: on the armadillo pair (its turning body of 52k leaves alone), `cpu-rayon`'s
//! `hierarchy` 3.55–3.79 ms that way against 2.99–3.33 this way on one thread (3 runs, a
//! scratch switch), and 2.16–3.22 -> 1.47–2.34 ms with the parallel build
//! (6 runs alternated with the build before, 2026-12-07: `raycontact-bench --cpu --no-parry
//! --scene files --implementations cpu-rayon --frames 10`; its frame within the noise, 22.9–31.7
//! against 23.8–28.0 in 6 runs of an earlier version). The other scenes' bodies are built as
//! before (`--scene hermann-tori,tori-scaling,resting-pile,cloth-layers,eight-sheets,
//! mesh-scaling`, 4 runs: their `hierarchy` stages within the noise). Where each thread has a
//! large body of its own, each builds its own serially (as the LBVHs were built before, but
//! collapsed on every thread on a pool of four or more): the parallel build's parts and their
//! copy cost about 1.4 times the serial build in all (`mesh-scaling` 641k, two bodies on two
//! threads, `cpu-rayon`'s `hierarchy` 13.4–18.3 ms serially against 19.0–23.1 in parallel, 6
//! runs alternated by a scratch switch; `perf`: the copy a quarter of the build).

use glam::{Vec3, Vec3A, Vec4};

use crate::layout::{LEAF_BIT, NONE, TriBox};
use crate::tree_build::split;
use crate::wide_bvh::{BodyTree, WIDTH, WideNode, WideTree};

mod parallel;

/// How many leaves ahead a leaf's triangle box is asked for (as `tree_build` asks).
const LEAF_AHEAD: usize = 16;

/// One body's leaves in their sorted order: its keys and values (packed triangles) among the
/// frame's, and every packed triangle's box.
#[derive(Clone, Copy)]
pub struct SortedLeaves<'a> {
    /// The body's sorted keys.
    pub keys: &'a [u32],
    /// Per leaf, its packed triangle.
    pub values: &'a [u32],
    /// Every packed triangle's box.
    pub tri_boxes: &'a [TriBox],
}

/// A range of leaves `[f, l]` and the LBVH node it is: the internal node numbered by its last
/// leaf as a left child, by its first as a right child (or the root), a leaf after the `n - 1`
/// internal nodes.
#[derive(Clone, Copy)]
struct Range {
    f: u32,
    l: u32,
    left: bool,
}

impl Range {
    fn node(self, internal: u32) -> u32 {
        if self.f == self.l {
            internal + self.f
        } else if self.left {
            self.l
        } else {
            self.f
        }
    }
}

/// A wide node's lanes as [`Build::lanes`] chooses them: lane `i` is the range `[f[i], l[i]]`,
/// a left child where `left[i]`. Arrays of one type each, not an array of [`Range`]s: a lane
/// shifted to make room for a split is then moved by loads and stores of one size, which the
/// core forwards from store to load, where the ranges' twelve bytes were read back by wider
/// loads than they were written with, each a stall (`perf annotate` of the build: its hottest
/// instructions, with the node's copy below).
#[derive(Clone, Copy)]
struct Lanes {
    f: [u32; WIDTH],
    l: [u32; WIDTH],
    left: [bool; WIDTH],
    count: usize,
}

impl Lanes {
    fn get(&self, i: usize) -> Range {
        Range { f: self.f[i], l: self.l[i], left: self.left[i] }
    }

    /// Lane `i` becomes `[f, g]` (a left child) and `[g + 1, l]` after it (a right one), the
    /// lanes after it shifted by one.
    fn split(&mut self, i: usize, g: u32) {
        let (f, l) = (self.f[i], self.l[i]);
        let mut j = self.count;
        while j > i + 1 {
            (self.f[j], self.l[j], self.left[j]) = (self.f[j - 1], self.l[j - 1], self.left[j - 1]);
            j -= 1;
        }
        (self.f[i], self.l[i], self.left[i]) = (f, g, true);
        (self.f[i + 1], self.l[i + 1], self.left[i + 1]) = (g + 1, l, false);
        self.count += 1;
    }
}

/// The lanes of the wide node of range `r` (of more than one leaf) of the sorted `keys`, into
/// `lanes`: its two halves, then the range of most leaves (the first of equal ones) halved while
/// there are fewer than [`WIDTH`]. Written in place, not returned: the returned lanes were
/// copied by 16-byte loads of the arrays just written lane by lane, a load that waits for the
/// stores to reach the cache (`perf annotate`: the build's hottest instruction).
///
/// A range of at most [`WIDTH`] leaves takes its leaves as its lanes, in order, with no split
/// searched: halving adds one lane at a time and stops only at [`WIDTH`] lanes or at lanes of
/// one leaf each, so its lanes end as its leaves whatever the splits are, and a leaf lane's
/// LBVH node is its leaf's. The nodes above only leaves are such ranges: without their
/// searches, `hierarchy` (`cpu-1`) 11–17 % shorter on every scene (module doc).
#[inline(always)]
fn lanes_of(keys: &[u32], r: Range, lanes: &mut Lanes) {
    let len = (r.l - r.f + 1) as usize;
    if len <= WIDTH {
        // `left` says nothing of a leaf (`Range::node`).
        let leaf = std::array::from_fn(|i| r.f + i as u32);
        *lanes = Lanes { f: leaf, l: leaf, left: [false; WIDTH], count: len };
        return;
    }
    *lanes = Lanes { f: [r.f; WIDTH], l: [r.l; WIDTH], left: [false; WIDTH], count: 1 };
    lanes.split(0, split(keys, r.f as usize, r.l as usize) as u32);
    while lanes.count < WIDTH {
        let (mut widest, mut size) = (WIDTH, 1);
        for i in 0..lanes.count {
            let len = lanes.l[i] - lanes.f[i] + 1;
            if len > size {
                (widest, size) = (i, len);
            }
        }
        if widest == WIDTH {
            break;
        }
        let g = split(keys, lanes.f[widest] as usize, lanes.l[widest] as usize) as u32;
        lanes.split(widest, g);
    }
}

/// The walk's state: the leaves, and the nodes being written (a tree's, or a part's of the
/// parallel build, `parallel.rs`) with each node's lanes' binary nodes.
struct Build<'a, 't> {
    keys: &'a [u32],
    values: &'a [u32],
    tri_boxes: &'a [TriBox],
    nodes: &'t mut Vec<WideNode>,
    source: &'t mut Vec<[u32; WIDTH]>,
    /// Wide nodes handed out so far.
    next: usize,
}

impl Build<'_, '_> {
    /// The next wide node's index: a node of the last build's, written over, or a new one.
    fn slot(&mut self) -> usize {
        let at = self.next;
        self.next += 1;
        if at == self.nodes.len() {
            self.nodes.push(WideNode::default());
            self.source.push([NONE; WIDTH]);
        }
        at
    }

    /// The box of leaf `f` (asking for the box of the one [`LEAF_AHEAD`] later: the leaves
    /// come in order).
    #[inline(always)]
    fn leaf_box(&self, f: u32) -> (Vec3A, Vec3A) {
        if let Some(&ahead) = self.values.get(f as usize + LEAF_AHEAD) {
            crate::prefetch::prefetch(self.tri_boxes, ahead as usize);
        }
        let b = self.tri_boxes[self.values[f as usize] as usize];
        (Vec3A::from(b.min), Vec3A::from(b.max))
    }

    /// Writes the subtree of range `r` (more than one leaf) from a new slot on, and cuts the
    /// vectors to the nodes used; returns its box.
    fn subtree(&mut self, r: Range) -> (Vec3A, Vec3A) {
        let root = self.slot();
        let b = self.node(r, root);
        self.nodes.truncate(self.next);
        self.source.truncate(self.next);
        b
    }

    /// Writes the wide node of range `r` (more than one leaf) at index `at`, and its subtree
    /// after it; returns its box.
    fn node(&mut self, r: Range, at: usize) -> (Vec3A, Vec3A) {
        let internal = self.keys.len() as u32 - 1;
        let mut lanes = Lanes { f: [0; WIDTH], l: [0; WIDTH], left: [false; WIDTH], count: 0 };
        lanes_of(self.keys, r, &mut lanes);
        let (node, source, bounds) = assemble(&lanes, internal, |lane| {
            if lane.f == lane.l {
                (LEAF_BIT | lane.f, self.leaf_box(lane.f))
            } else {
                let c = self.slot();
                (c as u32, self.node(lane, c))
            }
        });
        self.nodes[at] = node;
        self.source[at] = source;
        bounds
    }
}

/// The wide node of `lanes` (of a body of `internal` binary internal nodes), each lane's child
/// and box given by `child_of` (of the lane's range; a leaf's child has [`LEAF_BIT`]), in lane
/// order; its lanes' binary nodes, and its box.
///
/// Each lane's box kept whole (w 0), turned into the node's per-axis rows at the end: the node
/// is then written from whole vectors, where lane-by-lane stores into its rows were read back
/// by its copy's wider loads. The lanes past the count hold zeros, as the collapse leaves them.
#[inline(always)]
fn assemble(
    lanes: &Lanes,
    internal: u32,
    mut child_of: impl FnMut(Range) -> (u32, (Vec3A, Vec3A)),
) -> (WideNode, [u32; WIDTH], (Vec3A, Vec3A)) {
    let (mut mins, mut maxs) = ([Vec4::ZERO; WIDTH], [Vec4::ZERO; WIDTH]);
    let (mut child, mut source, mut leaves) = ([NONE; WIDTH], [NONE; WIDTH], 0u32);
    let (mut lo, mut hi) = (Vec3A::splat(f32::INFINITY), Vec3A::splat(f32::NEG_INFINITY));
    for i in 0..lanes.count {
        let lane = lanes.get(i);
        source[i] = lane.node(internal);
        let (c, (min, max)) = child_of(lane);
        child[i] = c;
        leaves |= u32::from(c & LEAF_BIT != 0) << i;
        (mins[i], maxs[i]) = (min.extend(0.0), max.extend(0.0));
        // `+ 0.0` turns -0 into +0, as the LBVH's boxes (`tree_build`) have it.
        (lo, hi) = (lo.min(min) + Vec3A::ZERO, hi.max(max) + Vec3A::ZERO);
    }
    let count = lanes.count as u32;
    let (lo_rows, hi_rows) = (WideNode::rows(mins), WideNode::rows(maxs));
    (WideNode { lo: lo_rows, hi: hi_rows, child, count, leaves }, source, (lo, hi))
}

impl WideTree {
    /// Builds this tree from a body's sorted `leaves` (reusing its vectors), the triangle
    /// records from `body`'s positions (leaf `j`'s in record `j`); returns the root's box (the
    /// box the LBVH's root would have), or `None` for a body of fewer than two leaves, whose
    /// tree is left empty (its LBVH's root alone is walked: the caller builds that LBVH).
    pub fn build_from_keys(&mut self, leaves: SortedLeaves<'_>, body: BodyTree<'_>) -> Option<(Vec3, Vec3)> {
        let n = leaves.keys.len();
        debug_assert_eq!(n, body.leaves as usize, "a key per leaf");
        // The last build's nodes stay where they are, each written over once (a node pushed as a
        // default and written when its subtree is done was two writes of memory the core may no
        // longer hold).
        if !self.start_over_in_place(n as u32) {
            return None;
        }
        let (keys, values, tri_boxes) = (leaves.keys, leaves.values, leaves.tri_boxes);
        let (nodes, source) = (&mut self.nodes, &mut self.source);
        let mut build = Build { keys, values, tri_boxes, nodes, source, next: 0 };
        let (lo, hi) = build.subtree(Range { f: 0, l: n as u32 - 1, left: false });
        self.fill_in_leaf_order(leaves, body);
        Some((lo.into(), hi.into()))
    }

    /// The records in leaf order (leaf `j`'s in record `j`), written by `fill` (whose hints
    /// fetch their corners ahead).
    fn fill_in_leaf_order(&mut self, leaves: SortedLeaves<'_>, body: BodyTree<'_>) {
        let values = leaves.values;
        let mut order = std::mem::take(&mut self.scratch.leaf_tris);
        order.clear();
        order.extend(values.iter().map(|&t| t - body.tri_offset));
        self.fill(body, &order);
        self.scratch.leaf_tris = order;
    }
}
