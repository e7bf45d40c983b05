//! Twin of `shaders/triangle_bounds.wgsl`: each triangle's box and degenerate flag, and each
//! body's box over its non-degenerate triangles (as ordered keys).

use glam::Vec3;
use rayon::prelude::*;

use super::shared::common::tri_vertices;
use crate::layout::{BodyState, DEGENERATE_SIN2, TriBox, float_to_key};
use crate::packing::Packing;

/// Box of a triangle and whether it is degenerate (as `triangle_bounds.wgsl` decides).
pub fn triangle_box(a: Vec3, b: Vec3, c: Vec3) -> TriBox {
    let min = a.min(b).min(c);
    let max = a.max(b).max(c);
    let e1 = b - a;
    let e2 = c - a;
    let n = e1.cross(e2);
    let n2 = n.dot(n);
    let l2 = e1.dot(e1) * e2.dot(e2);
    let finite = min.is_finite() && max.is_finite();
    // Not `n2 <= ...`: a NaN must count as degenerate.
    let degenerate = n2.partial_cmp(&(DEGENERATE_SIN2 * l2)) != Some(std::cmp::Ordering::Greater) || !finite;
    TriBox { min, flags: degenerate as u32, max, pad: 0 }
}

/// Twin of `triangle_bounds.wgsl`: triangle boxes, degenerate flags and body boxes (over the
/// non-degenerate triangles, as ordered keys).
pub fn triangle_bounds(
    packing: &Packing,
    positions: &[Vec3],
    tri_boxes: &mut [TriBox],
    body_state: &mut [BodyState],
) {
    tri_boxes.par_iter_mut().enumerate().with_min_len(1024).for_each(|(t, out)| {
        let (a, b, c) = tri_vertices(positions, &packing.triangles, t);
        *out = triangle_box(a, b, c);
    });
    // The bodies in parallel (a scene of many small bodies), and the triangles of a large one.
    let tri_boxes = &*tri_boxes;
    packing.bodies.par_iter().zip(body_state.par_iter_mut()).for_each(|(body, state)| {
        let range = body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize;
        let (lo, hi) = tri_boxes[range]
            .par_iter()
            .with_min_len(1024)
            .filter(|b| b.flags & 1 == 0)
            .map(|b| (b.min.to_array().map(|x| !float_to_key(x)), b.max.to_array().map(float_to_key)))
            .reduce(
                || ([0; 3], [0; 3]),
                |(l0, h0), (l1, h1)| {
                    (std::array::from_fn(|d| l0[d].max(l1[d])), std::array::from_fn(|d| h0[d].max(h1[d])))
                },
            );
        state.min_key = lo;
        state.max_key = hi;
    });
}
