//! The contact response on the GPU: `response.wgsl` over the last recorded detection's contacts,
//! with its own buffers (forces per packed vertex, its state, the stiffness table; grown with
//! the scene, rebuilt when the scene's buffers are). Recorded into the caller's encoder (the
//! forces stay on the GPU), or run and read back.

use super::GpuScene;
use super::buffers::{B, READBACK, STORAGE, UNIFORM, contact_sides, create_buffer};
use crate::error::Result;
use crate::kernels::Kernel;
use crate::layout::{FORCE_SLOTS, NONE, RESPONSE_STATE, ResponseParams};
use crate::stats::StageStats;

const STATE_BYTES: u64 = 4 * RESPONSE_STATE as u64;
const VERTEX_BYTES: u64 = 4 * FORCE_SLOTS as u64;

/// The GPU buffers the response leaves its forces in.
#[derive(Clone, Copy, Debug)]
pub struct ForceBuffers<'a> {
    /// Four `i32` per packed vertex (bodies one after another, as
    /// [`Scene::packing`](crate::Scene::packing) lays them out): the force's x, y, z in fixed
    /// point (divide by the response's scale), then the vertex's load.
    pub forces: &'a wgpu::Buffer,
    /// Four `u32`: nonzero when a contribution overflowed, collision contacts applied, the lowest
    /// packed vertex that overflowed (`u32::MAX`: none), padding.
    pub state: &'a wgpu::Buffer,
}

/// Buffers of the response.
#[derive(Debug)]
pub(crate) struct ResponseBuffers {
    vertices: u64,
    bodies: u64,
    generation: u64,
    params: wgpu::Buffer,
    stiffness: wgpu::Buffer,
    forces: wgpu::Buffer,
    state: wgpu::Buffer,
    read: wgpu::Buffer,
    /// One per ping-pong side of the contacts.
    groups: [wgpu::BindGroup; 2],
}

impl ResponseBuffers {
    fn new(s: &mut GpuScene) -> Self {
        let cap = *s.bufs.capacity();
        let (vertices, bodies) = (cap.vertices.max(1), cap.bodies.max(1));
        let (ctx, a) = (&s.ctx, &mut s.bufs.allocations);
        let params =
            create_buffer(ctx, a, "raycontact.response.params", size_of::<ResponseParams>() as u64, UNIFORM);
        let stiffness = create_buffer(ctx, a, "raycontact.response.stiffness", 4 * bodies * bodies, STORAGE);
        let forces = create_buffer(ctx, a, "raycontact.response.forces", VERTEX_BYTES * vertices, STORAGE);
        let state = create_buffer(ctx, a, "raycontact.response.state", STATE_BYTES, STORAGE);
        let read = create_buffer(
            ctx,
            a,
            "raycontact.response.read",
            STATE_BYTES + VERTEX_BYTES * vertices,
            READBACK,
        );
        let group = |side: u32| {
            let ((contacts, args), _) = contact_sides(side);
            let g = |b: B| s.bufs.get(b).as_entire_binding();
            let resources = [
                params.as_entire_binding(),
                g(B::Bodies),
                g(B::Triangles),
                g(B::Vertices),
                stiffness.as_entire_binding(),
                g(contacts),
                g(args),
                forces.as_entire_binding(),
                state.as_entire_binding(),
            ];
            s.pipelines.bind_group(s.ctx.device(), Kernel::Response, &resources)
        };
        let groups = [group(0), group(1)];
        ResponseBuffers {
            vertices,
            bodies,
            generation: s.bufs.generation,
            params,
            stiffness,
            forces,
            state,
            read,
            groups,
        }
    }
}

impl GpuScene {
    /// Makes sure the response's buffers fit the scene's.
    fn fit_response(&mut self) {
        let cap = *self.bufs.capacity();
        let stale = self.response.as_ref().is_none_or(|r| {
            r.generation != self.bufs.generation || r.vertices < cap.vertices || r.bodies < cap.bodies
        });
        if stale {
            self.response = Some(ResponseBuffers::new(self));
        }
    }

    /// Records the response to the contacts of the last recorded detection into `encoder`: the
    /// forces start from zero, `contact_args` writes the dispatch over the stored contacts, then
    /// `response` runs. `stiffness` is the `body_count × body_count` table, source-major.
    pub fn record_response(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        params: &ResponseParams,
        stiffness: &[f32],
        st: &mut StageStats,
    ) {
        let side = self.side;
        let vertex_bytes = VERTEX_BYTES * self.params.vertex_count as u64;
        self.fit_response();
        let r = self.response.as_ref().expect("response buffers");
        let q = self.ctx.queue();
        let params = ResponseParams { vertex_count: self.params.vertex_count, ..*params };
        q.write_buffer(&r.params, 0, bytemuck::bytes_of(&params));
        if !stiffness.is_empty() {
            q.write_buffer(&r.stiffness, 0, bytemuck::cast_slice(stiffness));
        }
        q.write_buffer(&r.state, 0, bytemuck::cast_slice(&[0u32, 0, NONE, 0]));
        if vertex_bytes > 0 {
            encoder.clear_buffer(&r.forces, 0, Some(vertex_bytes));
        }
        st.bytes_written += vertex_bytes;
        let ((_, args), _) = contact_sides(side);
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("raycontact.response"),
            timestamp_writes: None,
        });
        self.dispatch(&mut pass, Kernel::ContactArgs, side, 1, st);
        let r = self.response.as_ref().expect("response buffers");
        pass.set_pipeline(self.pipelines.pipeline(Kernel::Response));
        pass.set_bind_group(0, &r.groups[(side % 2) as usize], &[]);
        pass.dispatch_workgroups_indirect(self.bufs.get(args), 0);
        st.dispatches += 1;
    }

    /// Where [`Self::record_response`] leaves the forces.
    pub fn force_buffers(&mut self) -> ForceBuffers<'_> {
        self.fit_response();
        let r = self.response.as_ref().expect("response buffers");
        ForceBuffers { forces: &r.forces, state: &r.state }
    }

    /// Records the response, submits it and reads the forces and the state back: one
    /// submission, one readback.
    pub fn response(
        &mut self,
        params: &ResponseParams,
        stiffness: &[f32],
        st: &mut StageStats,
    ) -> Result<(Vec<[i32; FORCE_SLOTS]>, [u32; RESPONSE_STATE])> {
        let mut enc = self
            .ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("raycontact.response") });
        self.record_response(&mut enc, params, stiffness, st);
        let vertex_bytes = VERTEX_BYTES * self.params.vertex_count as u64;
        let r = self.response.as_ref().expect("response buffers");
        enc.copy_buffer_to_buffer(&r.state, 0, &r.read, 0, Some(STATE_BYTES));
        if vertex_bytes > 0 {
            enc.copy_buffer_to_buffer(&r.forces, 0, &r.read, STATE_BYTES, Some(vertex_bytes));
        }
        self.ctx.queue().submit([enc.finish()]);
        let bytes =
            self.ctx.read_mapped(&r.read, "raycontact.response.read", 0, STATE_BYTES + vertex_bytes)?;
        st.add_copy(STATE_BYTES + vertex_bytes);
        self.ctx.take_error("response")?;
        let words: Vec<i32> = bytemuck::pod_collect_to_vec(&bytes);
        let state = [words[0] as u32, words[1] as u32, words[2] as u32, words[3] as u32];
        let forces =
            words[RESPONSE_STATE..].chunks_exact(FORCE_SLOTS).map(|c| [c[0], c[1], c[2], c[3]]).collect();
        Ok((forces, state))
    }
}
