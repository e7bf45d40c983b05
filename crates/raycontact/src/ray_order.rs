//! The order in which both backends cast a body's rays: its vertices sorted by the Morton code of
//! their position within the body's box, computed on the host when the bodies are packed (never
//! per frame). Consecutive rays then start near each other and walk the same part of the
//! target's tree: on the CPU backend that keeps the tree's nodes in cache; on the GPU the
//! `ray_sources` kernel lists each workgroup's vertices in this order, so that a SIMD group's
//! rays follow similar paths (less divergence, fewer distinct nodes fetched per group). A mesh's
//! own vertex order can be anything (a scanned mesh's is close to random), and deformation
//! rarely moves a vertex far from its neighbours, so the order taken at packing time stays
//! coherent. Only the speed depends on it: the closest hit, hence every contact, does not.

use glam::Vec3;
use rayon::prelude::*;

use crate::cpu::expand_bits;
use crate::packing::Packing;

/// Each packed body's vertices (body-local indices) in the Morton order of `positions` within
/// the body's box, ties by index, packed as the vertices are (body `b`'s at `vertex_offset`).
pub(crate) fn vertex_order(packing: &Packing, positions: &[Vec3]) -> Vec<u32> {
    let mut order = vec![0u32; positions.len()];
    let mut segments: Vec<(&crate::layout::BodyGpu, &mut [u32])> = Vec::new();
    let mut rest = order.as_mut_slice();
    for body in &packing.bodies {
        let (seg, tail) = rest.split_at_mut(body.vertex_count as usize);
        segments.push((body, seg));
        rest = tail;
    }
    segments.into_par_iter().for_each(|(body, seg)| {
        let p = &positions[body.vertex_offset as usize..][..body.vertex_count as usize];
        let (lo, hi) = p.iter().fold((Vec3::MAX, Vec3::MIN), |(l, h), x| (l.min(*x), h.max(*x)));
        let scale = 1023.0 / (hi - lo).max_element().max(f32::MIN_POSITIVE);
        let code = |x: Vec3| {
            // A NaN coordinate (not yet validated positions) lands at 0 through the clamp.
            let q = ((x - lo) * scale).clamp(Vec3::ZERO, Vec3::splat(1023.0)).as_uvec3();
            (expand_bits(q.x) << 2) | (expand_bits(q.y) << 1) | expand_bits(q.z)
        };
        let mut keyed: Vec<(u32, u32)> = p.iter().enumerate().map(|(v, x)| (code(*x), v as u32)).collect();
        keyed.sort_unstable();
        for (o, (_, v)) in seg.iter_mut().zip(keyed) {
            *o = v;
        }
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::BodyGpu;

    /// Two bodies of a 16^3 grid of points each, listed in a scrambled order.
    fn scrambled_grids() -> (Packing, Vec<Vec3>) {
        let n = 16u32;
        let count = n * n * n;
        let mut positions = Vec::new();
        for b in 0..2 {
            // i -> i * 1021 mod count is a permutation (1021 is prime, count a power of two).
            positions.extend((0..count).map(|i| {
                let c = (i * 1021) % count;
                Vec3::new((c % n) as f32, ((c / n) % n) as f32, (c / (n * n)) as f32) + 40.0 * b as f32
            }));
        }
        let body = |b: u32| BodyGpu {
            vertex_offset: b * count,
            vertex_count: count,
            ..bytemuck::Zeroable::zeroed()
        };
        (Packing { bodies: vec![body(0), body(1)], ..Packing::default() }, positions)
    }

    #[test]
    fn each_body_is_a_permutation_in_morton_order() {
        let (packing, positions) = scrambled_grids();
        let order = vertex_order(&packing, &positions);
        let count = packing.bodies[0].vertex_count as usize;
        for b in 0..2 {
            let seg = &order[b * count..][..count];
            let mut seen = vec![false; count];
            seg.iter().for_each(|&v| seen[v as usize] = true);
            assert!(seen.iter().all(|&s| s), "body {b}: not a permutation");
            // Consecutive vertices of the order are neighbours on the grid far more often than
            // in the scrambled order: the mean step is close to one grid spacing.
            let p = &positions[b * count..][..count];
            let step = |ids: &mut dyn Iterator<Item = usize>| {
                let ids: Vec<usize> = ids.collect();
                ids.windows(2).map(|w| p[w[0]].distance(p[w[1]])).sum::<f32>() / (ids.len() - 1) as f32
            };
            let ordered = step(&mut seg.iter().map(|&v| v as usize));
            let scrambled = step(&mut (0..count));
            assert!(ordered < 1.6 && scrambled > 5.0, "mean step {ordered} in order, {scrambled} scrambled");
        }
    }
}
