//! [`Scene`]'s iterative ray casts: walks over the triangle adjacency ([`crate::walk`]).

use super::Scene;
use crate::backend::Engine;
use crate::body::BodyId;
use crate::error::{Error, Result};
use crate::layout::{NONE, Ray, WalkHit};
use crate::walk::{WalkOptions, WalkResult};

impl Scene {
    /// Iterative ray casts against a body as of the last update (Lehericey et al. 2013): ray
    /// `i` starts on body-local triangle `starts[i]` (typically the triangle it hit in the
    /// previous frame; [`NONE`] for none) and walks the triangle adjacency towards its hit, at
    /// most `options.max_steps` edges; rays whose walk does not hit are cast through the BVH
    /// or dropped, per `options.fallback`. [`crate::walk`] gives the rules (edge choice,
    /// outcomes, loop rule). On the GPU: one submission and one readback.
    ///
    /// Errors: [`Error::StaleBvh`], [`Error::UnknownBody`], [`Error::InvalidInput`] when
    /// `starts` and `rays` differ in length, a start is out of range, or `max_steps` is over
    /// [`MAX_WALK_STEPS`](crate::layout::MAX_WALK_STEPS).
    ///
    /// ```no_run
    /// use glam::Vec3;
    /// use raycontact::{BodyKind, GpuContext, Ray, Scene, WalkOptions, meshes};
    /// let ctx = GpuContext::new()?;
    /// let mut scene = Scene::new(&ctx);
    /// let s = meshes::icosphere(1.0, 3);
    /// let body = scene.add_body(&s.positions, &s.triangles, BodyKind::Volumetric)?;
    /// scene.update()?;
    /// let ray = Ray::new(Vec3::new(0.1, 0.2, 3.0), -Vec3::Z);
    /// let first = scene.cast_rays(body, &[ray])?[0];
    /// let moved = Ray::new(Vec3::new(0.12, 0.21, 3.0), -Vec3::Z);
    /// let walked = scene.walk(body, &[moved], &[first.triangle], &WalkOptions::default())?;
    /// assert!(walked.hits[0].is_hit());
    /// # Ok::<(), raycontact::Error>(())
    /// ```
    pub fn walk(
        &mut self,
        id: BodyId,
        rays: &[Ray],
        starts: &[u32],
        options: &WalkOptions,
    ) -> Result<WalkResult> {
        self.require_fresh()?;
        let b = self.packing.index_of(id).ok_or(Error::UnknownBody { body: id })?;
        options.validate()?;
        if rays.len() != starts.len() {
            return Err(Error::InvalidInput {
                what: format!("{} rays but {} start triangles", rays.len(), starts.len()),
            });
        }
        if rays.len() as u64 > u32::MAX as u64 / 64 {
            return Err(Error::InvalidInput { what: format!("{} rays in one walk batch", rays.len()) });
        }
        let tri_count = self.packing.bodies[b].tri_count;
        if let Some(i) = starts.iter().position(|&s| s != NONE && s >= tri_count) {
            return Err(Error::InvalidInput {
                what: format!("ray {i}: start triangle {} of body {id}, which has {tri_count}", starts[i]),
            });
        }
        match &mut self.engine {
            Engine::Gpu(g) => {
                let ctx = g.ctx().clone();
                ctx.scoped("walk", || g.walk(b as u32, rays, starts, options))
            }
            Engine::Cpu(c) => Ok(c.walk(&self.packing, b, rays, starts, options)),
        }
    }

    /// [`Scene::walk`] without the counters.
    pub fn walk_rays(
        &mut self,
        id: BodyId,
        rays: &[Ray],
        starts: &[u32],
        options: &WalkOptions,
    ) -> Result<Vec<WalkHit>> {
        Ok(self.walk(id, rays, starts, options)?.hits)
    }

    /// The mean size of a body's triangles at its latest positions (Eq. 1's
    /// `averageTrianglesSize`, see [`crate::internals::adjacency::mean_triangle_size`]), for
    /// [`crate::walk::max_steps`].
    pub fn mean_triangle_size(&self, id: BodyId) -> Result<f32> {
        let data = &self.body(id)?.data;
        Ok(crate::adjacency::mean_triangle_size(&data.positions, &data.triangles))
    }
}
