//! The intersection stages on the CPU backend: the twins of their kernels in the GPU's order
//! (crossings; the contour; the analysis and the contacts), each stage timed, the crossing
//! capacity and the [`OverflowPolicy`](crate::OverflowPolicy) applied as on the GPU.

use std::time::Instant;

use super::CpuScene;
use crate::cpu;
use crate::error::Result;
use crate::intersection::RawIntersections;
use crate::layout::{BodyPair, ContactGpu, INTERSECT_FULL, IntersectState, RegionGpu};
use crate::packing::Packing;
use crate::plan::{DetectPlan, on_crossing_overflow, with_headroom};
use crate::stats::{FrameStats, Stage};

impl CpuScene {
    /// Runs `plan`'s intersection stages over `pairs` (after the vertex rays), appending their
    /// contacts to `contacts`. Returns what they found and the crossing capacity after them.
    pub fn intersections(
        &self,
        packing: &Packing,
        plan: &DetectPlan,
        pairs: &[BodyPair],
        contacts: &mut Vec<ContactGpu>,
        stats: &mut FrameStats,
    ) -> Result<(RawIntersections, u64)> {
        let mode = plan.intersect.mode;
        let (frame, positions) = (&self.frame, &self.current[..]);
        let mut clock = Instant::now();
        let mut lap = |stats: &mut FrameStats, s: Stage| {
            let now = Instant::now();
            stats.stage(s).cpu_ns = Some((now - clock).as_nanos() as f64);
            clock = now;
        };
        let (list, (mut crossings, multi_pass)) = self.pool.install(|| {
            let list = cpu::edge_sources(packing, &frame.body_state, positions, pairs);
            let found = cpu::crossings(packing, frame, positions, &list);
            (list, found)
        });
        let capacity =
            on_crossing_overflow(plan.overflow, crossings.len() as u64, plan.intersect.crossing_capacity)?;
        let mut raw = RawIntersections {
            mode,
            state: IntersectState {
                pairs: pairs.len() as u32,
                edge_sources: list.len() as u32,
                crossings: crossings.len() as u32,
                multi_pass,
                ..Default::default()
            },
            ..Default::default()
        };
        lap(stats, Stage::Crossings);
        let (bodies, edges) = (&packing.bodies[..], &packing.edges[..]);
        let mut untangle = Vec::new();
        if mode == INTERSECT_FULL {
            let (mut contour, marks) = cpu::crossing_links(bodies, edges, &crossings);
            cpu::contour_hook(&mut contour);
            cpu::contour_compress(&crossings, &mut contour);
            cpu::contour_start(&crossings, &mut contour);
            lap(stats, Stage::Contour);
            let mut regions = vec![RegionGpu::default(); positions.len()];
            cpu::regions_hook(edges, &marks, &mut regions);
            cpu::region_areas(
                bodies,
                positions,
                &packing.triangles,
                &packing.vertex_tri_offsets,
                &packing.vertex_tris,
                &mut regions,
            );
            cpu::wrong_side(bodies, edges, &mut crossings, &mut regions);
            raw.loops = cpu::contour_walk(bodies, edges, &crossings, &mut contour, &regions);
            raw.state.loops = raw.loops.len() as u32;
            untangle = self.pool.install(|| cpu::untangle_contacts(packing, frame, positions, &regions));
            raw.contour = contour;
            raw.regions = regions;
        }
        let edge_contacts = cpu::edge_contacts(bodies, positions, &packing.triangles, edges, &crossings);
        raw.state.edge_contacts = edge_contacts.len() as u32;
        contacts.extend(edge_contacts);
        contacts.extend(untangle);
        lap(stats, Stage::Analysis);
        // As the GPU's: more room for the next detection when this one came near the end.
        let capacity = with_headroom(plan.overflow, crossings.len() as u64, capacity);
        raw.crossings = crossings;
        Ok((raw, capacity))
    }
}
