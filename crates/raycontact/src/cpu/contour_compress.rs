//! Twin of `shaders/contour_compress.wgsl`: every crossing at its loop's root, and the high words
//! of the loops' least keys.

use super::shared::intersect::{compress, crossing_key, degree, find};
use crate::layout::{ContourGpu, CrossingGpu};

/// Twin of `contour_compress.wgsl`: parents compressed to the roots; each root's `key_hi` the
/// complement of its crossings' least high key word.
pub fn contour_compress(crossings: &[CrossingGpu], contour: &mut [ContourGpu]) {
    compress(contour, contour.len() as u32);
    for i in 0..contour.len() {
        let root = find(contour, i as u32) as usize;
        let (hi, _) = crossing_key(&crossings[i], degree(&contour[i]));
        contour[root].key_hi = contour[root].key_hi.max(!hi);
    }
}
