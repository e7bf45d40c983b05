//! Twin of `shaders/morton.wgsl`: 30-bit Morton codes of the triangles' centroids in their
//! body's box, the (key, value) pairs of the sort (a body of a few tiles keeps the top 23 bits
//! of its codes, one of a few thousand triangles the top 15: [`key_form`]), and each body's
//! leaf and degenerate counts.
//! The body's box is decoded from its keys by `BodyState::bounds_keys`, the twin of
//! `body_min` and `body_max` in `shaders/shared/common.wgsl` (in [`super::shared::common`]).

use glam::{UVec3, Vec3};
use rayon::prelude::*;

use super::shared::common::tri_vertices;
use crate::layout::{BodyState, KeyForm, ONE_THIRD, TriBox, key_form};
use crate::packing::{Packing, has_moved};

/// Spreads the low 10 bits of `v` two bits apart.
pub fn expand_bits(v: u32) -> u32 {
    let mut x = v & 0x3ff;
    x = (x | (x << 16)) & 0x0300_00ff;
    x = (x | (x << 8)) & 0x0300_f00f;
    x = (x | (x << 4)) & 0x030c_30c3;
    x = (x | (x << 2)) & 0x0924_9249;
    x
}

/// `1024 / s / 3` where `s` is the smallest power of two at or above `extent`.
pub fn quantisation_scale(extent: f32) -> f32 {
    let bits = extent.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32;
    if bits & 0x7f_ffff != 0 {
        e += 1;
    }
    let se = (264 - e).clamp(1, 254);
    f32::from_bits((se as u32) << 23) * ONE_THIRD
}

/// Morton code of a triangle in a body box (lower corner `lo`, scale from
/// [`quantisation_scale`]), exactly as `morton.wgsl` computes it.
pub fn morton_code(a: Vec3, b: Vec3, c: Vec3, lo: Vec3, scale: f32) -> u32 {
    let rel = ((a - lo) + (b - lo)) + (c - lo);
    let q = (rel * scale).min(Vec3::splat(1023.0)).max(Vec3::ZERO);
    let qi = UVec3::new(q.x as u32, q.y as u32, q.z as u32);
    (expand_bits(qi.x) << 2) | (expand_bits(qi.y) << 1) | expand_bits(qi.z)
}

/// Twin of `morton.wgsl`: keys (Morton code, or
/// [`DEGENERATE_KEY`](crate::layout::DEGENERATE_KEY); for a body with short or tiny keys the
/// code's top 23 or 15 bits, or their degenerate key: [`key_form`]) and values (packed triangle
/// index) in packed triangle order, and each body's leaf and degenerate counts, for the bodies
/// that `moved` marks (`has_moved`: an empty `moved` is every body, as the kernel does).
/// `live` may give a body's count of non-degenerate triangles (the caller's, where it counted
/// them; anything else where it did not, or empty): a body all of whose triangles it counts
/// has no degenerate one, and its triangles' flags are not read (32 bytes a triangle for one
/// bit: on `mesh-scaling`'s 641k triangles a third of this stage).
#[allow(clippy::too_many_arguments)]
pub fn morton(
    packing: &Packing,
    positions: &[Vec3],
    tri_boxes: &[TriBox],
    live: &[u32],
    body_state: &mut [BodyState],
    keys: &mut [u32],
    values: &mut [u32],
    moved: &[bool],
) {
    // The bodies in parallel (a scene of many small bodies), and the triangles of a large one.
    let part = |body: &crate::layout::BodyGpu, _| (body.tri_offset as usize, body.tri_count as usize);
    let (keys, values) = (packing.split_per_body(keys, part), packing.split_per_body(values, part));
    let bodies = packing.bodies.par_iter().zip(body_state.par_iter_mut()).zip(keys).zip(values).enumerate();
    bodies.filter(|(b, _)| has_moved(moved, *b)).for_each(|(b, (((body, state), keys), values))| {
        let range = body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize;
        let all_live = live.get(b) == Some(&body.tri_count);
        let (lo, hi) = state.bounds_keys();
        let scale = quantisation_scale((hi - lo).max_element());
        let KeyForm { shift, degenerate, .. } = key_form(body.tri_count, body.tile_count);
        let leaves = keys
            .par_iter_mut()
            .zip(values.par_iter_mut())
            .enumerate()
            .with_min_len(1024)
            .map(|(i, (key, value))| {
                let t = range.start + i;
                *value = t as u32;
                if !all_live && tri_boxes[t].flags & 1 != 0 {
                    *key = degenerate;
                    0u32
                } else {
                    let (a, b, c) = tri_vertices(positions, &packing.triangles, t);
                    *key = morton_code(a, b, c, lo, scale) >> shift;
                    1
                }
            })
            .sum::<u32>();
        state.leaf_count = leaves;
        state.degenerate_count = body.tri_count - leaves;
    });
}
