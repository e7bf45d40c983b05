//! The ray figures of an instance: the CPU reference's full pass of the last frame replayed with
//! a tracer that counts rays by kind, BVH nodes (both traversal orders) and triangles; and the
//! GPU walk's counts for the same rays over the trees a GPU implementation's own last frame
//! walked, read back ([`trees_walked`]).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU64};

use glam::Vec3;
use raycontact::internals::cpu::{self, Narrow, Rays, Traced, Tracer};
use raycontact::internals::layout::{BodyPair, NONE, Node, Ray, RayHit, SELF_CLOTH};
use raycontact::internals::{FrameData, Packing};
use raycontact::{BodyId, Scene, WalkCounts};
use rayon::prelude::*;

use crate::results::{RayFigures, TreeWalk};
use crate::scenes::Instance;

/// Counters of the [`CountingTracer`]s of one replay.
#[derive(Default)]
struct RayCounters {
    sources: AtomicU64,
    inward: AtomicU64,
    outward: AtomicU64,
    check: AtomicU64,
    nodes_gpu: AtomicU64,
    nodes_gpu_line: AtomicU64,
    nodes_cpu: AtomicU64,
    wide_cpu: AtomicU64,
    tris: AtomicU64,
    tris_cpu: AtomicU64,
    fallbacks: AtomicU64,
    unreached: AtomicU64,
}

/// The full pass's tracer, counting: each trace through the BVH with the GPU's tree
/// ([`gpu_trees`]) and node order (`cpu::closest_hit`, passing the fans the GPU tuning passes,
/// `cpu::fan_to_pass`, whose hit it returns, and a cloth vertex's two rays also in one
/// `cpu::closest_hits_line_binary`, as the GPU tuning walks them) and with the CPU backend's (`cpu::closest_hit_wide` over its 4-wide
/// trees, and a cloth vertex's two rays in one `cpu::closest_hits_line`), counting rays by kind,
/// nodes and triangles. One per source vertex.
struct CountingTracer<'a> {
    counters: &'a RayCounters,
    /// The source body and whether the pair is a self pair.
    source: usize,
    self_pair: bool,
    /// The source vertex's normal.
    normal: Vec3,
    /// Whether a trace was made (the vertex passed the box filter).
    traced: AtomicBool,
    /// Nodes this source's traces visited (GPU traversal, a cloth vertex's two rays walked
    /// together as the GPU tuning walks them).
    nodes: AtomicU64,
    /// Per packed body, the binary tree the GPU walks ([`gpu_trees`]).
    trees: &'a [&'a [Node]],
    /// Per packed body, that tree's fan words ([`cpu::fit_fans`]), which the kernels' walks read.
    fans: &'a [Vec<u32>],
    /// Whether the CPU backend's walk is counted too (else its counters stay 0).
    cpu_walk: bool,
    /// The kernels' exit memo, as the GPU walk's counts take it.
    exits: &'a ExitCounts,
}

/// The kernels' exit memo (`narrow_phase.wgsl`) in the GPU walk's counts: an exit trace that the
/// kernels answer from it costs them one triangle test and no node, the walk's hit unchanged.
/// They answer every exit trace of a vertex but the first in a pass, and all those of a body
/// that does not move (in a steady state its exits were cast in an earlier frame). So the GPU
/// walk counts each vertex's exit trace once, a body that does not move none; the longest
/// source counts its exit traces, each one its own (any source asking it may be the one that
/// casts it), but a body's that does not move. The CPU walk counts them alike (no wide node
/// fetched, one triangle record tested), so that the two layouts' bytes per ray compare the
/// same walks; the CPU backend's own memo (`TraceMemo`) answers these and more, and the others
/// it answers are counted walked.
struct ExitCounts {
    /// Per packed vertex, whether its exit trace was counted cast.
    cast: Vec<AtomicBool>,
    /// Per packed body, whether it does not move.
    still: Vec<bool>,
}

impl CountingTracer<'_> {
    /// Counts a trace of `ray` on body `b` whose GPU walk found `hit` (`line`: the nodes the GPU
    /// walks for it where a cloth vertex's two rays are walked together, counted once for both),
    /// and the CPU backend's walk of it (`cpu`: its hit's counters).
    fn count(&self, b: usize, ray: &Ray, hit: &RayHit, line: u32, cpu: &RayHit) {
        let c = self.counters;
        let kind = if b == self.source && !self.self_pair {
            &c.check
        } else if ray.dir.dot(self.normal) < 0.0 {
            &c.inward
        } else {
            &c.outward
        };
        kind.fetch_add(1, Relaxed);
        c.nodes_gpu.fetch_add(hit.nodes_visited as u64, Relaxed);
        c.nodes_gpu_line.fetch_add(line as u64, Relaxed);
        self.nodes.fetch_add(line as u64, Relaxed);
        c.nodes_cpu.fetch_add(cpu.nodes_visited as u64, Relaxed);
        c.tris.fetch_add(hit.triangles_tested as u64, Relaxed);
        c.tris_cpu.fetch_add(cpu.triangles_tested as u64, Relaxed);
        c.fallbacks.fetch_add(hit.fallback as u64, Relaxed);
        if !self.traced.swap(true, Relaxed) {
            c.sources.fetch_add(1, Relaxed);
        }
    }
}

impl Tracer for CountingTracer<'_> {
    fn trace(&self, cx: &Narrow<'_>, b: usize, ray: &Ray, ignore: u32, _: u32, _: &mut WalkCounts) -> Traced {
        let body = &cx.packing.bodies[b];
        let nodes = cx.frame.body_nodes(cx.packing, b);
        let tris = &cx.packing.triangles;
        let fans = cpu::fan_to_pass(body, &cx.packing.vertex_tri_offsets, ignore, &self.fans[b]);
        let hit = cpu::closest_hit(body, self.trees[b], cx.positions, tris, ray, ignore, fans);
        let (ordered, fetched) = match cx.frame.body_wide(b) {
            _ if !self.cpu_walk => (RayHit::MISS, 0),
            Some(w) => {
                let h =
                    cpu::closest_hit_wide_counted::<true>(body, nodes, w, cx.positions, tris, ray, ignore);
                (h.hit, h.fetched)
            }
            None => (cpu::closest_hit_ordered(body, nodes, cx.positions, tris, ray, ignore), 0),
        };
        let exit = ignore != NONE && cpu::is_exit_trace(cx, b, ray, ignore, self.normal(cx, ignore));
        if exit {
            let still = self.exits.still[b];
            if still || self.exits.cast[ignore as usize].swap(true, Relaxed) {
                // Answered from the memo, in both walks: one triangle test and no node; the
                // longest source counts a moving body's walk all the same.
                let answered = RayHit { nodes_visited: 0, triangles_tested: 1, fallback: 0, ..hit };
                let answered_cpu =
                    RayHit { nodes_visited: 0, triangles_tested: self.cpu_walk.into(), ..ordered };
                self.count(b, ray, &answered, 0, &answered_cpu);
                if !still {
                    self.nodes.fetch_add(hit.nodes_visited as u64, Relaxed);
                }
                return Traced::cast(hit, None);
            }
        }
        self.count(b, ray, &hit, hit.nodes_visited, &ordered);
        self.counters.wide_cpu.fetch_add(fetched as u64, Relaxed);
        Traced::cast(hit, None)
    }

    /// A cloth vertex's two rays: each ray in its own walk (the software tuning's), both in the
    /// kernels' one walk (`cpu::closest_hits_line_binary`, the GPU tuning's), and both in the
    /// CPU backend's one walk (`cpu::closest_hits_line`); a walk of both counts its nodes once.
    fn trace_line(&self, cx: &Narrow<'_>, b: usize, ray: &Ray, ignore: u32) -> Option<[Traced; 2]> {
        let body = &cx.packing.bodies[b];
        let nodes = cx.frame.body_nodes(cx.packing, b);
        let tris = &cx.packing.triangles;
        let back = Ray { dir: -ray.dir, ..*ray };
        let rays = [ray, &back];
        let fans = cpu::fan_to_pass(body, &cx.packing.vertex_tri_offsets, ignore, &self.fans[b]);
        let gpu_tree = self.trees[b];
        let line = cpu::closest_hits_line_binary(body, gpu_tree, cx.positions, tris, ray, ignore, fans);
        let (ordered, fetched) = match cx.frame.body_wide(b) {
            _ if !self.cpu_walk => ([RayHit::MISS; 2], 0),
            Some(w) => {
                let h =
                    cpu::closest_hits_line_counted::<true>(body, nodes, w, cx.positions, tris, rays, ignore);
                (h.map(|h| h.hit), h[0].fetched)
            }
            None => (rays.map(|r| cpu::closest_hit_ordered(body, nodes, cx.positions, tris, r, ignore)), 0),
        };
        let hits = rays.map(|r| cpu::closest_hit(body, gpu_tree, cx.positions, tris, r, ignore, fans));
        for k in 0..2 {
            self.count(b, rays[k], &hits[k], line[k].nodes_visited, &ordered[k]);
        }
        self.counters.wide_cpu.fetch_add(fetched as u64, Relaxed);
        Some(hits.map(|hit| Traced::cast(hit, None)))
    }

    /// As the kernels and the CPU backend: the rays that cannot reach are not cast, so not
    /// counted (the queries' own nodes are not counted either).
    fn may_reach(&self, cx: &Narrow<'_>, b: usize, p: Vec3, r: f32, ignore: u32) -> bool {
        cpu::BvhTracer.may_reach(cx, b, p, r, ignore)
    }
}

/// Per packed body of the CPU backend's `frame` (`cpu-rayon`'s: `BvhUpdate::Rebuild`), the
/// binary tree the GPU walks in the same frame: the binned-SAH tree the body's wide tree was
/// collapsed from where there is one (a body at rest, whose LBVH the GPU scene replaces by that
/// tree, `BvhStats::rest_trees`; a static body's, which the GPU's is from its first frame at
/// rest on), else its LBVH.
fn gpu_trees<'a>(frame: &'a FrameData, packing: &Packing) -> Vec<&'a [Node]> {
    let sah = |b: usize| frame.body_wide(b).map(|w| &w.sah[..]).filter(|t| !t.is_empty());
    (0..packing.bodies.len()).map(|b| sah(b).unwrap_or_else(|| frame.body_nodes(packing, b))).collect()
}

/// The ray figures of the scene's last frame: the CPU reference's full pass replayed on its
/// BVHs (`cpu::classify` over every tested pair, both directions, self pairs once) with a
/// [`CountingTracer`], so that every case (cloth, predictions, self pairs) is counted.
pub fn ray_figures(scene: &mut Scene, inst: &Instance) -> Result<RayFigures, String> {
    replay(scene, inst, None)
}

/// The GPU walk's counts over the trees that a GPU scene's last frame walked (`gpu`'s LBVHs and
/// rest trees, `gpu-refit`'s refitted binned-SAH trees), read back with its frame
/// (`Scene::frame_data`), for the rays of the CPU reference's last frame (`reference`, the scene
/// of [`ray_figures`], at the same positions): the same replay over the GPU's nodes, so that
/// the implementations' figures differ by their trees alone, without the CPU backend's walk.
pub fn trees_walked(reference: &mut Scene, gpu: &mut Scene, inst: &Instance) -> Result<TreeWalk, String> {
    let frame = gpu.frame_data().map_err(|e| e.to_string())?;
    let packing = gpu.packing();
    if packing.bodies != reference.packing().bodies {
        return Err(format!("{}: the GPU scene's packing is not the reference's", inst.scene.name()));
    }
    let trees: Vec<&[Node]> = (0..packing.bodies.len()).map(|b| frame.body_nodes(packing, b)).collect();
    let f = replay(reference, inst, Some(&trees))?;
    Ok(TreeWalk {
        nodes_per_ray: f.nodes_per_ray_gpu_walk,
        nodes_per_ray_line: f.nodes_per_ray_gpu_line_walk,
        triangles_per_ray: f.triangles_per_ray,
    })
}

/// The replay of [`ray_figures`], its GPU walk over `own` trees (per packed body) where given,
/// else over [`gpu_trees`]; without `own` it counts the CPU backend's walk too (its wide trees).
fn replay(scene: &mut Scene, inst: &Instance, own: Option<&[&[Node]]>) -> Result<RayFigures, String> {
    let cpu_walk = own.is_none();
    let e = |e: raycontact::Error| e.to_string();
    let frame = scene.frame_data().map_err(e)?;
    let packing = scene.packing().clone();
    let (mut positions, mut previous) = (Vec::new(), Vec::new());
    for id in &packing.ids {
        positions.extend_from_slice(scene.positions(*id).map_err(e)?);
        previous.extend(scene.previous_positions(*id).map_err(e)?);
    }
    let ids: Vec<BodyId> = scene.bodies().collect();
    let prediction = scene.prediction_distance();
    let pairs: Vec<BodyPair> = match &inst.pairs {
        Some(p) => p
            .iter()
            .map(|&(a, b)| {
                let (a, b) = (packing.index_of(ids[a]), packing.index_of(ids[b]));
                BodyPair { a: a.expect("packed") as u32, b: b.expect("packed") as u32, prediction, pad: 0 }
            })
            .collect(),
        None => cpu::broad_phase(&packing.bodies, &frame.body_state, SELF_CLOTH, prediction),
    };
    let cx = Narrow {
        packing: &packing,
        frame: &frame,
        positions: &positions,
        previous: &previous,
        remember_exit: false,
        inversions: true,
    };
    let counters = RayCounters::default();
    let trees = match own {
        Some(own) => own.to_vec(),
        None => gpu_trees(&frame, &packing),
    };
    let fans: Vec<Vec<u32>> = (0..packing.bodies.len())
        .into_par_iter()
        .map(|b| cpu::fit_fans(&packing.bodies[b], trees[b], &packing.triangles))
        .collect();
    let mut still = vec![false; packing.bodies.len()];
    for (i, id) in ids.iter().enumerate() {
        if let (Some(b), Some(body)) = (packing.index_of(*id), inst.bodies.get(i)) {
            still[b] = !body.moving;
        }
    }
    let exits = ExitCounts { cast: positions.iter().map(|_| AtomicBool::new(false)).collect(), still };
    let sources = cpu::ray_sources(&packing, &frame.body_state, &positions, &pairs);
    // Each source's nodes, with its body and vertex: the longest is kept.
    let longest = sources.par_iter().with_min_len(256).map(|&[k, v]| {
        let p = &pairs[(k / 2) as usize];
        let (a, b) = if k % 2 == 0 { (p.a as usize, p.b as usize) } else { (p.b as usize, p.a as usize) };
        let body = &packing.bodies[a];
        let tracer = CountingTracer {
            counters: &counters,
            source: a,
            self_pair: a == b,
            normal: frame.normals[(body.vertex_offset + v) as usize],
            traced: AtomicBool::new(false),
            nodes: AtomicU64::new(0),
            trees: &trees,
            fans: &fans,
            cpu_walk,
            exits: &exits,
        };
        let mut sink = Vec::new();
        let c = cpu::classify(&cx, &tracer, (a, v, b, k), p.prediction, Rays::BOTH, &mut sink);
        counters.unreached.fetch_add(u64::from(c.unreached), Relaxed);
        (tracer.nodes.load(Relaxed), a, v)
    });
    let (longest_source_nodes, body, vertex) = longest.max_by_key(|&(n, _, _)| n).unwrap_or((0, 0, 0));
    let longest_source = match ids.iter().position(|&id| Some(&id) == packing.ids.get(body)) {
        Some(i) if longest_source_nodes > 0 => Some((i, vertex)),
        _ => None,
    };
    // From the packing's vertex -> triangles incidence (what `vertex_normals` sums).
    let largest_valence = packing.vertex_tri_offsets.windows(2).map(|w| w[1] - w[0]).max();
    let get = |a: &AtomicU64| a.load(Relaxed);
    let c = &counters;
    let rays = (get(&c.inward) + get(&c.outward) + get(&c.check)).max(1) as f64;
    Ok(RayFigures {
        pairs: pairs.len(),
        sources: get(&c.sources),
        inward_rays: get(&c.inward),
        outward_rays: get(&c.outward),
        check_rays: get(&c.check),
        nodes_per_ray_gpu_walk: get(&c.nodes_gpu) as f64 / rays,
        nodes_per_ray_gpu_line_walk: get(&c.nodes_gpu_line) as f64 / rays,
        nodes_per_ray_cpu_walk: get(&c.nodes_cpu) as f64 / rays,
        triangles_per_ray: get(&c.tris) as f64 / rays,
        wide_nodes_per_ray_cpu_walk: get(&c.wide_cpu) as f64 / rays,
        triangles_per_ray_cpu_walk: get(&c.tris_cpu) as f64 / rays,
        stack_fallbacks: get(&c.fallbacks),
        unreached: get(&c.unreached),
        longest_source_nodes,
        longest_source,
        largest_valence: largest_valence.unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use raycontact::{Pairs, Scene};

    use super::ray_figures;
    use crate::scenes::{self, SceneName, SceneOptions, SizePreset};

    #[test]
    fn a_body_that_does_not_move_walks_none_of_its_exit_traces_in_either_walk() {
        // cloth-layers' body is in a pair with each of its three garments, each asking its
        // vertices' exit traces: moving, the memo answers each one's asks but the first; still,
        // every ask (its exits were walked in an earlier frame). The same rays over the same
        // trees either way, fewer nodes read in both walks, the answered ones each testing one
        // triangle.
        let opts = SceneOptions { size: SizePreset::Tiny, ..SceneOptions::default() };
        let inst = scenes::build(SceneName::ClothLayers, &opts).unwrap().remove(0);
        assert!(inst.bodies[0].moving && inst.bodies.len() == 4, "the body and three garments");
        let mut scene = Scene::new_cpu(Some(1)).unwrap();
        for (b, body) in inst.bodies.iter().enumerate() {
            scene.add_body(inst.positions_at(0, b), &body.mesh.triangles, body.kind).unwrap();
        }
        scene.set_prediction_distance(inst.prediction).unwrap();
        scene.detect(Pairs::Overlapping).unwrap();
        let moving = ray_figures(&mut scene, &inst).unwrap();
        let mut held = inst.clone();
        held.bodies[0].moving = false;
        let still = ray_figures(&mut scene, &held).unwrap();
        assert!(moving.check_rays > 0, "exit traces asked");
        assert_eq!(
            (still.inward_rays, still.outward_rays, still.check_rays),
            (moving.inward_rays, moving.outward_rays, moving.check_rays)
        );
        let fewer = |name: &str, s: f64, m: f64| assert!(s < m, "{name}: {s} still, {m} moving");
        fewer("GPU walk nodes", still.nodes_per_ray_gpu_walk, moving.nodes_per_ray_gpu_walk);
        fewer("CPU walk boxes", still.nodes_per_ray_cpu_walk, moving.nodes_per_ray_cpu_walk);
        fewer("CPU walk wide nodes", still.wide_nodes_per_ray_cpu_walk, moving.wide_nodes_per_ray_cpu_walk);
    }
}
