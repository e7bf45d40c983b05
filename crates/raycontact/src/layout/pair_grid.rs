//! The compact child pairs' grid and words (`layout::Node`'s doc): how both tunings store a
//! node's two children's boxes in one 32-byte node, read the same way by the kernels
//! (`shaders/shared/common.wgsl`: `PairGrid`, `pair_grid`, `pair_steps`, `pair_word`,
//! `pair_boxes`, `stored_pair_grid`) and by the CPU twins, which these functions are.

use glam::Vec3;

use super::{NONE, Node};

/// The most steps of a compact child pair's box component (the WGSL constant `PAIR_Q_MAX`):
/// 14 bits.
pub const PAIR_Q_MAX: u32 = 0x3fff;

/// Twin of WGSL `PairGrid`: the grid of a body's compact child pairs ([`Node`]'s doc), a step
/// (a power of two) and the grid's corner in steps (whole numbers). A box component is stored
/// as its count `q` of steps from the corner, at most [`PAIR_Q_MAX`], and read as
/// `(origin + q) * step`: exact (a whole number under 2^24 times a power of two), so that a
/// kernel and its twin read the same floats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairGrid {
    /// The grid's corner, in steps.
    pub origin: Vec3,
    /// The step: a power of two.
    pub step: f32,
}

/// The smallest `e` with `2^e >= x` for a finite `x > 0` (WGSL `ceil_log2`; a subnormal's bound
/// is -126).
fn ceil_log2(x: f32) -> i32 {
    let b = x.to_bits();
    ((b >> 23) & 0xff) as i32 - 127 + i32::from(b & 0x7f_ffff != 0)
}

impl PairGrid {
    /// The grid of a tree without child pairs (WGSL `ONE_LEAF_GRID`).
    pub const ONE_LEAF: PairGrid = PairGrid { origin: Vec3::ZERO, step: 1.0 };

    /// Twin of WGSL `pair_grid`: the grid for boxes within `lo..hi` (a body's box): a step of
    /// at least 1/8192 of the longest side, so that the box spans at most 8192 + 2 steps, and
    /// of at least 2^-23 of the farthest coordinate from 0, so that the corner and every point
    /// in steps stay under 2^24; at least 2^-100.
    pub fn of_box(lo: Vec3, hi: Vec3) -> PairGrid {
        let side = (hi - lo).max_element();
        let far = lo.abs().max(hi.abs()).max_element();
        let e = (ceil_log2(side) - 13).max(ceil_log2(far) - 23).max(-100);
        let step = f32::from_bits(((e + 127) as u32) << 23);
        // lo / step, exactly (`steps`).
        PairGrid { origin: (lo * f32::from_bits(((127 - e) as u32) << 23)).floor(), step }
    }

    /// The node that stores the grid (in a body's last pair node: WGSL `stored_pair_grid`): the
    /// corner in `min`, the step's bits in `child`, `max` zero, `escape` [`NONE`].
    pub fn node(&self) -> Node {
        let (min, child) = (self.origin, self.step.to_bits());
        Node { min, child, max: Vec3::ZERO, escape: NONE }
    }

    /// The grid that node `n` stores ([`Self::node`]).
    pub fn of_node(n: &Node) -> PairGrid {
        PairGrid { origin: n.min, step: f32::from_bits(n.child) }
    }

    /// Twin of WGSL `pair_steps`: the steps of component `v` (within the grid's box) on axis
    /// `d`, rounded down for a minimum (`up` false) and up for a maximum, so that the component
    /// read back ([`Self::value`]) holds `v`'s side of the box. Exact, as the kernel's: the floor
    /// or ceiling of `v` times the step's inverse (a power of two made from its bits), less the
    /// corner's whole number of steps (taken after the rounding: `v / step - origin` may round
    /// up to a whole number).
    pub fn steps(&self, d: usize, v: f32, up: bool) -> u32 {
        let s = v * f32::from_bits(0x7f00_0000 - self.step.to_bits());
        ((if up { s.ceil() } else { s.floor() }) - self.origin[d]).clamp(0.0, PAIR_Q_MAX as f32) as u32
    }

    /// The component that steps `q` of axis `d` stand for, `(origin + q) * step` (what WGSL
    /// `pair_side` computes on each axis).
    pub fn value(&self, d: usize, q: u32) -> f32 {
        (self.origin[d] + q as f32) * self.step
    }
}

/// Twin of WGSL `pair_word`: a box word of a compact child pair, the left child's steps in bits
/// 15..28 and the right child's in bits 0..13, bit 29 set (read as a float: a normal positive
/// number).
pub fn pair_word(left: u32, right: u32) -> u32 {
    0x2000_0000 | (left << 15) | right
}

/// Twin of WGSL `pair_boxes`: the boxes (min, max) of the left and the right child of compact
/// child pair `p` in grid `g`.
pub fn pair_boxes(g: &PairGrid, p: &Node) -> [(Vec3, Vec3); 2] {
    let (lo, hi) = (p.min.to_array().map(f32::to_bits), p.max.to_array().map(f32::to_bits));
    let side = |words: [u32; 3], shift: u32| {
        Vec3::from_array(std::array::from_fn(|d| g.value(d, (words[d] >> shift) & PAIR_Q_MAX)))
    };
    [(side(lo, 15), side(hi, 15)), (side(lo, 0), side(hi, 0))]
}
