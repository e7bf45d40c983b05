//! The ray queries on the GPU: closest hit (`raycast.wgsl`), any hit (`raycast_anyhit.wgsl`)
//! and all hits (`raycast_all.wgsl`) of a batch of rays against a list of bodies. A query is one
//! dispatch whose bind group carries all its parameters: the region of its bodies' records in
//! the target arena (`raycast/targets.rs`), the rays and the outputs, each bound at exactly its
//! length (the kernels read the ray count, the body count and `max_hits` as lengths of their
//! bindings), so no uniform is shared between queries and any number of them may be recorded
//! into one submission. The scene's own queries use buffers grown to the largest batch seen (one
//! submission and one readback per batch); recorded queries bind the caller's buffers.

use std::num::NonZeroU64;

use super::GpuScene;
use super::buffers::{B, READBACK, STORAGE, create_buffer};
use crate::error::{Error, Result};
use crate::kernels::Kernel;
use crate::layout::{
    QueryTarget, RAY_COUNTS_OFFSET, Ray, RayHit, RayHitCount, RayHitTotals, RayIntersection, WG_SIZE,
    dispatch_size,
};

mod caller;
mod targets;

use targets::{TargetArena, TargetSlot};

/// Which ray query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum QueryKind {
    /// The closest hit (`raycast`).
    Closest,
    /// Any hit (`raycast_anyhit`).
    Anyhit,
    /// All hits, the first `max_hits` of each ray kept (`raycast_all`).
    All {
        /// Hits kept per ray (at least 1).
        max_hits: u32,
    },
}

impl QueryKind {
    /// The query's kernel.
    pub fn kernel(self) -> Kernel {
        match self {
            QueryKind::Closest => Kernel::Raycast,
            QueryKind::Anyhit => Kernel::RaycastAnyhit,
            QueryKind::All { .. } => Kernel::RaycastAll,
        }
    }

    /// Bytes of the hits binding per ray.
    pub fn hit_bytes(self) -> u64 {
        match self {
            QueryKind::Closest | QueryKind::Anyhit => size_of::<RayHit>() as u64,
            QueryKind::All { max_hits } => max_hits as u64 * size_of::<RayIntersection>() as u64,
        }
    }

    /// Bytes of the counts binding for `n` rays (all-hits only).
    pub fn count_bytes(self, n: u64) -> u64 {
        match self {
            QueryKind::All { .. } => RAY_COUNTS_OFFSET + n * size_of::<RayHitCount>() as u64,
            _ => 0,
        }
    }
}

/// A range of a buffer that a query binds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Region<'a> {
    /// The buffer.
    pub buffer: &'a wgpu::Buffer,
    /// Byte offset of the range.
    pub offset: u64,
    /// Bytes of the range (not zero).
    pub size: u64,
}

impl Region<'_> {
    fn binding(&self) -> wgpu::BindingResource<'_> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: self.buffer,
            offset: self.offset,
            size: NonZeroU64::new(self.size),
        })
    }
}

/// What one query reads and writes: its rays, its hits and (all-hits) its counts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QueryIo<'a> {
    /// `n` rays.
    pub rays: Region<'a>,
    /// `n` hits, or `n * max_hits` intersections.
    pub hits: Region<'a>,
    /// The totals, then `n` counts (all-hits only).
    pub counts: Option<Region<'a>>,
}

/// Key of a cached bind group of the scene's own queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct GroupKey {
    kind: QueryKind,
    slot: TargetSlot,
    rays: u64,
    /// The scene's buffer generation and the query buffers' (the bound buffers).
    generations: (u64, u64),
}

/// Bind groups of the scene's own queries kept for reuse.
const CACHED_GROUPS: usize = 8;

/// The target arena and the buffers of the scene's own queries, grown to the largest batch seen.
#[derive(Debug, Default)]
pub(crate) struct QueryBuffers {
    arena: TargetArena,
    rays: Option<wgpu::Buffer>,
    hits: Option<wgpu::Buffer>,
    counts: Option<wgpu::Buffer>,
    read: Option<wgpu::Buffer>,
    /// Changes whenever one of the buffers above is replaced.
    generation: u64,
    groups: Vec<(GroupKey, wgpu::BindGroup)>,
}

/// Grows `slot` to at least `bytes` (a new buffer: returns true).
fn grow(
    ctx: &crate::GpuContext,
    allocations: &mut u64,
    slot: &mut Option<wgpu::Buffer>,
    label: &'static str,
    bytes: u64,
    usage: wgpu::BufferUsages,
) -> bool {
    if slot.as_ref().is_some_and(|b| b.size() >= bytes) {
        return false;
    }
    *slot = Some(create_buffer(ctx, allocations, label, bytes, usage));
    true
}

impl GpuScene {
    /// The region of `targets` in the arena (written on first use).
    fn target_slot(&mut self, targets: &[QueryTarget]) -> TargetSlot {
        let q = self.query.get_or_insert_with(Default::default);
        q.arena.slot(&self.ctx, &mut self.bufs.allocations, targets)
    }

    /// The bind group of one query over the scene's buffers, its targets and `io`.
    fn query_group(&self, kind: QueryKind, slot: &TargetSlot, io: &QueryIo<'_>) -> wgpu::BindGroup {
        let q = self.query.as_ref().expect("a target slot was taken");
        let g = |b: B| self.bufs.get(b).as_entire_binding();
        let mut resources = vec![
            g(B::BodyState),
            g(B::Vertices),
            g(B::Triangles),
            g(B::Nodes),
            q.arena.binding(slot),
            io.rays.binding(),
        ];
        resources.extend(io.counts.as_ref().map(|c| c.binding()));
        resources.push(io.hits.binding());
        self.pipelines.bind_group(self.ctx.device(), kind.kernel(), &resources)
    }

    /// Records one query of `n` rays (not zero) with bind group `group`: for all-hits the totals
    /// at the head of the counts are zeroed first, then one dispatch.
    fn record_dispatch(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        kind: QueryKind,
        group: &wgpu::BindGroup,
        counts: Option<&Region<'_>>,
        n: u32,
    ) {
        if let Some(c) = counts {
            encoder.clear_buffer(c.buffer, c.offset, Some(RAY_COUNTS_OFFSET));
        }
        let label = kind.kernel().label();
        let mut pass = encoder
            .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(&label), timestamp_writes: None });
        pass.set_pipeline(self.pipelines.pipeline(kind.kernel()));
        pass.set_bind_group(0, group, &[]);
        let (x, y) = dispatch_size(n.div_ceil(WG_SIZE));
        pass.dispatch_workgroups(x, y, 1);
    }

    /// Most rays of one batch of the scene's own queries: every binding and the readback within
    /// the device's buffer limits. [`Error::InvalidInput`] when not even one ray fits.
    fn batch_rays(&self, kind: QueryKind) -> Result<u64> {
        let l = self.ctx.device().limits();
        let binding = l.max_storage_buffer_binding_size.min(l.max_buffer_size);
        let per_ray = kind.hit_bytes().max(size_of::<Ray>() as u64).max(size_of::<RayHitCount>() as u64);
        let read = kind.hit_bytes() + kind.count_bytes(1) - kind.count_bytes(0);
        let n = (binding.saturating_sub(RAY_COUNTS_OFFSET) / per_ray)
            .min(l.max_buffer_size.saturating_sub(RAY_COUNTS_OFFSET) / read)
            .min(u32::MAX as u64 / WG_SIZE as u64 * WG_SIZE as u64);
        if n == 0 {
            return Err(Error::InvalidInput {
                what: format!(
                    "{kind:?}: one ray's hits take {} bytes, over the device's max_storage_buffer_binding_size \
                     ({binding})",
                    kind.hit_bytes()
                ),
            });
        }
        Ok(n)
    }

    /// Runs one batch of the scene's own query: rays uploaded, one dispatch, the outputs copied
    /// to the readback buffer in one submission; returns the bytes read back (counts, then hits).
    fn run_batch(&mut self, kind: QueryKind, slot: &TargetSlot, rays: &[Ray]) -> Result<Vec<u8>> {
        let n = rays.len() as u64;
        let (hit_bytes, count_bytes) = (n * kind.hit_bytes(), kind.count_bytes(n));
        let ray_bytes = n * size_of::<Ray>() as u64;
        let q = self.query.as_mut().expect("a target slot was taken");
        let (ctx, a) = (&self.ctx, &mut self.bufs.allocations);
        let mut replaced = grow(ctx, a, &mut q.rays, "raycontact.raycast.rays", ray_bytes, STORAGE);
        replaced |= grow(ctx, a, &mut q.hits, "raycontact.raycast.hits", hit_bytes, STORAGE);
        if count_bytes > 0 {
            replaced |= grow(ctx, a, &mut q.counts, "raycontact.raycast.counts", count_bytes, STORAGE);
        }
        grow(ctx, a, &mut q.read, "raycontact.raycast.read", count_bytes + hit_bytes, READBACK);
        if replaced {
            q.generation += 1;
            q.groups.clear();
        }
        let key = GroupKey { kind, slot: *slot, rays: n, generations: (self.bufs.generation, q.generation) };
        let cached = q.groups.iter().find(|(k, _)| *k == key).map(|(_, g)| g.clone());
        let q = self.query.as_ref().expect("query buffers");
        let (rays_buf, hits_buf) = (q.rays.as_ref().expect("grown"), q.hits.as_ref().expect("grown"));
        let io = QueryIo {
            rays: Region { buffer: rays_buf, offset: 0, size: ray_bytes },
            hits: Region { buffer: hits_buf, offset: 0, size: hit_bytes },
            counts: q.counts.as_ref().filter(|_| count_bytes > 0).map(|c| Region {
                buffer: c,
                offset: 0,
                size: count_bytes,
            }),
        };
        let group = cached.unwrap_or_else(|| self.query_group(kind, slot, &io));
        self.ctx.queue().write_buffer(rays_buf, 0, bytemuck::cast_slice(rays));
        let label = kind.kernel().label();
        let mut enc =
            self.ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(&label) });
        self.record_dispatch(&mut enc, kind, &group, io.counts.as_ref(), n as u32);
        let read = q.read.as_ref().expect("grown");
        if let Some(c) = &io.counts {
            enc.copy_buffer_to_buffer(c.buffer, 0, read, 0, Some(count_bytes));
        }
        enc.copy_buffer_to_buffer(hits_buf, 0, read, count_bytes, Some(hit_bytes));
        self.ctx.queue().submit([enc.finish()]);
        let data = self.ctx.read_mapped(read, "raycontact.raycast.read", 0, count_bytes + hit_bytes)?;
        self.ctx.take_error("ray query")?;
        let q = self.query.as_mut().expect("query buffers");
        if !q.groups.iter().any(|(k, _)| *k == key) {
            if q.groups.len() == CACHED_GROUPS {
                q.groups.remove(0);
            }
            q.groups.push((key, group));
        }
        Ok(data)
    }

    /// Closest or any hits of `rays` against `targets` (not empty): one submission and one
    /// readback per batch of rays that fits the device's buffer limits.
    pub fn cast_rays(
        &mut self,
        kind: QueryKind,
        targets: &[QueryTarget],
        rays: &[Ray],
    ) -> Result<Vec<RayHit>> {
        let batch = self.batch_rays(kind)? as usize;
        let slot = self.target_slot(targets);
        let mut hits = Vec::with_capacity(rays.len());
        for chunk in rays.chunks(batch) {
            hits.extend(bytemuck::pod_collect_to_vec::<u8, RayHit>(&self.run_batch(kind, &slot, chunk)?));
        }
        Ok(hits)
    }

    /// All hits of `rays` against `targets` (not empty), the first `max_hits` (at least 1) of
    /// each ray kept: the totals, the counts and the slots of every ray (`max_hits` each), as the
    /// kernel leaves them.
    pub fn cast_rays_all(
        &mut self,
        max_hits: u32,
        targets: &[QueryTarget],
        rays: &[Ray],
    ) -> Result<(RayHitTotals, Vec<RayHitCount>, Vec<RayIntersection>)> {
        let kind = QueryKind::All { max_hits };
        let batch = self.batch_rays(kind)? as usize;
        let slot = self.target_slot(targets);
        let (mut counts, mut hits) = (Vec::with_capacity(rays.len()), Vec::new());
        let mut totals = RayHitTotals::default();
        for chunk in rays.chunks(batch) {
            let data = self.run_batch(kind, &slot, chunk)?;
            let (head, rest) = data.split_at(RAY_COUNTS_OFFSET as usize);
            let t: RayHitTotals = bytemuck::pod_read_unaligned(head);
            totals.found += t.found;
            totals.stored += t.stored;
            totals.rays_hit += t.rays_hit;
            totals.rays_overflowed += t.rays_overflowed;
            let (c, h) = rest.split_at(chunk.len() * size_of::<RayHitCount>());
            counts.extend(bytemuck::pod_collect_to_vec::<u8, RayHitCount>(c));
            hits.extend(bytemuck::pod_collect_to_vec::<u8, RayIntersection>(h));
        }
        Ok((totals, counts, hits))
    }
}
