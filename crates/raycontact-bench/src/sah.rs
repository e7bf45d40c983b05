//! A binned-SAH BVH build (Wald 2007), as the tree-quality reference for the LBVH, written in
//! raycontact's node layout (depth-first order, escape links) so that the same stackless
//! traversal can walk it; and the SAH cost of a tree.

use glam::Vec3;
use raycontact::internals::layout::{LEAF_BIT, NONE, Node, TriBox};

const BINS: usize = 16;

fn area(lo: Vec3, hi: Vec3) -> f32 {
    let d = (hi - lo).max(Vec3::ZERO);
    2.0 * (d.x * d.y + d.y * d.z + d.z * d.x)
}

/// Builds a binned-SAH tree with one triangle per leaf over the non-degenerate boxes, in
/// depth-first order: the first child of node `i` is `i + 1`.
pub fn build(boxes: &[TriBox]) -> Vec<Node> {
    let mut items: Vec<u32> = (0..boxes.len() as u32).filter(|&i| boxes[i as usize].flags & 1 == 0).collect();
    let mut nodes = Vec::with_capacity(2 * items.len());
    if !items.is_empty() {
        let n = items.len();
        split(boxes, &mut items[..n], &mut nodes, NONE);
    }
    nodes
}

fn bounds(boxes: &[TriBox], items: &[u32]) -> (Vec3, Vec3) {
    items.iter().fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(l, h), &i| {
        (l.min(boxes[i as usize].min), h.max(boxes[i as usize].max))
    })
}

fn centroid(b: &TriBox) -> Vec3 {
    (b.min + b.max) * 0.5
}

/// Builds the subtree of `items` at the end of `nodes`; `escape` is where the walk goes after it.
/// A subtree of k leaves has 2k - 1 nodes, so the right child of node `me` with `m` leaves on
/// the left is `me + 2m`.
fn split(boxes: &[TriBox], items: &mut [u32], nodes: &mut Vec<Node>, escape: u32) {
    let (lo, hi) = bounds(boxes, items);
    let me = nodes.len();
    nodes.push(Node { min: lo, max: hi, child: NONE, escape });
    if items.len() == 1 {
        nodes[me].child = LEAF_BIT | items[0];
        return;
    }
    let (clo, chi) = items.iter().fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(l, h), &i| {
        let c = centroid(&boxes[i as usize]);
        (l.min(c), h.max(c))
    });
    let ext = chi - clo;
    let mut best = (f32::MAX, 0usize, 0usize);
    for axis in 0..3 {
        if ext[axis] <= 0.0 {
            continue;
        }
        let bin_of = |i: u32| {
            let c = centroid(&boxes[i as usize])[axis];
            (((c - clo[axis]) / ext[axis] * BINS as f32) as usize).min(BINS - 1)
        };
        let mut count = [0usize; BINS];
        let mut bl = [Vec3::splat(f32::MAX); BINS];
        let mut bh = [Vec3::splat(f32::MIN); BINS];
        for &i in items.iter() {
            let b = bin_of(i);
            count[b] += 1;
            bl[b] = bl[b].min(boxes[i as usize].min);
            bh[b] = bh[b].max(boxes[i as usize].max);
        }
        let mut right_area = [0.0f32; BINS];
        let mut right_count = [0usize; BINS];
        let (mut l, mut h, mut c) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN), 0);
        for b in (1..BINS).rev() {
            l = l.min(bl[b]);
            h = h.max(bh[b]);
            c += count[b];
            right_area[b] = area(l, h);
            right_count[b] = c;
        }
        let (mut l, mut h, mut c) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN), 0);
        for b in 0..BINS - 1 {
            l = l.min(bl[b]);
            h = h.max(bh[b]);
            c += count[b];
            if c == 0 || right_count[b + 1] == 0 {
                continue;
            }
            let cost = area(l, h) * c as f32 + right_area[b + 1] * right_count[b + 1] as f32;
            if cost < best.0 {
                best = (cost, axis, b + 1);
            }
        }
    }
    let mid = if best.0 < f32::MAX {
        let (axis, split_bin) = (best.1, best.2);
        let mut m = 0;
        for k in 0..items.len() {
            let c = centroid(&boxes[items[k] as usize])[axis];
            let b = (((c - clo[axis]) / ext[axis] * BINS as f32) as usize).min(BINS - 1);
            if b < split_bin {
                items.swap(k, m);
                m += 1;
            }
        }
        m
    } else {
        items.len() / 2 // all centroids equal: split the list in half
    };
    let (left, right) = items.split_at_mut(mid);
    nodes[me].child = (me + 1) as u32;
    let right_index = (me + 2 * mid) as u32;
    split(boxes, left, nodes, right_index);
    debug_assert_eq!(nodes.len(), right_index as usize);
    split(boxes, right, nodes, escape);
}

/// SAH cost of a tree in raycontact's layout (root 0): sum over internal nodes of
/// `area / root area` (traversal cost 1) plus over leaves of `area / root area` (one triangle
/// test each, cost 1).
pub fn sah_cost(nodes: &[Node]) -> f64 {
    if nodes.is_empty() {
        return 0.0;
    }
    let root = area(nodes[0].min, nodes[0].max) as f64;
    nodes.iter().map(|n| area(n.min, n.max) as f64 / root).sum()
}
