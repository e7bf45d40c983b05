//! The ray-cast query on the GPU: `raycast.wgsl` over a batch of rays against one body, with its
//! own buffers (grown to the largest batch seen, rebuilt when the scene's buffers are), one
//! submission and one readback.

use super::GpuScene;
use super::buffers::{B, READBACK, STORAGE, UNIFORM, create_buffer};
use crate::error::Result;
use crate::kernels::Kernel;
use crate::layout::{Ray, RayHit, RaycastParams, WG_SIZE, dispatch_size};

/// Buffers of ray-cast queries, grown to the largest batch seen.
#[derive(Debug)]
pub(crate) struct QueryBuffers {
    capacity: u64,
    generation: u64,
    params: wgpu::Buffer,
    rays: wgpu::Buffer,
    hits: wgpu::Buffer,
    read: wgpu::Buffer,
    group: wgpu::BindGroup,
}

impl QueryBuffers {
    fn new(s: &mut GpuScene, capacity: u64) -> Self {
        let ray_bytes = capacity * size_of::<Ray>() as u64;
        let hit_bytes = capacity * size_of::<RayHit>() as u64;
        let (ctx, a) = (&s.ctx, &mut s.bufs.allocations);
        let params =
            create_buffer(ctx, a, "raycontact.raycast.params", size_of::<RaycastParams>() as u64, UNIFORM);
        let rays = create_buffer(ctx, a, "raycontact.raycast.rays", ray_bytes, STORAGE);
        let hits = create_buffer(ctx, a, "raycontact.raycast.hits", hit_bytes, STORAGE);
        let read = create_buffer(ctx, a, "raycontact.raycast.read", hit_bytes, READBACK);
        let g = |b: B| s.bufs.get(b).as_entire_binding();
        let resources = [
            params.as_entire_binding(),
            g(B::Bodies),
            g(B::BodyState),
            g(B::Vertices),
            g(B::Triangles),
            g(B::Nodes),
            rays.as_entire_binding(),
            hits.as_entire_binding(),
        ];
        let group = s.pipelines.bind_group(s.ctx.device(), Kernel::Raycast, &resources);
        QueryBuffers { capacity, generation: s.bufs.generation, params, rays, hits, read, group }
    }
}

impl GpuScene {
    /// Closest hits of `rays` against packed body `body`: one submission, one readback.
    pub fn raycast(&mut self, body: u32, rays: &[Ray]) -> Result<Vec<RayHit>> {
        if rays.is_empty() {
            return Ok(Vec::new());
        }
        let n = rays.len() as u64;
        if self.query.as_ref().is_none_or(|q| q.capacity < n || q.generation != self.bufs.generation) {
            let capacity = self.query.as_ref().map_or(0, |q| q.capacity).max(n);
            self.query = Some(QueryBuffers::new(self, capacity));
        }
        let q = self.query.as_ref().expect("query buffers");
        let queue = self.ctx.queue();
        let params = RaycastParams { body, ray_count: n as u32, pad0: 0, pad1: 0 };
        queue.write_buffer(&q.params, 0, bytemuck::bytes_of(&params));
        queue.write_buffer(&q.rays, 0, bytemuck::cast_slice(rays));
        let mut enc = self
            .ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("raycontact.raycast") });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("raycontact.raycast"),
                timestamp_writes: None,
            });
            pass.set_pipeline(self.pipelines.get(Kernel::Raycast).1);
            pass.set_bind_group(0, &q.group, &[]);
            let (x, y) = dispatch_size((n as u32).div_ceil(WG_SIZE));
            pass.dispatch_workgroups(x, y, 1);
        }
        let bytes = n * size_of::<RayHit>() as u64;
        enc.copy_buffer_to_buffer(&q.hits, 0, &q.read, 0, Some(bytes));
        queue.submit([enc.finish()]);
        let data = self.ctx.read_mapped(&q.read, "raycontact.raycast.read", 0, bytes)?;
        self.ctx.take_error("raycast")?;
        Ok(bytemuck::pod_collect_to_vec(&data))
    }
}
