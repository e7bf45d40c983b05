//! Twin of `shaders/ray_sources.wgsl`: the source vertices of the narrow phase, those within
//! the pair's reach of the target's box.

use glam::Vec3;
use rayon::prelude::*;

use super::shared::common::reach;
use crate::layout::{BODY_CLOTH, BodyPair, BodyState};
use crate::order_runs::{OrderRuns, RUN};
use crate::packing::Packing;

/// Twin of `ray_sources.wgsl`: the source vertices of the narrow phase, (directed pair k,
/// body-local vertex), in that order (the GPU appends them in any order: each workgroup's run in the body's ray
/// order, a Morton order of its vertices): every vertex of the
/// source body of each directed pair (2k: `a -> b`, 2k + 1: `b -> a`, one direction for a self
/// pair) but those outside the target's box grown by the pair's [`reach`] `max(prediction,
/// e_a + e_b)` (not tested for a self pair nor for volumetric -> cloth).
pub fn ray_sources(
    packing: &Packing,
    body_state: &[BodyState],
    positions: &[Vec3],
    pairs: &[BodyPair],
) -> Vec<[u32; 2]> {
    sources(packing, body_state, positions, pairs, None)
}

/// A directed pair of the narrow phase: its index k (2i: `a -> b` of pair i, 2i + 1: `b -> a`),
/// its source and target bodies and its prediction distance.
type Directed = (u32, usize, usize, f32);

/// The directed pairs of `pairs`, into `out` (in place of what it held).
fn directed(pairs: &[BodyPair], out: &mut Vec<Directed>) {
    out.clear();
    for (i, p) in pairs.iter().enumerate() {
        out.push((2 * i as u32, p.a as usize, p.b as usize, p.prediction));
        if p.a != p.b {
            out.push((2 * i as u32 + 1, p.b as usize, p.a as usize, p.prediction));
        }
    }
}

/// The CPU backend's source lists ([`Self::fill`]), kept from frame to frame so that listing a
/// frame's sources allocates nothing once they have grown: the directed pairs, each one's list,
/// and the lists one after the other.
#[derive(Debug, Default)]
pub(crate) struct SourceLists {
    directed: Vec<Directed>,
    lists: Vec<Vec<[u32; 2]>>,
    all: Vec<[u32; 2]>,
}

impl SourceLists {
    /// [`ray_sources`]' vertices with each directed pair's run in its body's ray order, as each
    /// workgroup of the kernel appends its run: `order.0` holds every body's local vertices in
    /// that order, at the body's vertex offset (the CPU backend's: by Morton code of the
    /// positions the packing was made with), and `order.1` the boxes of its runs at `positions`
    /// (a run outside the target's grown box is skipped whole, one inside it listed whole: none
    /// of the first's vertices would be listed, all of the second's; a run holding a NaN has the
    /// infinite box). The CPU backend casts its rays in this order, so that consecutive rays
    /// walk the same part of the target's tree.
    pub(crate) fn fill(
        &mut self,
        packing: &Packing,
        body_state: &[BodyState],
        positions: &[Vec3],
        pairs: &[BodyPair],
        order: (&[u32], &OrderRuns),
    ) -> &[[u32; 2]] {
        directed(pairs, &mut self.directed);
        let n = self.directed.len();
        if self.lists.len() < n {
            self.lists.resize_with(n, Vec::new);
        }
        let lists = self.lists[..n].par_iter_mut().zip(&self.directed);
        lists.for_each(|(list, &d)| list_into(packing, body_state, positions, d, Some(order), list));
        self.all.clear();
        for list in &self.lists[..n] {
            self.all.extend_from_slice(list);
        }
        &self.all
    }
}

fn sources(
    packing: &Packing,
    body_state: &[BodyState],
    positions: &[Vec3],
    pairs: &[BodyPair],
    order: Option<(&[u32], &OrderRuns)>,
) -> Vec<[u32; 2]> {
    let mut d = Vec::new();
    directed(pairs, &mut d);
    let lists: Vec<Vec<[u32; 2]>> = d
        .into_par_iter()
        .map(|d| {
            let mut list = Vec::new();
            list_into(packing, body_state, positions, d, order, &mut list);
            list
        })
        .collect();
    lists.concat()
}

/// The sources of directed pair `(k, a, b, prediction)`, into `list` (in place of what it held).
fn list_into(
    packing: &Packing,
    body_state: &[BodyState],
    positions: &[Vec3],
    (k, a, b, prediction): Directed,
    order: Option<(&[u32], &OrderRuns)>,
    list: &mut Vec<[u32; 2]>,
) {
    list.clear();
    let (body_a, body_b) = (&packing.bodies[a], &packing.bodies[b]);
    let cloth_a = body_a.flags & BODY_CLOTH != 0;
    let cloth_b = body_b.flags & BODY_CLOTH != 0;
    let reach = reach(prediction, body_a.half_thickness, body_b.half_thickness);
    let (lo, hi) = body_state[b].bounds_keys();
    let (lo, hi) = (lo - reach, hi + reach);
    let tested = a != b && (cloth_a || !cloth_b);
    // Whether the box (min, max) lies outside the target's grown box (a point: min = max).
    let outside = |min: Vec3, max: Vec3| max.cmplt(lo).any() || min.cmpgt(hi).any();
    let listed = |&local: &u32| {
        let p = positions[(body_a.vertex_offset + local) as usize];
        !tested || !outside(p, p)
    };
    match order {
        Some((o, runs)) => {
            let o = &o[body_a.vertex_offset as usize..][..body_a.vertex_count as usize];
            let near = |&(rlo, rhi): &(Vec3, Vec3)| !outside(rlo, rhi);
            let inside = |&(rlo, rhi): &(Vec3, Vec3)| rlo.cmpge(lo).all() && rhi.cmple(hi).all();
            let runs = runs.body(a);
            // Room for the runs not outside (what a list sized by the body would waste on a
            // ground under fifty bodies).
            let room = o.chunks(RUN).zip(runs).filter(|(_, r)| !tested || near(r)).map(|(run, _)| run.len());
            list.reserve(room.sum());
            for (run, r) in o.chunks(RUN).zip(runs) {
                if !tested || inside(r) {
                    list.extend(run.iter().map(|&local| [k, local]));
                } else if near(r) {
                    list.extend(run.iter().copied().filter(listed).map(|local| [k, local]));
                }
            }
        }
        None => list.extend((0..body_a.vertex_count).filter(listed).map(|local| [k, local])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{BodyGpu, float_to_key};

    /// A body's state whose box is (lo, hi).
    fn state(lo: Vec3, hi: Vec3) -> BodyState {
        BodyState {
            min_key: lo.to_array().map(|x| !float_to_key(x)),
            max_key: hi.to_array().map(float_to_key),
            leaf_count: 1,
            degenerate_count: 0,
        }
    }

    /// The listing that skips runs outside the target's grown box and takes those inside whole
    /// lists what the per-vertex test lists, in the ray order: a flat grid against small boxes
    /// over it, a box over all of it, one that misses it, and a NaN vertex (which no comparison
    /// rejects).
    #[test]
    fn skipping_runs_lists_what_the_vertex_test_lists() {
        let n = 40u32;
        let mut positions: Vec<Vec3> =
            (0..n * n).map(|i| Vec3::new((i * 7 % n) as f32, 0.0, (i * 7 / n % n) as f32 * 0.5)).collect();
        positions[333] = Vec3::new(f32::NAN, 0.0, 0.0);
        let targets = [
            (Vec3::new(3.0, -1.0, 2.0), Vec3::new(5.0, 1.0, 4.0)),
            (Vec3::new(30.2, -0.5, 9.0), Vec3::new(31.0, 2.0, 9.5)),
            (Vec3::splat(-100.0), Vec3::splat(100.0)),
            (Vec3::splat(200.0), Vec3::splat(300.0)),
            // Far from every vertex in x, as a NaN x is not: only the NaN vertex is listed, its
            // run not skipped although its other vertices' box is far off.
            (Vec3::new(500.0, -1.0, -0.1), Vec3::new(600.0, 1.0, 0.1)),
        ];
        let mut bodies = vec![BodyGpu { vertex_count: n * n, ..bytemuck::Zeroable::zeroed() }];
        let mut states = vec![state(Vec3::ZERO, Vec3::new(39.0, 0.0, 19.5))];
        for (lo, hi) in targets {
            bodies.push(BodyGpu {
                vertex_offset: positions.len() as u32,
                vertex_count: 2,
                ..bytemuck::Zeroable::zeroed()
            });
            positions.extend([lo, hi]);
            states.push(state(lo, hi));
        }
        let packing = Packing { bodies, ..Packing::default() };
        let pairs: Vec<BodyPair> = (1..6).map(|b| BodyPair { a: 0, b, prediction: 0.25, pad: 0 }).collect();
        // Each body's vertices by x, then z: runs of neighbours along x.
        let mut order = Vec::new();
        for b in &packing.bodies {
            let mut local: Vec<u32> = (0..b.vertex_count).collect();
            let at = |v: u32| positions[(b.vertex_offset + v) as usize];
            local.sort_by(|&u, &v| at(u).x.total_cmp(&at(v).x).then(at(u).z.total_cmp(&at(v).z)));
            // The NaN vertex first in its run (a min or max that skips NaN, or returns it when
            // it comes second, would make its run's box that of the others alone).
            local.retain(|&v| b.vertex_offset != 0 || v != 333);
            if b.vertex_offset == 0 {
                local.insert(0, 333);
            }
            order.extend(local);
        }
        let mut runs = OrderRuns::default();
        runs.update(&packing, &positions, &order);
        let mut lists = SourceLists::default();
        let skipping = lists.fill(&packing, &states, &positions, &pairs, (&order, &runs)).to_vec();
        let every = ray_sources(&packing, &states, &positions, &pairs);
        for k in 0..10u32 {
            let got: Vec<u32> = skipping.iter().filter(|s| s[0] == k).map(|s| s[1]).collect();
            let mut want: Vec<u32> = every.iter().filter(|s| s[0] == k).map(|s| s[1]).collect();
            // The same vertices, in the source body's ray order.
            let pair = &pairs[(k / 2) as usize];
            let source = &packing.bodies[if k % 2 == 0 { pair.a } else { pair.b } as usize];
            let ordered = &order[source.vertex_offset as usize..][..source.vertex_count as usize];
            let mut rank = vec![0; ordered.len()];
            ordered.iter().enumerate().for_each(|(i, &v)| rank[v as usize] = i);
            want.sort_by_key(|&v| rank[v as usize]);
            assert_eq!(got, want, "directed pair {k}");
            if k == 4 || k == 8 {
                assert!(want.contains(&333), "directed pair {k}: the NaN vertex is listed");
            }
        }
        assert!(every.iter().filter(|s| s[0] == 0).count() > 1, "the first box lists some of the grid");
    }
}
