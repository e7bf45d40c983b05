//! The walk query on the GPU: `walk.wgsl` over a batch of rays against one body, with its own
//! buffers (grown to the largest batch seen, rebuilt when the scene's buffers are), one
//! submission and one readback.

use super::GpuScene;
use super::buffers::{B, READBACK, STORAGE, UNIFORM, create_buffer};
use crate::error::Result;
use crate::kernels::Kernel;
use crate::layout::{Ray, WALK_HITS_OFFSET, WG_SIZE, WalkCounts, WalkHit, WalkParams, dispatch_size};
use crate::walk::{WalkOptions, WalkResult};

/// Bytes of the counters, at the start of the output buffer and its readback (the hits follow).
const COUNTS_BYTES: u64 = WALK_HITS_OFFSET;

/// Buffers of walk queries.
#[derive(Debug)]
pub(crate) struct WalkBuffers {
    capacity: u64,
    generation: u64,
    params: wgpu::Buffer,
    rays: wgpu::Buffer,
    starts: wgpu::Buffer,
    /// The counters, then the hits (WGSL `WalkOutput`).
    output: wgpu::Buffer,
    read: wgpu::Buffer,
    group: wgpu::BindGroup,
}

impl WalkBuffers {
    fn new(s: &mut GpuScene, capacity: u64) -> Self {
        let ray_bytes = capacity * size_of::<Ray>() as u64;
        let hit_bytes = capacity * size_of::<WalkHit>() as u64;
        let (ctx, a) = (&s.ctx, &mut s.bufs.allocations);
        let params = create_buffer(ctx, a, "raycontact.walk.params", size_of::<WalkParams>() as u64, UNIFORM);
        let rays = create_buffer(ctx, a, "raycontact.walk.rays", ray_bytes, STORAGE);
        let starts = create_buffer(ctx, a, "raycontact.walk.starts", 4 * capacity, STORAGE);
        let output = create_buffer(ctx, a, "raycontact.walk.output", COUNTS_BYTES + hit_bytes, STORAGE);
        let read = create_buffer(ctx, a, "raycontact.walk.read", COUNTS_BYTES + hit_bytes, READBACK);
        let g = |b: B| s.bufs.get(b).as_entire_binding();
        let resources = [
            params.as_entire_binding(),
            g(B::Bodies),
            g(B::BodyState),
            g(B::Vertices),
            g(B::Triangles),
            g(B::Nodes),
            rays.as_entire_binding(),
            starts.as_entire_binding(),
            output.as_entire_binding(),
        ];
        let group = s.pipelines.bind_group(s.ctx.device(), Kernel::Walk, &resources);
        WalkBuffers { capacity, generation: s.bufs.generation, params, rays, starts, output, read, group }
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
            tri_count: self.params.tri_count,
            ..Default::default()
        };
        queue.write_buffer(&w.params, 0, bytemuck::bytes_of(&params));
        queue.write_buffer(&w.rays, 0, bytemuck::cast_slice(rays));
        queue.write_buffer(&w.starts, 0, bytemuck::cast_slice(starts));
        let mut enc = self
            .ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("raycontact.walk") });
        enc.clear_buffer(&w.output, 0, Some(COUNTS_BYTES));
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("raycontact.walk"),
                timestamp_writes: None,
            });
            pass.set_pipeline(self.pipelines.pipeline(Kernel::Walk));
            pass.set_bind_group(0, &w.group, &[]);
            let (x, y) = dispatch_size((n as u32).div_ceil(WG_SIZE));
            pass.dispatch_workgroups(x, y, 1);
        }
        let hit_bytes = n * std::mem::size_of::<WalkHit>() as u64;
        enc.copy_buffer_to_buffer(&w.output, 0, &w.read, 0, Some(COUNTS_BYTES + hit_bytes));
        queue.submit([enc.finish()]);
        let data = self.ctx.read_mapped(&w.read, "raycontact.walk.read", 0, COUNTS_BYTES + hit_bytes)?;
        self.ctx.take_error("walk")?;
        let counts: WalkCounts = bytemuck::pod_read_unaligned(&data[..COUNTS_BYTES as usize]);
        Ok(WalkResult { hits: bytemuck::pod_collect_to_vec(&data[COUNTS_BYTES as usize..]), counts })
    }
}
