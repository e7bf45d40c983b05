//! Twin of `shaders/morton.wgsl`: 30-bit Morton codes of the triangles' centroids in their
//! body's box, the (key, value) pairs of the sort (a body of a few tiles keeps the top 23 bits
//! of its codes, one of a few thousand triangles the top 15: [`key_form`]), and each body's
//! leaf and degenerate counts.
//! The body's box is decoded from its keys by `BodyState::bounds_keys`, the twin of
//! `body_min` and `body_max` in `shaders/shared/common.wgsl` (in [`super::shared::common`]).

use glam::Vec3;
use rayon::prelude::*;

use super::shared::common::tri_vertices;
use crate::layout::{BodyState, KeyForm, ONE_THIRD, TriBox, key_form};
use crate::packing::{Packing, has_moved};

/// Triangles whose codes are computed together.
const CHUNK: usize = 64;

/// Spreads the low 10 bits of `v` two bits apart.
#[inline(always)]
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
    let rel = corner_sum(a, b, c, lo);
    code_of_sum([rel.x, rel.y, rel.z], scale)
}

/// A triangle's corners relative to `lo`, summed in `morton.wgsl`'s order.
#[inline(always)]
fn corner_sum(a: Vec3, b: Vec3, c: Vec3, lo: Vec3) -> Vec3 {
    ((a - lo) + (b - lo)) + (c - lo)
}

/// The Morton code of a [`corner_sum`] `rel` at `scale`: each coordinate scaled, clamped to
/// [0, 1023] by `min` then `max` (a NaN goes to 1023, where `clamp` would keep it), truncated
/// (in that range the signed conversion is the unsigned one), and the three interleaved.
#[inline(always)]
fn code_of_sum(rel: [f32; 3], scale: f32) -> u32 {
    #[allow(clippy::manual_clamp)]
    let [x, y, z] = rel.map(|x| (x * scale).min(1023.0).max(0.0) as i32 as u32);
    (expand_bits(x) << 2) | (expand_bits(y) << 1) | expand_bits(z)
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
///
/// The codes are made 64 triangles at a time (a chunk): the corner sums gathered first, then
/// the chunk's quantisation and bit interleaving in straight loops over its lanes, which the
/// compiler vectorises (the operations of [`morton_code`], lane by lane: the same keys), where
/// one triangle at a time did the interleaving's shifts and masks one lane at a time. The
/// `morton` stage (`cpu-1`, medians of 10 frames, 4 runs alternated with the build before,
/// 2-core VM, 2026-12-07: `raycontact-bench --cpu --no-parry --scene hermann-tori,tori-scaling,
/// resting-pile,cloth-layers,eight-sheets,mesh-scaling,files --tori 8,64 --triangles
/// 40000,640000 --implementations cpu-1,cpu-rayon --frames 10`, the armadillo pair as files):
/// `mesh-scaling` 641k 8.29–8.42 -> 5.38–5.49 ms, `tori-scaling` 64 1.34–1.36 -> 0.86–0.90,
/// `cloth-layers` 0.70–0.73 -> 0.47–0.51, `eight-sheets` 0.84–0.88 -> 0.55–0.56, the armadillo
/// pair 0.79–0.84 -> 0.49–0.50, `resting-pile` 0.58–0.61 -> 0.38–0.42 (one run of each
/// before slower still); the same keys, trees and contacts.
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
            .par_chunks_mut(CHUNK)
            .zip(values.par_chunks_mut(CHUNK))
            .enumerate()
            .with_min_len(1024 / CHUNK)
            .map(|(c, (keys, values))| {
                let first = range.start + c * CHUNK;
                // Each triangle's corner sum, gathered, then the codes of the chunk in a
                // straight loop over its lanes, which the compiler vectorises (`morton_code`'s
                // operations, lane by lane).
                let mut rel = [[0f32; CHUNK]; 3];
                for (k, value) in values.iter_mut().enumerate() {
                    let t = first + k;
                    *value = t as u32;
                    let (a, b, c) = tri_vertices(positions, &packing.triangles, t);
                    let r = corner_sum(a, b, c, lo);
                    (rel[0][k], rel[1][k], rel[2][k]) = (r.x, r.y, r.z);
                }
                for (k, key) in keys.iter_mut().enumerate() {
                    *key = code_of_sum([rel[0][k], rel[1][k], rel[2][k]], scale) >> shift;
                }
                if all_live {
                    return keys.len() as u32;
                }
                let mut live = 0;
                for (k, key) in keys.iter_mut().enumerate() {
                    if tri_boxes[first + k].flags & 1 != 0 {
                        *key = degenerate;
                    } else {
                        live += 1;
                    }
                }
                live
            })
            .sum::<u32>();
        state.leaf_count = leaves;
        state.degenerate_count = body.tri_count - leaves;
    });
}
