//! Twin of `shaders/shared/common.wgsl`: the helpers every kernel shares (a triangle's corners,
//! a body's box as the kernels decode it) and the one Rust definition of a pair's reach.

use glam::Vec3;
use rayon::iter::ParallelIterator;

use crate::layout::{BodyState, float_to_key, key_to_float};

/// The three corners of packed triangle `t`.
#[inline(always)]
pub(crate) fn tri_vertices(positions: &[Vec3], triangles: &[u32], t: usize) -> (Vec3, Vec3, Vec3) {
    (
        positions[triangles[3 * t] as usize],
        positions[triangles[3 * t + 1] as usize],
        positions[triangles[3 * t + 2] as usize],
    )
}

/// A pair's reach: how far apart two bodies of half thicknesses `ea` and `eb` may be and
/// still be tested, `max(prediction, e_a + e_b)`. The broad phase grows the boxes by it, the
/// ray sources keep the vertices within it, and the classification casts the outward rays
/// that far.
pub fn reach(prediction: f32, ea: f32, eb: f32) -> f32 {
    prediction.max(ea + eb)
}

impl BodyState {
    /// The box as decoded from the keys, whether or not the body has leaves (twin of `body_min`
    /// and `body_max` in `shaders/shared/common.wgsl`; the Morton kernel and the ray sources
    /// read it so).
    pub(crate) fn bounds_keys(&self) -> (Vec3, Vec3) {
        (
            Vec3::from_array(self.min_key.map(|k| key_to_float(!k))),
            Vec3::from_array(self.max_key.map(key_to_float)),
        )
    }
}

/// The box keys (`min_key`, `max_key`, as [`BodyState`] holds them) of the union of the boxes
/// `min`, `max` of `points`: per axis the largest complemented key of the minima and the largest
/// key of the maxima, `[0; 3]` for none (as the kernels' `atomicMax` from zeroed words).
pub(crate) fn box_keys(points: impl ParallelIterator<Item = (Vec3, Vec3)>) -> ([u32; 3], [u32; 3]) {
    points
        .map(|(min, max)| (min.to_array().map(|x| !float_to_key(x)), max.to_array().map(float_to_key)))
        .reduce(
            || ([0; 3], [0; 3]),
            |(l0, h0), (l1, h1)| {
                (std::array::from_fn(|d| l0[d].max(l1[d])), std::array::from_fn(|d| h0[d].max(h1[d])))
            },
        )
}
