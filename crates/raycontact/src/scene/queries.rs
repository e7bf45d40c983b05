//! Reads of what the last frame and detection left (for tests and debugging, not for every
//! frame); the ray queries are in `rays.rs`.

use glam::Vec3;

use super::Scene;
use crate::backend::Engine;
use crate::body::BodyId;
use crate::error::{Error, Result};
use crate::frame::FrameData;
use crate::gpu::B;
use crate::layout::BodyState;

impl Scene {
    /// Everything the last frame built, in the packed layout (reads it back from the GPU: for
    /// tests and debugging, not for every frame). After an iterative pass whose walk computed its
    /// sources' normals itself ([`BvhAction::Kept`](crate::BvhAction::Kept)), the normals and
    /// the body boxes are those of the last frame that computed them.
    pub fn frame_data(&mut self) -> Result<FrameData> {
        self.require_fresh()?;
        match &mut self.engine {
            Engine::Gpu(g) => g.read_frame(),
            Engine::Cpu(c) => Ok(c.frame(&self.packing).clone()),
        }
    }

    /// The source vertices the last full-pass detection listed (`ray_sources`): (directed pair
    /// `k` of its pair list, body-local vertex), sorted, and how many were found (more than
    /// listed when the list was full). Reads them back: for tests and debugging. GPU scenes only
    /// ([`Error::InvalidInput`] on the CPU backend, whose twin is
    /// [`cpu::ray_sources`](crate::internals::cpu::ray_sources)).
    pub fn ray_sources(&mut self) -> Result<(Vec<[u32; 2]>, u32)> {
        let Engine::Gpu(g) = &mut self.engine else {
            return Err(Error::InvalidInput { what: "ray_sources reads a GPU scene's list".into() });
        };
        let found = g.read_detect_state()?.sources;
        let listed = (found as u64).min(g.source_capacity());
        let mut list: Vec<[u32; 2]> = g.read(B::Sources, 0, listed)?;
        list.sort_unstable();
        Ok((list, found))
    }

    /// A body's box, leaf count and degenerate-triangle count as of the last update (a 32-byte
    /// readback on the GPU).
    pub fn body_state(&mut self, id: BodyId) -> Result<BodyState> {
        self.require_fresh()?;
        let b = self.packing.index_of(id).ok_or(Error::UnknownBody { body: id })?;
        match &mut self.engine {
            Engine::Gpu(g) => Ok(g.read::<BodyState>(B::BodyState, b as u64, 1)?[0]),
            Engine::Cpu(c) => Ok(c.body_state()[b]),
        }
    }

    /// A body's positions in the previous frame, as the last update left them on the GPU (or in
    /// the CPU backend): the positions of the update before it. Equals the current positions
    /// after the update that added the body. A readback on the GPU: for tests and debugging.
    pub fn previous_positions(&mut self, id: BodyId) -> Result<Vec<Vec3>> {
        self.require_fresh()?;
        let b = self.packing.index_of(id).ok_or(Error::UnknownBody { body: id })?;
        let body = self.packing.bodies[b];
        let range = body.vertex_offset as usize..(body.vertex_offset + body.vertex_count) as usize;
        match &mut self.engine {
            Engine::Gpu(g) => g.read_previous(range.start as u64, range.len() as u64),
            Engine::Cpu(c) => Ok(c.previous()[range].to_vec()),
        }
    }

    /// Where [`Scene::record_detect`] leaves the contacts on the GPU (bodies by packed index, see
    /// [`Scene::packing`]), with the count and indirect dispatch arguments for a GPU consumer.
    /// `None` on the CPU backend.
    pub fn contact_buffers(&self) -> Option<crate::ContactBuffers<'_>> {
        match &self.engine {
            Engine::Gpu(g) => Some(g.contact_buffers()),
            Engine::Cpu(_) => None,
        }
    }

    /// GPU buffers created so far by this scene (0 on the CPU backend). Constant across frames
    /// once the bodies are added: nothing is allocated per frame.
    pub fn buffer_allocations(&self) -> u64 {
        match &self.engine {
            Engine::Gpu(g) => g.allocations(),
            Engine::Cpu(_) => 0,
        }
    }
}
