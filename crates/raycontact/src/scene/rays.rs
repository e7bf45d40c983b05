//! [`Scene`]'s ray queries against one body or several at once ([`RayTargets`]): the closest hit
//! ([`Scene::cast_rays`], parry's `cast_ray`, Warp's `mesh_query_ray`), any hit for occlusion
//! ([`Scene::cast_rays_anyhit`], parry's `intersects_ray`, Warp's `mesh_query_ray_anyhit`) and
//! all hits up to a cap per ray ([`Scene::cast_rays_all`], parry's `intersections_with_ray`), on
//! either backend; and each of them recorded into the caller's encoder over the caller's GPU
//! buffers ([`Scene::record_cast_rays`], [`Scene::record_cast_rays_anyhit`],
//! [`Scene::record_cast_rays_all`]), as [`Scene::record_detect`] records a detection.

use std::collections::HashSet;

use glam::Vec3;

use super::Scene;
use crate::backend::Engine;
use crate::error::{Error, Result};
use crate::gpu::QueryKind;
use crate::layout::{QueryTarget, Ray, RayHit};
use crate::rays::{AllHits, RayTargets};

impl Scene {
    /// The packed indices of `targets`: live, packed, distinct, at least one; the BVHs fresh.
    pub(super) fn packed_targets(&self, targets: RayTargets<'_>) -> Result<Vec<u32>> {
        self.require_fresh()?;
        let ids = targets.ids();
        if ids.is_empty() {
            return Err(Error::InvalidInput { what: "a ray query needs at least one body".into() });
        }
        let mut seen = HashSet::with_capacity(ids.len());
        let mut packed = Vec::with_capacity(ids.len());
        for &id in ids {
            self.body(id)?;
            let b = self.packing.index_of(id).ok_or(Error::UnknownBody { body: id })?;
            if !seen.insert(b) {
                return Err(Error::InvalidInput {
                    what: format!("body {id} is listed twice in a ray query"),
                });
            }
            packed.push(b as u32);
        }
        Ok(packed)
    }

    /// The GPU records of packed bodies `targets`.
    pub(super) fn target_records(&self, targets: &[u32]) -> Vec<QueryTarget> {
        crate::cpu::query_targets(&self.packing, targets)
    }

    /// The closest hit of each ray against `targets` — one body (`scene.cast_rays(id, &rays)`)
    /// or several at once (`scene.cast_rays(&[a, b], &rays)`) — through their BVHs as of the
    /// last update. The hit names its body by its position in the list (`RayHit::body`, 0 for a
    /// single body; [`RayTargets::get`] gives its id) and its triangle by the body's own index.
    /// Hits count within `[tmin, tmax]` (parry's `cast_ray` with `max_time_of_impact`, Warp's
    /// `mesh_query_ray`; both faces hit). A ray through a shared edge or vertex hits one of the
    /// incident triangles (the watertight test never lets it through); equal `t` goes to the
    /// earlier body of the list, then to the lower triangle index. On the GPU: one dispatch, one
    /// submission and one readback of `rays.len()` hits (of 32 bytes), per batch that fits the
    /// device's buffer limits (4 million rays under WebGPU's defaults).
    ///
    /// Errors: [`Error::StaleBvh`] when bodies or positions changed since the last update,
    /// [`Error::UnknownBody`], [`Error::InvalidInput`] for an empty list or a body listed twice.
    ///
    /// ```no_run
    /// use glam::{Affine3A, Vec3};
    /// use raycontact::{BodyKind, GpuContext, Ray, Scene, meshes};
    /// let ctx = GpuContext::new()?;
    /// let mut scene = Scene::new(&ctx);
    /// let ball = meshes::icosphere(1.0, 3);
    /// let near = ball.transformed(Affine3A::from_translation(Vec3::Z * 3.0));
    /// let a = scene.add_body(&ball.positions, &ball.triangles, BodyKind::Volumetric)?;
    /// let b = scene.add_body(&near.positions, &near.triangles, BodyKind::Volumetric)?;
    /// scene.update()?;
    /// let down = [Ray::new(Vec3::Z * 10.0, -Vec3::Z)];
    /// let hit = scene.cast_rays(&[a, b], &down)?[0];
    /// assert_eq!(hit.body, 1); // b, the nearer one
    /// assert!((hit.t - 6.0).abs() < 0.05);
    /// # Ok::<(), raycontact::Error>(())
    /// ```
    #[doc(alias = "cast_ray")]
    #[doc(alias = "mesh_query_ray")]
    pub fn cast_rays<'t>(&mut self, targets: impl Into<RayTargets<'t>>, rays: &[Ray]) -> Result<Vec<RayHit>> {
        self.one_hit_per_ray(QueryKind::Closest, targets.into(), rays)
    }

    /// [`Scene::cast_rays`] with the unit normal of each hit triangle at the positions of the
    /// last update (`(b - a) × (c - a)` normalised: outward for a volumetric body, whose
    /// triangles turn counter-clockwise seen from outside; `Vec3::ZERO` for a miss), as parry's
    /// `cast_ray_and_get_normal`. The ray hits the front face when `dir · normal < 0` (Warp's
    /// `sign`). The normals are computed on the host from the hits read back.
    #[doc(alias = "cast_ray_and_get_normal")]
    pub fn cast_rays_and_get_normal<'t>(
        &mut self,
        targets: impl Into<RayTargets<'t>>,
        rays: &[Ray],
    ) -> Result<Vec<(RayHit, Vec3)>> {
        let targets = targets.into();
        let hits = self.cast_rays(targets, rays)?;
        hits.into_iter()
            .map(|h| {
                let Some(id) = targets.get(h.body).filter(|_| h.is_hit()) else {
                    return Ok((h, Vec3::ZERO));
                };
                let body = self.body(id)?;
                let [a, b, c] =
                    body.data.triangles[h.triangle as usize].map(|v| body.frame_positions()[v as usize]);
                Ok((h, (b - a).cross(c - a).normalize_or_zero()))
            })
            .collect()
    }

    /// Whether each ray hits `targets` within `[tmin, tmax]`, for occlusion and visibility
    /// (Warp's `mesh_query_ray_anyhit`, parry's `intersects_ray`), and which triangle it hit
    /// first: the first one that each body's BVH, walked depth-first without a stack, the bodies
    /// in list order, meets — not necessarily the closest. The walk stops there, so an occluded
    /// ray costs less than [`Scene::cast_rays`]. The hit's `t`, barycentrics, body (its position
    /// in the list) and triangle are those of that triangle; the same triangle on the GPU and on
    /// the CPU backend. On the GPU: one dispatch, one submission and one readback of 32 bytes a
    /// ray, per batch. Errors as [`Scene::cast_rays`].
    ///
    /// ```no_run
    /// # use glam::Vec3;
    /// # use raycontact::{BodyKind, GpuContext, Ray, Scene, meshes};
    /// # let ctx = GpuContext::new()?;
    /// # let mut scene = Scene::new(&ctx);
    /// # let ball = meshes::icosphere(1.0, 3);
    /// let wall = scene.add_body(&ball.positions, &ball.triangles, BodyKind::Volumetric)?;
    /// scene.update()?;
    /// // Is the light at (0, 0, 5) visible from (0, 0, -5)? The segment ends just before it.
    /// let shadow = Ray::segment(Vec3::Z * -5.0, Vec3::Z * 10.0, 0.0, 0.999);
    /// assert!(scene.cast_rays_anyhit(wall, &[shadow])?[0].is_hit());
    /// # Ok::<(), raycontact::Error>(())
    /// ```
    #[doc(alias = "intersects_ray")]
    #[doc(alias = "mesh_query_ray_anyhit")]
    pub fn cast_rays_anyhit<'t>(
        &mut self,
        targets: impl Into<RayTargets<'t>>,
        rays: &[Ray],
    ) -> Result<Vec<RayHit>> {
        self.one_hit_per_ray(QueryKind::Anyhit, targets.into(), rays)
    }

    /// The closest or the first hit of each ray ([`Scene::cast_rays`], [`Scene::cast_rays_anyhit`]).
    fn one_hit_per_ray(
        &mut self,
        kind: QueryKind,
        targets: RayTargets<'_>,
        rays: &[Ray],
    ) -> Result<Vec<RayHit>> {
        let targets = self.packed_targets(targets)?;
        if rays.is_empty() {
            return Ok(Vec::new());
        }
        let records = self.target_records(&targets);
        match &mut self.engine {
            Engine::Gpu(g) => {
                let ctx = g.ctx().clone();
                let label = if kind == QueryKind::Closest { "raycast" } else { "raycast_anyhit" };
                ctx.scoped(label, || g.cast_rays(kind, &records, rays))
            }
            Engine::Cpu(c) if kind == QueryKind::Closest => Ok(c.cast_rays(&self.packing, &targets, rays)),
            Engine::Cpu(c) => Ok(c.cast_rays_anyhit(&self.packing, &targets, rays)),
        }
    }

    /// Every hit of each ray on `targets` within `[tmin, tmax]`, the first `max_hits` of each ray
    /// kept, sorted by `t`, then by body (position in the list), then by triangle index
    /// ([`RayIntersection::order`](crate::RayIntersection::order)); the hits found beyond
    /// `max_hits` are counted per ray ([`RayHitCount::overflow`](crate::RayHitCount::overflow))
    /// and in total ([`AllHits::overflow`]). Each body's BVH is walked without a stack over the
    /// whole segment (parry's `intersections_with_ray`, Warp's
    /// `mesh_query_ray_count_intersections` with the hits). A ray through an edge or vertex
    /// shared by several triangles hits each of them, at exactly the same `t` (computed from that
    /// edge or vertex alone). On the GPU: one dispatch, one submission and one readback of the
    /// counts (16 bytes a ray) and every ray's `max_hits` slots (20 bytes each), per batch.
    ///
    /// Errors as [`Scene::cast_rays`], and [`Error::InvalidInput`] when `max_hits` is 0 or one
    /// ray's slots exceed the device's binding limit.
    ///
    /// ```no_run
    /// # use glam::Vec3;
    /// # use raycontact::{BodyKind, GpuContext, Ray, Scene, meshes};
    /// # let ctx = GpuContext::new()?;
    /// # let mut scene = Scene::new(&ctx);
    /// let ring = meshes::torus(1.0, 0.3, 40, 20);
    /// let torus = scene.add_body(&ring.positions, &ring.triangles, BodyKind::Volumetric)?;
    /// scene.update()?;
    /// // Along the x axis the ray enters and leaves the tube twice.
    /// let all = scene.cast_rays_all(torus, &[Ray::new(Vec3::new(-3.0, 0.0, 0.0), Vec3::X)], 8)?;
    /// assert_eq!(all.ray(0).len(), 4);
    /// assert_eq!(all.overflow(), 0);
    /// # Ok::<(), raycontact::Error>(())
    /// ```
    #[doc(alias = "intersections_with_ray")]
    #[doc(alias = "mesh_query_ray_count_intersections")]
    pub fn cast_rays_all<'t>(
        &mut self,
        targets: impl Into<RayTargets<'t>>,
        rays: &[Ray],
        max_hits: u32,
    ) -> Result<AllHits> {
        let targets = self.packed_targets(targets.into())?;
        if max_hits == 0 {
            return Err(Error::InvalidInput {
                what: "an all-hits query keeps at least one hit a ray".into(),
            });
        }
        if rays.is_empty() {
            return AllHits::from_slots(max_hits, Default::default(), Vec::new(), &[]);
        }
        let records = self.target_records(&targets);
        let (totals, counts, slots) = match &mut self.engine {
            Engine::Gpu(g) => {
                let ctx = g.ctx().clone();
                ctx.scoped("raycast_all", || g.cast_rays_all(max_hits, &records, rays))?
            }
            Engine::Cpu(c) => c.cast_rays_all(&self.packing, &targets, rays, max_hits),
        };
        AllHits::from_slots(max_hits, totals, counts, &slots)
    }
}
