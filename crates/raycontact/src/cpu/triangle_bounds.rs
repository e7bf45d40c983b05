//! Twin of `shaders/triangle_bounds.wgsl`: each triangle's box and degenerate flag, and each
//! body's box over its non-degenerate triangles (as ordered keys).

use glam::{Vec3, Vec3A};
use rayon::prelude::*;

use super::shared::common::{box_keys, tri_vertices};
use crate::layout::{BodyState, DEGENERATE_SIN2, TriBox, float_to_key};
use crate::packing::{Packing, has_moved};

/// Box of a triangle and whether it is degenerate (as `triangle_bounds.wgsl` decides).
pub fn triangle_box(a: Vec3, b: Vec3, c: Vec3) -> TriBox {
    triangle_box_crossed(a, b, c, (b - a).cross(c - a))
}

/// [`triangle_box`] of a triangle whose `cross(b - a, c - a)` is `n` (computed once where the
/// caller needs it too): the same box and flag, bit for bit.
#[inline]
pub fn triangle_box_crossed(a: Vec3, b: Vec3, c: Vec3, n: Vec3) -> TriBox {
    let min = a.min(b).min(c);
    let max = a.max(b).max(c);
    let e1 = b - a;
    let e2 = c - a;
    let n2 = n.dot(n);
    let l2 = e1.dot(e1) * e2.dot(e2);
    let finite = min.is_finite() && max.is_finite();
    // Not `n2 <= ...`: a NaN must count as degenerate.
    let degenerate = n2.partial_cmp(&(DEGENERATE_SIN2 * l2)) != Some(std::cmp::Ordering::Greater) || !finite;
    TriBox { min, flags: degenerate as u32, max, pad: 0 }
}

/// Twin of `triangle_bounds.wgsl`: triangle boxes, degenerate flags and body boxes (over the
/// non-degenerate triangles, as ordered keys), of the bodies that `moved` marks
/// (`has_moved`: an empty `moved` is every body, as the kernel does; the CPU backend leaves
/// out the bodies whose positions did not change since their last update).
pub fn triangle_bounds(
    packing: &Packing,
    positions: &[Vec3],
    tri_boxes: &mut [TriBox],
    body_state: &mut [BodyState],
    moved: &[bool],
) {
    // The bodies in parallel (a scene of many small bodies), and the triangles of a large one.
    let part = |body: &crate::layout::BodyGpu, _| (body.tri_offset as usize, body.tri_count as usize);
    let boxes = packing.split_per_body(tri_boxes, part);
    let bodies = packing.bodies.par_iter().zip(body_state.par_iter_mut()).zip(boxes).enumerate();
    bodies.filter(|(b, _)| has_moved(moved, *b)).for_each(|(_, ((body, state), boxes))| {
        body_triangle_boxes(packing, positions, body.tri_offset as usize, boxes);
        body_box(boxes, state);
    });
}

/// The triangle boxes and degenerate flags of [`triangle_bounds`] alone (not the body boxes:
/// [`body_bounds`] gives them), of the bodies that `moved` marks. The GPU scene's `Auto` mirror
/// uses it, whose triangles have no cross product computed with their normals.
pub fn triangle_boxes(packing: &Packing, positions: &[Vec3], tri_boxes: &mut [TriBox], moved: &[bool]) {
    let part = |body: &crate::layout::BodyGpu, _| (body.tri_offset as usize, body.tri_count as usize);
    let boxes = packing.split_per_body(tri_boxes, part);
    let bodies = packing.bodies.par_iter().zip(boxes).enumerate();
    bodies.filter(|(b, _)| has_moved(moved, *b)).for_each(|(_, (body, boxes))| {
        body_triangle_boxes(packing, positions, body.tri_offset as usize, boxes);
    });
}

/// The boxes of one body's triangles, the first of them packed triangle `first`.
fn body_triangle_boxes(packing: &Packing, positions: &[Vec3], first: usize, boxes: &mut [TriBox]) {
    boxes.par_iter_mut().enumerate().with_min_len(1024).for_each(|(t, out)| {
        let (a, b, c) = tri_vertices(positions, &packing.triangles, first + t);
        *out = triangle_box(a, b, c);
    });
}

/// The body boxes of [`triangle_bounds`] alone, from triangle boxes computed already (the CPU
/// backend computes them with the triangles' cross products, [`triangle_box_crossed`]): of the
/// bodies that `moved` marks, with their non-degenerate triangles counted on the way (into
/// `live`, one per packed body).
pub fn body_bounds(
    packing: &Packing,
    tri_boxes: &[TriBox],
    body_state: &mut [BodyState],
    live: &mut [u32],
    moved: &[bool],
) {
    let bodies = packing.bodies.par_iter().zip(body_state.par_iter_mut()).zip(live.par_iter_mut());
    bodies.enumerate().filter(|(b, _)| has_moved(moved, *b)).for_each(|(_, ((body, state), live))| {
        let first = body.tri_offset as usize;
        *live = body_box_folded(&tri_boxes[first..first + body.tri_count as usize], state);
    });
}

/// A body's box over its non-degenerate triangles' `boxes`, as ordered keys: each box's keys
/// taken at once, as the kernel's `atomicMax` takes them.
fn body_box(boxes: &[TriBox], state: &mut BodyState) {
    let live = boxes.par_iter().with_min_len(1024).filter(|b| b.flags & 1 == 0);
    (state.min_key, state.max_key) = box_keys(live.map(|b| (b.min, b.max)));
}

/// A body's live triangle boxes folded: the minimum and maximum of their floats and their count.
pub(crate) type Folded = (Vec3A, Vec3A, u32);

/// The fold of no box.
pub(crate) const NO_BOX: Folded = (Vec3A::INFINITY, Vec3A::NEG_INFINITY, 0);

/// Two folds in one.
#[inline]
pub(crate) fn union((l0, h0, n0): Folded, (l1, h1, n1): Folded) -> Folded {
    (l0.min(l1), h0.max(h1), n0 + n1)
}

/// `folded` with box `b`, when it is live (not degenerate).
#[inline]
fn fold_live(folded: Folded, b: &TriBox) -> Folded {
    if b.flags & 1 == 0 { union(folded, (b.min.into(), b.max.into(), 1)) } else { folded }
}

/// [`body_box`] for the CPU backend: the same keys from the boxes' minimum and maximum floats,
/// taken four lanes at a time and keyed once. The same keys: a live box is finite (a box with a
/// coordinate that is not is degenerate), and the keys order finite floats as the floats do,
/// both zeros one key (`the_backends_body_boxes_equal_the_twins_with_degenerate_triangles`
/// checks it), in whatever order the boxes are folded. Measured with `cargo bench -p
/// raycontact-benches --bench cpu_bvh -- update-refit` (a refit frame's normals, boxes and
/// refits, 25.6k triangles on one thread), alternated: 0.99–1.05 ms with the boxes keyed one by
/// one, 0.77–0.89 so. Returns the live boxes' count.
fn body_box_folded(boxes: &[TriBox], state: &mut BodyState) -> u32 {
    let chunk = |c: &[TriBox]| c.iter().fold(NO_BOX, fold_live);
    set_box_keys(boxes.par_chunks(4096).map(chunk).reduce(|| NO_BOX, union), state)
}

/// Sets `state`'s box keys to those of the fold of its live triangle boxes, `folded`; returns
/// their count.
pub(crate) fn set_box_keys((lo, hi, count): Folded, state: &mut BodyState) -> u32 {
    // No live box leaves the minimum above the maximum.
    (state.min_key, state.max_key) = if lo.x <= hi.x {
        (lo.to_array().map(|x| !float_to_key(x)), hi.to_array().map(float_to_key))
    } else {
        ([0; 3], [0; 3])
    };
    count
}
