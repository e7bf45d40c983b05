//! Twin of `shaders/contour_start.wgsl`: the low words of the loops' least keys.

use super::shared::intersect::{crossing_key, degree};
use crate::layout::{ContourGpu, CrossingGpu, decode_parent};

/// Twin of `contour_start.wgsl`: each root's `key_lo` the complement of the least low key word
/// among its crossings whose high word is the least.
pub fn contour_start(crossings: &[CrossingGpu], contour: &mut [ContourGpu]) {
    for i in 0..contour.len() {
        let root = decode_parent(contour[i].parent, i as u32) as usize;
        let (hi, lo) = crossing_key(&crossings[i], degree(&contour[i]));
        if hi == !contour[root].key_hi {
            contour[root].key_lo = contour[root].key_lo.max(!lo);
        }
    }
}
