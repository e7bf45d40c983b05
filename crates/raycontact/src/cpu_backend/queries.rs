//! The CPU backend's ray queries, on its rayon pool: closest hits through the backend's own
//! traversal ([`crate::cpu::closest_hit_wide`] over the body's 4-wide tree,
//! [`crate::cpu::closest_hit_ordered`] where the frame has none; each body searched up to the
//! nearest hit so far, as `raycast.wgsl` does), any and all hits through the kernels' twins
//! ([`crate::cpu::raycast_anyhit`], [`crate::cpu::raycast_all`]).

use rayon::prelude::*;

use super::CpuScene;
use crate::cpu::{QueryScene, closest_hit_ordered, closest_hit_wide};
use crate::layout::{NONE, Ray, RayHit, RayHitCount, RayHitTotals, RayIntersection};
use crate::packing::Packing;

impl CpuScene {
    /// What the queries read: the packing, the last frame, the current positions.
    fn query_scene<'a>(&'a self, packing: &'a Packing) -> QueryScene<'a> {
        QueryScene { packing, frame: &self.frame, positions: &self.current }
    }

    /// Closest hits of `rays` against packed bodies `targets` (not empty); ties in `t` go to the
    /// earlier body of the list. The counters are the backend's own walk's.
    pub fn cast_rays(&mut self, packing: &Packing, targets: &[u32], rays: &[Ray]) -> Vec<RayHit> {
        self.fit_lagging(packing);
        if let [b] = targets {
            let mut hits = self.raycast(packing, *b as usize, rays);
            for h in hits.iter_mut().filter(|h| h.is_hit()) {
                h.body = 0;
            }
            return hits;
        }
        let scene = self.query_scene(packing);
        let one = |ray: &Ray| {
            let mut ray = *ray;
            let mut best = RayHit::MISS;
            for (k, &b) in targets.iter().enumerate() {
                let nodes = scene.frame.body_nodes(packing, b as usize);
                let body = &packing.bodies[b as usize];
                let tris = &packing.triangles;
                let h = match scene.frame.body_wide(b as usize) {
                    Some(w) => closest_hit_wide(body, nodes, w, scene.positions, tris, &ray, NONE),
                    None => closest_hit_ordered(body, nodes, scene.positions, tris, &ray, NONE),
                };
                best.nodes_visited += h.nodes_visited;
                best.triangles_tested += h.triangles_tested;
                best.fallback |= h.fallback;
                if h.is_hit() && h.t < best.t {
                    best = RayHit { t: h.t, triangle: h.triangle, u: h.u, v: h.v, body: k as u32, ..best };
                    ray.tmax = h.t;
                }
            }
            best
        };
        self.pool.install(|| rays.par_iter().with_min_len(64).map(one).collect())
    }

    /// Any hit of each of `rays` against packed bodies `targets` ([`crate::cpu::raycast_anyhit`]).
    pub fn cast_rays_anyhit(&mut self, packing: &Packing, targets: &[u32], rays: &[Ray]) -> Vec<RayHit> {
        self.fit_lagging(packing);
        let scene = self.query_scene(packing);
        self.pool.install(|| crate::cpu::raycast_anyhit(&scene, targets, rays))
    }

    /// All hits of `rays` against packed bodies `targets`, the first `max_hits` of each ray kept
    /// ([`crate::cpu::raycast_all`]).
    pub fn cast_rays_all(
        &mut self,
        packing: &Packing,
        targets: &[u32],
        rays: &[Ray],
        max_hits: u32,
    ) -> (RayHitTotals, Vec<RayHitCount>, Vec<RayIntersection>) {
        self.fit_lagging(packing);
        let scene = self.query_scene(packing);
        self.pool.install(|| crate::cpu::raycast_all(&scene, targets, rays, max_hits))
    }
}
