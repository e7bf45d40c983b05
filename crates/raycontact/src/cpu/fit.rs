//! Twin of `shaders/fit.wgsl`: the boxes of every BVH node, bottom-up ([`fit`]), and the fan
//! word of every internal node ([`fit_fans`]).

use glam::Vec3;
use rayon::prelude::*;

use crate::frame::used_nodes;
use crate::layout::{BodyGpu, BodyState, LEAF_BIT, NONE, Node, PairGrid, TriBox, pair_word};
use crate::packing::{Packing, has_moved};

/// Twin of `fit.wgsl`: the box of every node, bottom-up (a leaf's box is its triangle's box; an
/// internal node's is the union of its children's, a zero of either sign as +0, as the kernel's
/// ordered keys give it). Exact, so equal to the GPU's bit for bit. The trees of the bodies that
/// `moved` marks (`has_moved`: an empty `moved` is every body, as the kernel does).
pub fn fit(
    packing: &Packing,
    body_state: &[BodyState],
    tri_boxes: &[TriBox],
    nodes: &mut [Node],
    moved: &[bool],
) {
    // The bodies in parallel (a scene of many small bodies), and the nodes of a large one.
    let trees = packing
        .split_per_body(nodes, |body, b| (body.node_offset as usize, used_nodes(body_state[b].leaf_count)));
    let bodies = packing.bodies.par_iter().zip(body_state).zip(trees).enumerate();
    bodies.filter(|(b, _)| has_moved(moved, *b)).for_each(|(_, ((body, state), tree))| {
        let n = state.leaf_count;
        if n == 0 {
            return;
        }
        let boxes = &tri_boxes[body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize];
        let (internal, leaves) = tree.split_at_mut(n as usize - 1);
        leaves.par_iter_mut().with_min_len(1024).for_each(|leaf| {
            let b = boxes[(leaf.child & !LEAF_BIT) as usize];
            leaf.min = b.min;
            leaf.max = b.max;
        });
        if n > 1 {
            fit_node(internal, 0, 0, leaves, 0);
        }
    });
}

/// Fits internal node `node` and its subtree; returns its box. `window` holds the internal nodes
/// `base..` of the node's leaf range `[f, l]` (in a Karras tree the internal nodes of a subtree
/// have indices within its leaf range, so the two children's windows `[f, g]` and `[g + 1, l]`
/// are disjoint and are fitted in parallel near the root).
fn fit_node(window: &mut [Node], base: usize, node: usize, leaves: &[Node], depth: u32) -> (Vec3, Vec3) {
    let n_internal = leaves.len() - 1;
    let left = window[node - base].child as usize;
    let right = if left >= n_internal { leaves[left - n_internal].escape } else { window[left - base].escape }
        as usize;
    // First leaf of the right child (g + 1): an internal right child has index g + 1.
    let split = if right >= n_internal { right - n_internal } else { right };
    // Fitted in parallel near the root of large trees only: a join costs more than fitting a
    // few thousand nodes.
    let parallel = depth < 8 && window.len() >= 4096;
    let (lw, rw) = window.split_at_mut(split - base);
    let sub = |w: &mut [Node], b: usize, c: usize| -> (Vec3, Vec3) {
        if c >= n_internal {
            let l = &leaves[c - n_internal];
            (l.min, l.max)
        } else {
            fit_node(w, b, c, leaves, depth + 1)
        }
    };
    let (lb, rb) = if parallel {
        rayon::join(|| sub(lw, base, left), || sub(rw, split, right))
    } else {
        (sub(lw, base, left), sub(rw, split, right))
    };
    // `+ 0.0` turns -0 into +0 and leaves every other value as it is.
    let (lo, hi) = (lb.0.min(rb.0) + Vec3::ZERO, lb.1.max(rb.1) + Vec3::ZERO);
    window[node - base].min = lo;
    window[node - base].max = hi;
    (lo, hi)
}

/// Twin of the compact child pairs that `hierarchy.wgsl` and `fit.wgsl` write into the node
/// buffer's last third ([`Node`]'s doc), for one body's tree (`nodes`, its used nodes,
/// body-local, in any layout of child and escape links: an LBVH or a tree written over it) in
/// grid `grid` (`fit`'s: [`PairGrid::of_box`] of the body's box; the host's, of a tree it
/// writes: of the tree's root box): into `pairs` (cleared), for each internal node `p`, its two
/// children's boxes in steps of the grid (each minimum rounded down, each maximum up, so that
/// each holds its child's box; the left child's in the high half of each box word:
/// [`pair_word`]), the left child's word in `child` and the right one's in `escape` (an internal
/// child's index, a leaf's [`LEAF_BIT`] `|` triangle, the leaf's own `child`). The grid itself is
/// stored in the body's last pair node ([`PairGrid::node`]). Twin of what the GPU's walks read
/// (`closest_hit`; the twin that reads them: [`closest_hit_paired`]); also what the GPU scene
/// uploads with a tree it writes over a body's.
///
/// [`closest_hit_paired`]: crate::cpu::closest_hit_paired
pub fn child_pairs(nodes: &[Node], grid: &PairGrid, pairs: &mut Vec<Node>) {
    pairs.clear();
    let internal = nodes.len() / 2;
    if internal == 0 {
        return;
    }
    let word = |c: u32| if (c as usize) < internal { c } else { nodes[c as usize].child };
    // `+ 0.0` turns -0 into +0 (as `fit`'s keys give it) and leaves every other value as it is.
    let words = |l: &Node, r: &Node, lo: bool| -> Vec3 {
        Vec3::from_array(std::array::from_fn(|d| {
            let (a, b) = if lo { (l.min[d], r.min[d]) } else { (l.max[d], r.max[d]) };
            let (a, b) = (grid.steps(d, a + 0.0, !lo), grid.steps(d, b + 0.0, !lo));
            f32::from_bits(pair_word(a, b))
        }))
    };
    for p in 0..internal {
        let left = nodes[p].child;
        let right = nodes[left as usize].escape;
        let (l, r) = (&nodes[left as usize], &nodes[right as usize]);
        pairs.push(Node {
            min: words(l, r, true),
            child: word(left),
            max: words(l, r, false),
            escape: word(right),
        });
    }
}

/// Twin of the fan words `fit.wgsl` writes ([`TRIANGLE_WORDS`](crate::layout::TRIANGLE_WORDS)),
/// for one body's tree (`nodes`, its used nodes, body-local; `triangles`, the packed vertex
/// indices): per internal node, the lowest packed vertex that every triangle under it uses, or
/// [`NONE`] where none does (the kernel writes them for a body with
/// [`BODY_FANS`](crate::layout::BODY_FANS) only). A walk that ignores that vertex may pass the node
/// ([`closest_hit`](crate::cpu::closest_hit)): each of its triangles would be
/// skipped at its leaf. Not part of the CPU backend's frame (its walks go through its wide
/// trees): the kernel's test reference and the benchmark's walks.
pub fn fit_fans(body: &BodyGpu, nodes: &[Node], triangles: &[u32]) -> Vec<u32> {
    let internal = nodes.len() / 2;
    let mut fans = vec![NONE; internal];
    if internal == 0 {
        return fans;
    }
    // The vertices every triangle under a node uses ([NONE; 3]-padded), post-order from the root
    // (a node after its two children).
    let mut sets = vec![[NONE; 3]; nodes.len()];
    let mut stack = vec![(0u32, false)];
    while let Some((n, children_done)) = stack.pop() {
        let nd = &nodes[n as usize];
        if nd.child & LEAF_BIT != 0 {
            let g = 3 * (body.tri_offset + (nd.child & !LEAF_BIT)) as usize;
            sets[n as usize] = [triangles[g], triangles[g + 1], triangles[g + 2]];
            continue;
        }
        let (left, right) = (nd.child, nodes[nd.child as usize].escape);
        if !children_done {
            stack.extend([(n, true), (right, false), (left, false)]);
            continue;
        }
        let (a, b) = (sets[left as usize], sets[right as usize]);
        let common = a.map(|v| if v != NONE && b.contains(&v) { v } else { NONE });
        sets[n as usize] = common;
        fans[n as usize] = common.into_iter().min().unwrap_or(NONE);
    }
    fans
}
