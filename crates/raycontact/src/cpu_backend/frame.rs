//! The CPU backend's frame: every per-frame stage's twin in the GPU frame's order, reusing the
//! frame's vectors.

use web_time::Instant;

use glam::Vec3;

use crate::cpu;
use crate::frame::FrameData;
use crate::layout::{BodyState, NONE};
use crate::packing::Packing;
use crate::stats::Stage;

impl FrameData {
    /// Runs every per-frame stage on the CPU, as the GPU frame does.
    pub fn build(packing: &Packing, positions: &[Vec3]) -> Self {
        let mut f = FrameData::default();
        f.rebuild(packing, positions, |_, _| {});
        f
    }

    /// Rebuilds the frame in place (reusing the vectors), reporting each stage's wall time.
    pub(crate) fn rebuild(
        &mut self,
        packing: &Packing,
        positions: &[Vec3],
        mut time: impl FnMut(Stage, f64),
    ) {
        let t = packing.params.tri_count as usize;
        self.tri_boxes.resize(t, Default::default());
        self.body_state.clear();
        self.body_state.resize(packing.bodies.len(), BodyState::default());
        self.keys.resize(t, 0);
        self.values.resize(t, 0);
        self.nodes.resize(2 * t, Default::default());
        self.parents.resize(2 * t, NONE);
        let mut clock = Instant::now();
        let mut lap = |s: Stage| {
            let now = Instant::now();
            time(s, (now - clock).as_nanos() as f64);
            clock = now;
        };
        self.compute_normals(packing, positions);
        lap(Stage::Normals);
        cpu::triangle_bounds(packing, positions, &mut self.tri_boxes, &mut self.body_state);
        lap(Stage::Bounds);
        cpu::morton(
            packing,
            positions,
            &self.tri_boxes,
            &mut self.body_state,
            &mut self.keys,
            &mut self.values,
        );
        lap(Stage::Morton);
        cpu::radix_sort(&packing.segments, &mut self.keys, &mut self.values);
        lap(Stage::Sort);
        cpu::hierarchy(
            packing,
            &self.body_state,
            &self.keys,
            &self.values,
            &mut self.nodes,
            &mut self.parents,
        );
        lap(Stage::Hierarchy);
        cpu::fit(packing, &self.body_state, &self.tri_boxes, &mut self.nodes);
        lap(Stage::Fit);
    }

    /// The vertex normals alone (an iterative pass that needs no BVH); the rest stays last
    /// frame's.
    pub(crate) fn normals_only(
        &mut self,
        packing: &Packing,
        positions: &[Vec3],
        mut time: impl FnMut(Stage, f64),
    ) {
        let start = Instant::now();
        self.compute_normals(packing, positions);
        time(Stage::Normals, start.elapsed().as_nanos() as f64);
    }

    fn compute_normals(&mut self, packing: &Packing, positions: &[Vec3]) {
        self.normals.resize(positions.len(), Vec3::ZERO);
        cpu::vertex_normals(
            positions,
            &packing.triangles,
            &packing.vertex_tri_offsets,
            &packing.vertex_tris,
            &mut self.normals,
        );
    }
}
