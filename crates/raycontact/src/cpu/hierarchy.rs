//! Twin of `shaders/hierarchy.wgsl`: the Karras hierarchy over each body's sorted keys, laid
//! out for the stackless depth-first traversal (child and escape links, parents). The CPU
//! backend's rebuild builds the same nodes, with their boxes, in one pass
//! (`crate::tree_build`); this twin, one invocation's work per node as the kernel's, is the
//! reference of the kernel's tests and of that build's.

use rayon::prelude::*;

use crate::frame::body_trees;
use crate::layout::{BodyState, LEAF_BIT, NONE, Node};
use crate::packing::Packing;

/// Length of the common prefix of sorted keys `i` and `j` (ties broken by index), -1 when `j`
/// is out of range; as in `hierarchy.wgsl`.
fn delta(keys: &[u32], n: i32, i: i32, j: i32) -> i32 {
    if j < 0 || j >= n {
        return -1;
    }
    let (ki, kj) = (keys[i as usize], keys[j as usize]);
    if ki == kj {
        32 + (i as u32 ^ j as u32).leading_zeros() as i32
    } else {
        (ki ^ kj).leading_zeros() as i32
    }
}

fn direction(keys: &[u32], n: i32, k: i32) -> i32 {
    if delta(keys, n, k, k + 1) > delta(keys, n, k, k - 1) { 1 } else { -1 }
}

fn escape_after(keys: &[u32], n: i32, last: i32) -> u32 {
    if last >= n - 1 {
        return NONE;
    }
    let k = last + 1;
    if k <= n - 2 && direction(keys, n, k) == 1 { k as u32 } else { (n - 1 + k) as u32 }
}

/// Internal node `i` of a Karras tree over `n` sorted keys: (first child, escape, last leaf).
fn internal_node(keys: &[u32], n: i32, i: i32) -> (u32, u32, u32, u32) {
    let d = direction(keys, n, i);
    let dmin = delta(keys, n, i, i - d);
    let mut lmax = 2;
    while delta(keys, n, i, i + lmax * d) > dmin {
        lmax *= 2;
    }
    let mut l = 0;
    let mut t = lmax / 2;
    while t >= 1 {
        if delta(keys, n, i, i + (l + t) * d) > dmin {
            l += t;
        }
        t /= 2;
    }
    let j = i + l * d;
    let dnode = delta(keys, n, i, j);
    let mut s = 0;
    let mut t = l;
    loop {
        t = (t + 1) / 2;
        if delta(keys, n, i, i + (s + t) * d) > dnode {
            s += t;
        }
        if t <= 1 {
            break;
        }
    }
    let g = i + s * d + d.min(0);
    let (first, last) = (i.min(j), i.max(j));
    let left = if first == g { (n - 1 + g) as u32 } else { g as u32 };
    let right = if last == g + 1 { (n + g) as u32 } else { (g + 1) as u32 };
    (left, right, escape_after(keys, n, last), last as u32)
}

/// Twin of `hierarchy.wgsl`: child and escape links and parents of every body's BVH (boxes are
/// left to [`fit`](crate::cpu::fit)).
pub fn hierarchy(
    packing: &Packing,
    body_state: &[BodyState],
    keys: &[u32],
    values: &[u32],
    nodes: &mut [Node],
    parents: &mut [u32],
) {
    // The bodies in parallel (a scene of many small bodies), and the nodes of a large one.
    let trees = body_trees(packing, body_state, nodes, parents);
    packing.bodies.par_iter().zip(body_state).zip(trees).for_each(|((body, state), (tree, par))| {
        let n = state.leaf_count as i32;
        if n == 0 {
            return;
        }
        let k = &keys[body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize];
        let v = &values[body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize];
        let (internal, leaves) = tree.split_at_mut(n as usize - 1);
        let links: Vec<(u32, u32)> = internal
            .par_iter_mut()
            .enumerate()
            .with_min_len(1024)
            .map(|(i, node)| {
                let (left, right, escape, _) = internal_node(k, n, i as i32);
                node.child = left;
                node.escape = escape;
                (left, right)
            })
            .collect();
        leaves.par_iter_mut().enumerate().with_min_len(1024).for_each(|(j, node)| {
            node.child = LEAF_BIT | (v[j] - body.tri_offset);
            node.escape = escape_after(k, n, j as i32);
        });
        par[0] = NONE;
        for (i, (l, r)) in links.into_iter().enumerate() {
            par[l as usize] = i as u32;
            par[r as usize] = i as u32;
        }
    });
}
