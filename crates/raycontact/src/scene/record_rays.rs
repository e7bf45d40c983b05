//! [`Scene`]'s ray queries recorded into the caller's encoder, reading the caller's rays from
//! its GPU buffer and writing the hits into its GPU buffers, without submitting or reading back:
//! for rays made on the GPU (particles, a renderer's) and hits consumed there.

use super::Scene;
use crate::backend::Engine;
use crate::error::{Error, Result};
use crate::gpu::QueryKind;
use crate::rays::{GpuOutput, GpuRays, RayTargets};

impl Scene {
    /// Records `kind` into `encoder` (after [`Scene::record_update`] in it or in an earlier
    /// submission), checking the buffers first. GPU scenes only.
    #[allow(clippy::too_many_arguments)]
    fn record_rays(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        query: &'static str,
        kind: QueryKind,
        targets: RayTargets<'_>,
        rays: GpuRays<'_>,
        hits: GpuOutput<'_>,
        counts: Option<GpuOutput<'_>>,
    ) -> Result<()> {
        if !matches!(self.engine, Engine::Gpu(_)) {
            return Err(Error::InvalidInput { what: format!("{query} needs a GPU scene") });
        }
        let targets = self.packed_targets(targets)?;
        let records = self.target_records(&targets);
        let Engine::Gpu(g) = &mut self.engine else { unreachable!("checked above") };
        g.record_rays(encoder, query, kind, &records, rays, hits, counts)
    }

    /// [`Scene::cast_rays`] recorded into `encoder`: reads `rays.count` rays from the caller's
    /// buffer and writes one [`RayHit`](crate::RayHit) a ray into `hits`, without submitting
    /// anything (the caller submits, with its own work if it likes). The BVHs are those of the
    /// last update, recorded before this call ([`Scene::record_update`] into the same encoder
    /// will do).
    ///
    /// Layouts (`#[repr(C)]`, little-endian, as the WGSL structs of the same names):
    /// - `rays`: [`Ray`](crate::Ray)s of 32 bytes (origin `vec3<f32>`, tmin `f32`, dir
    ///   `vec3<f32>`, tmax `f32`) from `rays.offset`; usage `STORAGE`.
    /// - `hits`: `rays.count` [`RayHit`](crate::RayHit)s of 32 bytes (t, triangle, u, v,
    ///   nodes_visited, triangles_tested, fallback, body) from `hits.offset`; usage `STORAGE`
    ///   (add `COPY_SRC` to read them back); not the rays' buffer.
    ///
    /// Offsets are multiples of the device's `min_storage_buffer_offset_alignment` (256 under
    /// WebGPU's defaults), and each range at most its `max_storage_buffer_binding_size`. Each
    /// query has its own bind group and its bodies' records never change once written, so any
    /// number of queries may be recorded into one submission; the scene's own buffers are reused
    /// across frames, and nothing is allocated by a query whose list of bodies was queried
    /// before (bind groups aside). Zero rays record nothing.
    ///
    /// Errors: [`Error::QueryBuffer`] naming the buffer and the problem
    /// ([`BufferProblem`](crate::BufferProblem)) before anything is recorded, the errors of
    /// [`Scene::cast_rays`], [`Error::InvalidInput`] on the CPU backend, [`Error::Gpu`] when
    /// wgpu refuses the bind group. Nothing is recorded into `encoder` on an error. The buffers
    /// and `encoder` belong to the scene's device: wgpu cannot check a buffer of another
    /// instance's device (their ids collide, and wgpu-core panics).
    ///
    /// ```no_run
    /// use raycontact::{BodyKind, GpuContext, GpuOutput, GpuRays, Ray, RayHit, Scene, meshes, wgpu};
    /// let ctx = GpuContext::new()?;
    /// let mut scene = Scene::new(&ctx);
    /// let ball = meshes::icosphere(1.0, 3);
    /// let body = scene.add_body(&ball.positions, &ball.triangles, BodyKind::Volumetric)?;
    /// let n = 1024u32;
    /// let buffer = |usage| {
    ///     ctx.device().create_buffer(&wgpu::BufferDescriptor {
    ///         label: None,
    ///         size: n as u64 * 32,
    ///         usage: wgpu::BufferUsages::STORAGE | usage,
    ///         mapped_at_creation: false,
    ///     })
    /// };
    /// let rays = buffer(wgpu::BufferUsages::COPY_DST); // filled by your own kernel, or:
    /// let hits = buffer(wgpu::BufferUsages::COPY_SRC);
    /// let mut encoder = ctx.device().create_command_encoder(&Default::default());
    /// scene.record_update(&mut encoder)?;
    /// scene.record_cast_rays(&mut encoder, body, GpuRays { buffer: &rays, offset: 0, count: n }, (&hits).into())?;
    /// ctx.queue().submit([encoder.finish()]);
    /// # Ok::<(), raycontact::Error>(())
    /// ```
    pub fn record_cast_rays<'t>(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        targets: impl Into<RayTargets<'t>>,
        rays: GpuRays<'_>,
        hits: GpuOutput<'_>,
    ) -> Result<()> {
        self.record_rays(encoder, "record_cast_rays", QueryKind::Closest, targets.into(), rays, hits, None)
    }

    /// [`Scene::cast_rays_anyhit`] recorded into `encoder`: the buffers, their layouts and the
    /// errors are those of [`Scene::record_cast_rays`] (one 32-byte [`RayHit`](crate::RayHit) a
    /// ray in `hits`; `triangle == NONE` for a ray that hits nothing).
    pub fn record_cast_rays_anyhit<'t>(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        targets: impl Into<RayTargets<'t>>,
        rays: GpuRays<'_>,
        hits: GpuOutput<'_>,
    ) -> Result<()> {
        self.record_rays(
            encoder,
            "record_cast_rays_anyhit",
            QueryKind::Anyhit,
            targets.into(),
            rays,
            hits,
            None,
        )
    }

    /// [`Scene::cast_rays_all`] recorded into `encoder`, over the caller's buffers:
    /// - `rays`: as for [`Scene::record_cast_rays`].
    /// - `counts`: a 16-byte [`RayHitTotals`](crate::RayHitTotals) (found, stored, rays_hit,
    ///   rays_overflowed: `u32`s, zeroed in the encoder, then summed by the dispatch), then one
    ///   16-byte [`RayHitCount`](crate::RayHitCount) a ray (found, stored, nodes_visited,
    ///   triangles_tested; its overflow is `found - stored`) — `16 + 16 × count` bytes from
    ///   `counts.offset`, usage `STORAGE | COPY_DST`.
    /// - `hits`: `max_hits` slots of 20 bytes a ray ([`RayIntersection`](crate::RayIntersection):
    ///   t, triangle, u, v, body): ray `i`'s from slot `i × max_hits`, its first `stored` sorted
    ///   by `t`, then body, then triangle, the others left as they were —
    ///   `20 × max_hits × count` bytes from `hits.offset`, usage `STORAGE`.
    ///
    /// `counts` and `hits` may share a buffer if their ranges do not overlap; neither may be the
    /// rays' buffer. [`AllHits::from_slots`](crate::AllHits::from_slots) reads them once copied
    /// back. Zero rays still zero the totals. Errors as [`Scene::record_cast_rays`], and
    /// [`Error::InvalidInput`] when `max_hits` is 0.
    pub fn record_cast_rays_all<'t>(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        targets: impl Into<RayTargets<'t>>,
        rays: GpuRays<'_>,
        max_hits: u32,
        counts: GpuOutput<'_>,
        hits: GpuOutput<'_>,
    ) -> Result<()> {
        if max_hits == 0 {
            return Err(Error::InvalidInput {
                what: "an all-hits query keeps at least one hit a ray".into(),
            });
        }
        let kind = QueryKind::All { max_hits };
        self.record_rays(encoder, "record_cast_rays_all", kind, targets.into(), rays, hits, Some(counts))
    }
}
