//! The walk query on the GPU: `walk.wgsl` over a batch of rays against one body, with its own
//! buffers (grown to the largest batch seen, rebuilt when the scene's buffers are), one
//! submission and one readback.

use super::GpuScene;
use super::buffers::{B, READBACK, STORAGE, UNIFORM, create_buffer};
use crate::error::Result;
use crate::kernels::Kernel;
use crate::layout::{Ray, WG_SIZE, WalkCounts, WalkHit, WalkParams, dispatch_size};
use crate::walk::{WalkOptions, WalkResult};

/// Bytes of the counters, at the start of the readback buffer (the hits follow).
const COUNTS_BYTES: u64 = std::mem::size_of::<WalkCounts>() as u64;

/// Buffers of walk queries.
#[derive(Debug)]
pub(crate) struct WalkBuffers {
    capacity: u64,
    generation: u64,
    params: wgpu::Buffer,
    rays: wgpu::Buffer,
    starts: wgpu::Buffer,
    hits: wgpu::Buffer,
    counts: wgpu::Buffer,
    read: wgpu::Buffer,
    group: wgpu::BindGroup,
}

impl WalkBuffers {
    fn new(s: &mut GpuScene, capacity: u64) -> Self {
        let ray_bytes = capacity * size_of::<Ray>() as u64;
        let hit_bytes = capacity * size_of::<WalkHit>() as u64;
        let (ctx, a) = (&s.ctx, &mut s.bufs.allocations);
        let params = create_buffer(ctx, a, "raycontact.walk.params", 16, UNIFORM);
        let rays = create_buffer(ctx, a, "raycontact.walk.rays", ray_bytes, STORAGE);
        let starts = create_buffer(ctx, a, "raycontact.walk.starts", 4 * capacity, STORAGE);
        let hits = create_buffer(ctx, a, "raycontact.walk.hits", hit_bytes, STORAGE);
        let counts = create_buffer(ctx, a, "raycontact.walk.counts", COUNTS_BYTES, STORAGE);
        let read = create_buffer(ctx, a, "raycontact.walk.read", COUNTS_BYTES + hit_bytes, READBACK);
        let g = |b: B| s.bufs.get(b).as_entire_binding();
        let resources = [
            params.as_entire_binding(),
            g(B::Bodies),
            g(B::BodyState),
            g(B::Positions),
            g(B::Triangles),
            g(B::Nodes),
            g(B::Adjacency),
            rays.as_entire_binding(),
            starts.as_entire_binding(),
            hits.as_entire_binding(),
            counts.as_entire_binding(),
        ];
        let group = s.pipelines.bind_group(s.ctx.device(), Kernel::Walk, &resources);
        WalkBuffers {
            capacity,
            generation: s.bufs.generation,
            params,
            rays,
            starts,
            hits,
            counts,
            read,
            group,
        }
    }
}

impl GpuScene {
    /// Walks `rays` over packed body `body` from `starts` (validated by the caller): one
    /// submission, one readback of the counters and the hits.
    pub fn walk(
        &mut self,
        body: u32,
        rays: &[Ray],
        starts: &[u32],
        options: &WalkOptions,
    ) -> Result<WalkResult> {
        if rays.is_empty() {
            return Ok(WalkResult::default());
        }
        let n = rays.len() as u64;
        if self.walk.as_ref().is_none_or(|w| w.capacity < n || w.generation != self.bufs.generation) {
            let capacity = self.walk.as_ref().map_or(0, |w| w.capacity).max(n);
            self.walk = Some(WalkBuffers::new(self, capacity));
        }
        let w = self.walk.as_ref().expect("walk buffers");
        let queue = self.ctx.queue();
        let params = WalkParams {
            body,
            ray_count: n as u32,
            max_steps: options.max_steps,
            fallback: options.fallback.code(),
        };
        queue.write_buffer(&w.params, 0, bytemuck::bytes_of(&params));
        queue.write_buffer(&w.rays, 0, bytemuck::cast_slice(rays));
        queue.write_buffer(&w.starts, 0, bytemuck::cast_slice(starts));
        let mut enc = self
            .ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("raycontact.walk") });
        enc.clear_buffer(&w.counts, 0, None);
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("raycontact.walk"),
                timestamp_writes: None,
            });
            pass.set_pipeline(self.pipelines.get(Kernel::Walk).1);
            pass.set_bind_group(0, &w.group, &[]);
            let (x, y) = dispatch_size((n as u32).div_ceil(WG_SIZE));
            pass.dispatch_workgroups(x, y, 1);
        }
        let hit_bytes = n * std::mem::size_of::<WalkHit>() as u64;
        enc.copy_buffer_to_buffer(&w.counts, 0, &w.read, 0, Some(COUNTS_BYTES));
        enc.copy_buffer_to_buffer(&w.hits, 0, &w.read, COUNTS_BYTES, Some(hit_bytes));
        queue.submit([enc.finish()]);
        let data = self.ctx.read_mapped(&w.read, "raycontact.walk.read", 0, COUNTS_BYTES + hit_bytes)?;
        self.ctx.take_error("walk")?;
        let counts: WalkCounts = bytemuck::pod_read_unaligned(&data[..COUNTS_BYTES as usize]);
        Ok(WalkResult { hits: bytemuck::pod_collect_to_vec(&data[COUNTS_BYTES as usize..]), counts })
    }
}
