//! The contact response ([`crate::Response`]): forces from the last detection's contacts, on the
//! scene's backend.

use glam::Vec3;

use super::Scene;
use crate::backend::Engine;
use crate::body::BodyId;
use crate::error::{Error, Result};
use crate::gpu::ForceBuffers;
use crate::layout::{FORCE_SLOTS, RESPONSE_ALONG_NORMAL, RESPONSE_STATE, ResponseParams};
use crate::response::{ContactForces, ForceDirection, Response};
use crate::stats::StageStats;

impl Scene {
    /// Sets how contacts become forces ([`Response`]). Errors: [`Error::InvalidInput`] for a
    /// negative or non-finite stiffness or damping, a time step or resolution not > 0.
    pub fn set_response(&mut self, response: Response) -> Result<()> {
        response.validate()?;
        self.response = response;
        Ok(())
    }

    /// The response settings.
    pub fn response(&self) -> Response {
        self.response
    }

    /// Sets the stiffness of the pair (a, b), both ways, instead of the response's. Errors:
    /// [`Error::UnknownBody`], [`Error::InvalidInput`] unless finite and >= 0.
    pub fn set_pair_stiffness(&mut self, a: BodyId, b: BodyId, stiffness: f32) -> Result<()> {
        self.body(a)?;
        self.body(b)?;
        if !(stiffness.is_finite() && stiffness >= 0.0) {
            return Err(Error::InvalidInput {
                what: format!("the stiffness of pair ({a}, {b}) must be finite and >= 0, not {stiffness}"),
            });
        }
        self.pair_stiffness.retain(|&(x, y, _)| !((x == a && y == b) || (x == b && y == a)));
        self.pair_stiffness.push((a, b, stiffness));
        Ok(())
    }

    /// The kernel's parameters and the `body_count × body_count` stiffness table of the packing.
    fn response_inputs(&self) -> (ResponseParams, Vec<f32>) {
        let r = &self.response;
        let n = self.packing.ids.len();
        let mut table = vec![r.stiffness; n * n];
        for &(a, b, k) in &self.pair_stiffness {
            if let (Some(ia), Some(ib)) = (self.packing.index_of(a), self.packing.index_of(b)) {
                table[ia * n + ib] = k;
                table[ib * n + ia] = k;
            }
        }
        let params = ResponseParams {
            damping: r.damping,
            inv_dt: 1.0 / r.time_step,
            scale: 1.0 / r.resolution,
            body_count: n as u32,
            flags: if r.direction == ForceDirection::AlongNormal { RESPONSE_ALONG_NORMAL } else { 0 },
            ..Default::default()
        };
        (params, table)
    }

    /// The forces of the last detection's collision contacts ([`Response`]), per body and
    /// vertex, at that frame's positions. On the GPU: one submission and one readback of the
    /// forces. Errors: [`Error::ForceOverflow`] naming the body and the vertex whose sum could
    /// exceed the fixed-point range; [`Error::InvalidInput`] when no detection completed since
    /// the bodies last changed (none ran, or the last one failed, e.g. an
    /// [`OverflowPolicy::Error`](crate::OverflowPolicy::Error) overflow: its contacts are not all
    /// there); [`Error::Gpu`].
    pub fn contact_forces(&mut self) -> Result<ContactForces> {
        if !self.detected {
            return Err(Error::InvalidInput {
                what:
                    "contact_forces needs a completed detection of the current bodies (none ran since they \
                       changed, or the last one failed)"
                        .into(),
            });
        }
        let (params, table) = self.response_inputs();
        let (forces, state) = match &mut self.engine {
            Engine::Gpu(g) => {
                let ctx = g.ctx().clone();
                ctx.scoped("response", || g.response(&params, &table, &mut StageStats::default()))?
            }
            Engine::Cpu(c) => {
                let sums = c.response(&self.packing, &params, &table);
                (sums.forces, sums.state)
            }
        };
        self.forces_of(&forces, state)
    }

    fn forces_of(&self, sums: &[[i32; FORCE_SLOTS]], state: [u32; RESPONSE_STATE]) -> Result<ContactForces> {
        let resolution = self.response.resolution;
        if state[0] != 0 {
            let v = state[2];
            let b = self
                .packing
                .bodies
                .iter()
                .position(|b| v >= b.vertex_offset && v < b.vertex_offset + b.vertex_count)
                .unwrap_or(0);
            let vertex = v - self.packing.bodies.get(b).map_or(0, |b| b.vertex_offset);
            return Err(Error::ForceOverflow { body: self.packing.ids[b], vertex, resolution });
        }
        let mut offsets: Vec<usize> = self.packing.bodies.iter().map(|b| b.vertex_offset as usize).collect();
        offsets.push(self.packing.params.vertex_count as usize);
        let forces =
            sums.iter().map(|f| Vec3::new(f[0] as f32, f[1] as f32, f[2] as f32) * resolution).collect();
        Ok(ContactForces { ids: self.packing.ids.clone(), offsets, forces, contacts: state[1] })
    }

    /// Records the response to the contacts of the last recorded detection into `encoder`
    /// (after [`Scene::record_detect`]), without submitting or reading anything back: the forces
    /// stay on the GPU for a GPU integrator ([`Scene::force_buffers`]). GPU scenes only
    /// ([`Error::InvalidInput`] on the CPU backend).
    pub fn record_contact_forces(&mut self, encoder: &mut wgpu::CommandEncoder) -> Result<()> {
        let (params, table) = self.response_inputs();
        let Engine::Gpu(g) = &mut self.engine else {
            return Err(Error::InvalidInput { what: "record_contact_forces needs a GPU scene".into() });
        };
        g.record_response(encoder, &params, &table, &mut StageStats::default());
        Ok(())
    }

    /// Where [`Scene::record_contact_forces`] leaves the forces (`None` on the CPU backend).
    pub fn force_buffers(&mut self) -> Option<ForceBuffers<'_>> {
        match &mut self.engine {
            Engine::Gpu(g) => Some(g.force_buffers()),
            Engine::Cpu(_) => None,
        }
    }
}
