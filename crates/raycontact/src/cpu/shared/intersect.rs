//! Twin of `shaders/shared/intersect.wgsl`: the helpers the intersection kernels share (an
//! edge's triangle on a side, a crossing's canonical key) and the sequential union-find over
//! the zero-based parent encoding that the kernels' lock-free one computes the same roots of.

use crate::layout::{ContourGpu, CrossingGpu, EdgeGpu, NON_MANIFOLD, NONE, RegionGpu, decode_parent};

/// The triangle of `e` on side `s` (0: `t0`, 1: `t1`), or [`NONE`] (`edge_side`).
pub fn edge_side(e: &EdgeGpu, s: u32) -> u32 {
    let t = if s == 1 { e.t1 } else { e.t0 };
    if t < NON_MANIFOLD { t } else { NONE }
}

/// The canonical key of a crossing within its pair (`crossing_key`): (high, low) = (not an end
/// of the contour << 31 | direction << 30 | edge, triangle). A loop starts at its least.
pub fn crossing_key(c: &CrossingGpu, degree: u32) -> (u32, u32) {
    let mut hi = ((c.pair & 1) << 30) | c.edge;
    if degree == 2 {
        hi |= 0x8000_0000;
    }
    (hi, c.triangle)
}

/// Links of a crossing's contour state (0, 1 or 2).
pub fn degree(c: &ContourGpu) -> u32 {
    c.links.iter().filter(|&&l| l != 0).count() as u32
}

/// An array of union-find elements in the zero-based encoding (`!parent`, 0 for a root).
pub(crate) trait Parents {
    fn parent_of(&self, i: u32) -> u32;
    fn set_parent(&mut self, i: u32, p: u32);
}

impl Parents for [ContourGpu] {
    fn parent_of(&self, i: u32) -> u32 {
        decode_parent(self[i as usize].parent, i)
    }
    fn set_parent(&mut self, i: u32, p: u32) {
        self[i as usize].parent = if p == i { 0 } else { !p };
    }
}

impl Parents for [RegionGpu] {
    fn parent_of(&self, i: u32) -> u32 {
        decode_parent(self[i as usize].parent, i)
    }
    fn set_parent(&mut self, i: u32, p: u32) {
        self[i as usize].parent = if p == i { 0 } else { !p };
    }
}

/// The root of `x` (the kernels' `find`, without its path halving: the roots are the same).
pub(crate) fn find<P: Parents + ?Sized>(set: &P, mut x: u32) -> u32 {
    loop {
        let p = set.parent_of(x);
        if p == x {
            return x;
        }
        x = p;
    }
}

/// The root of `x`, halving the path on the way (the kernels' `find`).
pub(crate) fn find_halving<P: Parents + ?Sized>(set: &mut P, mut x: u32) -> u32 {
    loop {
        let p = set.parent_of(x);
        if p == x {
            return x;
        }
        let g = set.parent_of(p);
        if g == p {
            return p;
        }
        set.set_parent(x, g);
        x = g;
    }
}

/// Unites the sets of `u` and `v`: the higher root goes under the lower (the kernels' `unite`),
/// so that every root is the lowest element of its set.
pub(crate) fn unite<P: Parents + ?Sized>(set: &mut P, u: u32, v: u32) {
    let (ru, rv) = (find_halving(set, u), find_halving(set, v));
    if ru != rv {
        set.set_parent(ru.max(rv), ru.min(rv));
    }
}

/// Points every element at its root (the compress step of the kernels).
pub(crate) fn compress<P: Parents + ?Sized>(set: &mut P, n: u32) {
    for i in 0..n {
        let r = find(set, i);
        set.set_parent(i, r);
    }
}
