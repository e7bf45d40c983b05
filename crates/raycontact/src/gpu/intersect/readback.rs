//! Readback of the intersection stages: one copy in the detection's submission (the counters,
//! as many crossings, contour states and loops as the last frame had plus a margin, and in full
//! analysis every vertex's region state), and a copy-only submission for the rest when there are
//! more, as the contacts are read. The frame's copy is mapped once, its counters read from the
//! same mapping as the results (they were mapped on their own first: two mappings a frame).

use super::super::GpuScene;
use super::super::buffers::{READBACK, create_buffer};
use super::buffers::{CONTOUR_BYTES, CROSSING_BYTES, LOOP_BYTES, REGION_BYTES, STATE_BYTES};
use crate::error::{Error, Result};
use crate::intersection::RawIntersections;
use crate::layout::{INTERSECT_FULL, IntersectState};
use crate::stats::{FrameStats, Stage};

/// The intersection readback's label.
const LABEL: &str = "raycontact.intersect.read";

/// Where each part lies in the readback buffer, for `k` crossings.
#[derive(Clone, Copy, Debug)]
struct Layout {
    crossings: u64,
    contour: u64,
    loops: u64,
    regions: u64,
    end: u64,
}

fn layout(full: bool, k: u64, vertices: u64) -> Layout {
    let crossings = STATE_BYTES;
    let contour = crossings + CROSSING_BYTES * k;
    if !full {
        return Layout { crossings, contour, loops: contour, regions: contour, end: contour };
    }
    let loops = contour + CONTOUR_BYTES * k;
    let regions = loops + LOOP_BYTES * k;
    Layout { crossings, contour, loops, regions, end: regions + REGION_BYTES * vertices }
}

impl GpuScene {
    /// Records the copy of the counters and the first `k` crossings (with their contour states
    /// and as many loop records, and every vertex's region state in full analysis) for readback.
    fn copy_intersections(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        mode: u32,
        k: u64,
        stats: &mut FrameStats,
    ) {
        let full = mode == INTERSECT_FULL;
        let vertices = self.params.vertex_count as u64;
        let l = layout(full, k, vertices);
        if self.intersect_read.as_ref().is_none_or(|(_, cap)| *cap < l.end) {
            let bytes = l.end + l.end / 2;
            let b = create_buffer(&self.ctx, &mut self.bufs.allocations, LABEL, bytes, READBACK);
            self.intersect_read = Some((b, bytes));
        }
        let (read, _) = self.intersect_read.as_ref().expect("intersection readback");
        let b = self.intersect.as_ref().expect("intersection buffers");
        let mut copy = |from: &wgpu::Buffer, at: u64, bytes: u64| {
            if bytes > 0 {
                encoder.copy_buffer_to_buffer(from, 0, read, at, Some(bytes));
                stats.stage(Stage::Readback).add_copy(bytes);
            }
        };
        copy(&b.state, 0, STATE_BYTES);
        copy(&b.crossings, l.crossings, CROSSING_BYTES * k);
        if full {
            copy(&b.contour, l.contour, CONTOUR_BYTES * k);
            copy(&b.loops, l.loops, LOOP_BYTES * k);
            copy(&b.regions, l.regions, REGION_BYTES * vertices);
        }
    }

    /// Records the frame's own copy of the intersection stages' results (`mode` 0: none) sized by
    /// the last frame's crossings; returns how many crossings it holds.
    pub(in crate::gpu) fn record_intersection_copy(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        mode: u32,
        stats: &mut FrameStats,
    ) -> u64 {
        if mode == 0 {
            return 0;
        }
        let cap = self.intersect.as_ref().map_or(0, |b| b.cap.crossings);
        let k = (self.last_crossing_count + self.last_crossing_count / 4 + 64).min(cap);
        self.copy_intersections(encoder, mode, k, stats);
        k
    }

    /// Reads the intersection stages' results of a submitted detection whose first `copied`
    /// crossings were copied: one mapping of that copy, which holds them all unless more were
    /// found; then the rest is copied (a copy-only submission) and mapped again.
    pub(in crate::gpu) async fn read_intersections(
        &mut self,
        mode: u32,
        copied: u64,
        stats: &mut FrameStats,
        blocking: bool,
    ) -> Result<RawIntersections> {
        if mode == 0 {
            return Ok(RawIntersections::default());
        }
        let cap = self.intersect.as_ref().map_or(0, |b| b.cap.crossings);
        let (full, vertices) = (mode == INTERSECT_FULL, self.params.vertex_count as u64);
        // The counters, and the results when the copy holds every crossing (`n <= k`).
        let parse = |bytes: &[u8], k: u64| {
            let state: IntersectState = bytemuck::pod_read_unaligned(&bytes[..STATE_BYTES as usize]);
            let n = (state.crossings as u64).min(cap);
            (state, (n <= k).then(|| raw(mode, state, bytes, layout(full, k, vertices), n)))
        };
        let (read, _) = self.intersect_read.as_ref().expect("intersection readback");
        let read = read.clone();
        let end = layout(full, copied, vertices).end;
        let (state, raw) =
            self.ctx.map_read_async(&read, LABEL, 0, end, blocking, |b| parse(b, copied)).await?;
        stats.bytes_read_back += end;
        self.last_crossing_count = state.crossings as u64;
        if let Some(raw) = raw {
            return Ok(raw);
        }
        let k = (state.crossings as u64).min(cap);
        let mut enc =
            self.ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(LABEL) });
        self.copy_intersections(&mut enc, mode, k, stats);
        self.ctx.queue().submit([enc.finish()]);
        let (read, _) = self.intersect_read.as_ref().expect("intersection readback");
        let end = layout(full, k, vertices).end;
        let (_, raw) = self.ctx.map_read_async(read, LABEL, 0, end, blocking, |b| parse(b, k)).await?;
        stats.bytes_read_back += end;
        // (The same counters, copied again: the copy holds every crossing they count.)
        raw.ok_or_else(|| Error::Readback { buffer: LABEL, message: "more crossings than copied".into() })
    }
}

/// The results of mode `mode` with counters `state` in the mapped readback `bytes` (laid out as
/// `l`), of its first `n` crossings.
fn raw(mode: u32, state: IntersectState, bytes: &[u8], l: Layout, n: u64) -> RawIntersections {
    let part = |at: u64, size: u64| &bytes[at as usize..(at + size) as usize];
    let mut raw = RawIntersections {
        mode,
        state,
        crossings: bytemuck::pod_collect_to_vec(part(l.crossings, CROSSING_BYTES * n)),
        ..Default::default()
    };
    if mode == INTERSECT_FULL {
        let loops = (state.loops as u64).min(n);
        raw.contour = bytemuck::pod_collect_to_vec(part(l.contour, CONTOUR_BYTES * n));
        raw.loops = bytemuck::pod_collect_to_vec(part(l.loops, LOOP_BYTES * loops));
        raw.regions = bytemuck::pod_collect_to_vec(part(l.regions, l.end - l.regions));
    }
    raw
}
