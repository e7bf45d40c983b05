//! The segmented radix sort (`radix_count`, `radix_scatter`, `radix_tiles`): the recording of
//! its passes, shared by the scene's frame and by [`GpuRadixSort`], a standalone sorter that owns
//! its buffers and records into the caller's encoder (as wgpu_sort does).
//!
//! One dispatch a pass: each pass's scatter scans its own segment's digit counts and counts the
//! next pass's digits of what it scatters, so the passes need no count or scan dispatch of their
//! own; the first pass's counts come from the kernel that writes the keys (`morton` in a frame,
//! `radix_count` for the standalone sorter), into counts cleared before. When every segment is of
//! one tile (and, on a software adapter, there are few: [`sorts_whole`]) the sort is one
//! `radix_tiles` dispatch instead, each workgroup running every pass of its segment, from the
//! segment's keys alone (no counts).

use std::sync::Arc;

use super::buffers::{READBACK, STORAGE, UNIFORM, create_buffer};
use crate::context::GpuContext;
use crate::error::{Error, Result};
use crate::kernels::{Kernel, Pipelines};
use crate::layout::{
    COUNTERS_PER_TILE, RADIX_BITS, SORT_COUNT_NEXT, SORT_IDENTITY_VALUES, SORT_PASSES, SortPass, SortSegment,
    TILE, Tuning, UNIFORM_STRIDE, dispatch_size,
};

/// The uniforms of a radix sort of `passes` passes (even, at most [`SORT_PASSES`]) over
/// `tile_count` tiles, [`UNIFORM_STRIDE`] apart. With `identity_values` the first pass takes the
/// values from the elements' positions (the frame's sort of triangles).
pub(crate) fn sort_pass_uniforms(tile_count: u32, identity_values: bool, passes: u32) -> Vec<u8> {
    assert!(passes.is_multiple_of(2) && passes <= SORT_PASSES, "{passes} sort passes");
    let mut out = vec![0u8; (UNIFORM_STRIDE * passes as u64) as usize];
    for p in 0..passes {
        let mut flags = if p + 1 < passes { SORT_COUNT_NEXT } else { 0 };
        if p == 0 && identity_values {
            flags |= SORT_IDENTITY_VALUES;
        }
        let u = SortPass { shift: p * RADIX_BITS, tile_count, passes, flags };
        let at = (p as u64 * UNIFORM_STRIDE) as usize;
        out[at..at + size_of::<SortPass>()].copy_from_slice(bytemuck::bytes_of(&u));
    }
    out
}

/// Whether the sort of `segments` is one `radix_tiles` dispatch, which sorts each segment whole
/// in its workgroup: no segment has more than one tile, and there are at most
/// [`Tuning::whole_sort_tiles`] of them.
pub(crate) fn sorts_whole(segments: &[SortSegment], tuning: &Tuning) -> bool {
    segments.iter().all(|s| s.tile_count <= 1)
        && segments.iter().map(|s| s.tile_count).sum::<u32>() <= tuning.whole_sort_tiles
}

/// Bytes of the digit counts of every pass over `tiles` tiles.
pub(crate) fn counters_bytes(tiles: u64) -> u64 {
    4 * COUNTERS_PER_TILE as u64 * tiles
}

/// Records the sort's `passes` passes (those of its uniforms, [`sort_pass_uniforms`]) over
/// `tiles` tiles into `pass`, one `radix_scatter` dispatch each, the keys ping-ponging between
/// the two sides (`group(kernel, sort_pass)` gives the bind group; after an even number of
/// passes the result is back on side 0). The first pass's digit counts must be in the counts
/// already. With `whole` ([`sorts_whole`]), one `radix_tiles` dispatch instead (the first pass's
/// uniforms; it reads no counts): every pass of each one-tile segment, ending on side 0 too.
/// Calls `dispatched` after each dispatch.
pub(crate) fn record_sort<'g>(
    pass: &mut wgpu::ComputePass<'_>,
    pipelines: &Pipelines,
    group: impl Fn(Kernel, u32) -> &'g wgpu::BindGroup,
    tiles: u32,
    passes: u32,
    whole: bool,
    mut dispatched: impl FnMut(Kernel, u32),
) {
    if tiles == 0 {
        return;
    }
    let (x, y) = dispatch_size(tiles);
    if whole {
        let k = Kernel::RadixTiles;
        pass.set_pipeline(pipelines.pipeline(k));
        pass.set_bind_group(0, group(k, 0), &[0]);
        pass.dispatch_workgroups(x, y, 1);
        dispatched(k, 0);
        return;
    }
    let k = Kernel::RadixScatter;
    pass.set_pipeline(pipelines.pipeline(k));
    for sp in 0..passes {
        pass.set_bind_group(0, group(k, sp), &[sp * UNIFORM_STRIDE as u32]);
        pass.dispatch_workgroups(x, y, 1);
        dispatched(k, sp);
    }
}

/// A standalone GPU radix sort of (key, value) pairs with raycontact's sort kernels, on its own
/// capacity-sized buffers (grown when given more). [`GpuRadixSort::record`] records the sort into
/// the caller's encoder and leaves the result on the GPU ([`GpuRadixSort::keys`],
/// [`GpuRadixSort::values`]); [`GpuRadixSort::sort`] does it all and reads the result back.
///
/// ```no_run
/// let ctx = raycontact::GpuContext::new()?;
/// let mut sort = raycontact::GpuRadixSort::new(&ctx, 1000);
/// let (keys, values) = sort.sort(&[3, 1, 2], &[0, 1, 2])?;
/// assert_eq!(keys, [1, 2, 3]);
/// assert_eq!(values, [1, 2, 0]);
/// # Ok::<(), raycontact::Error>(())
/// ```
#[derive(Debug)]
pub struct GpuRadixSort {
    ctx: GpuContext,
    pipelines: Arc<Pipelines>,
    bufs: Option<SortBuffers>,
    allocations: u64,
}

fn whole(b: &wgpu::Buffer) -> wgpu::BindingResource<'_> {
    b.as_entire_binding()
}

/// The sorter's buffers for `capacity` pairs, and the bind groups over them.
#[derive(Debug)]
struct SortBuffers {
    capacity: u64,
    passes: wgpu::Buffer,
    segments: wgpu::Buffer,
    tile_body: wgpu::Buffer,
    keys: [wgpu::Buffer; 2],
    values: [wgpu::Buffer; 2],
    counters: wgpu::Buffer,
    read: wgpu::Buffer,
    /// count (side 0), scatter (side 0, 1), tiles.
    groups: [wgpu::BindGroup; 4],
}

impl SortBuffers {
    fn new(ctx: &GpuContext, pipelines: &Pipelines, allocations: &mut u64, capacity: u64) -> Self {
        let tiles = capacity.div_ceil(TILE as u64);
        let mut make = |label, size, usage| create_buffer(ctx, allocations, label, size, usage);
        let passes = make("raycontact.sort.passes", UNIFORM_STRIDE * SORT_PASSES as u64, UNIFORM);
        let segments = make("raycontact.sort.segments", 16, STORAGE);
        let tile_body = make("raycontact.sort.tile_body", 4 * tiles, STORAGE);
        let counters = make("raycontact.sort.counters", counters_bytes(tiles), STORAGE);
        let keys = [
            make("raycontact.sort.keys0", 4 * capacity, STORAGE),
            make("raycontact.sort.keys1", 4 * capacity, STORAGE),
        ];
        let values = [
            make("raycontact.sort.values0", 4 * capacity, STORAGE),
            make("raycontact.sort.values1", 4 * capacity, STORAGE),
        ];
        let read = make("raycontact.sort.read", 8 * capacity, READBACK);
        let pass = wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &passes,
            offset: 0,
            size: wgpu::BufferSize::new(size_of::<SortPass>() as u64),
        });
        let device = ctx.device();
        let count = {
            let r = [pass.clone(), whole(&segments), whole(&tile_body), whole(&keys[0]), whole(&counters)];
            pipelines.bind_group(device, Kernel::RadixCount, &r)
        };
        let scatter = |side: usize| {
            let r = [
                pass.clone(),
                whole(&segments),
                whole(&tile_body),
                whole(&counters),
                whole(&keys[side]),
                whole(&values[side]),
                whole(&keys[1 - side]),
                whole(&values[1 - side]),
            ];
            pipelines.bind_group(device, Kernel::RadixScatter, &r)
        };
        let tiles = {
            let r = [
                pass.clone(),
                whole(&segments),
                whole(&tile_body),
                whole(&keys[0]),
                whole(&values[0]),
                whole(&keys[1]),
                whole(&values[1]),
            ];
            pipelines.bind_group(device, Kernel::RadixTiles, &r)
        };
        let groups = [count, scatter(0), scatter(1), tiles];
        SortBuffers { capacity, passes, segments, tile_body, keys, values, counters, read, groups }
    }

    fn group(&self, k: Kernel, sort_pass: u32) -> &wgpu::BindGroup {
        match k {
            Kernel::RadixCount => &self.groups[0],
            Kernel::RadixTiles => &self.groups[3],
            _ => &self.groups[1 + (sort_pass % 2) as usize],
        }
    }
}

impl GpuRadixSort {
    /// A sorter for up to `capacity` pairs (it grows when given more). Uses the context's
    /// pipelines (created once per device).
    pub fn new(ctx: &GpuContext, capacity: usize) -> Self {
        let mut s = GpuRadixSort { ctx: ctx.clone(), pipelines: ctx.pipelines(), bufs: None, allocations: 0 };
        s.reserve(capacity.max(1) as u64);
        s
    }

    fn reserve(&mut self, n: u64) {
        if self.bufs.as_ref().is_none_or(|b| b.capacity < n) {
            let capacity = n.max(self.bufs.as_ref().map_or(0, |b| b.capacity * 3 / 2));
            self.bufs = Some(SortBuffers::new(&self.ctx, &self.pipelines, &mut self.allocations, capacity));
        }
    }

    /// GPU buffers created so far.
    pub fn buffer_allocations(&self) -> u64 {
        self.allocations
    }

    /// Writes `keys` and `values` (through the queue) and records their stable sort by key into
    /// `encoder`; after the caller submits it, [`Self::keys`] and [`Self::values`] hold the
    /// sorted pairs in their first `keys.len()` elements. Errors: [`Error::InvalidInput`] when
    /// the lengths differ or exceed 2^31.
    pub fn record(&mut self, encoder: &mut wgpu::CommandEncoder, keys: &[u32], values: &[u32]) -> Result<()> {
        if keys.len() != values.len() {
            return Err(Error::InvalidInput {
                what: format!("{} keys but {} values", keys.len(), values.len()),
            });
        }
        let n = keys.len() as u64;
        if n > u32::MAX as u64 / 2 {
            return Err(Error::InvalidInput { what: format!("{n} keys, over the supported 2^31") });
        }
        if n == 0 {
            return Ok(());
        }
        self.reserve(n);
        let b = self.bufs.as_ref().expect("reserved");
        let tiles = n.div_ceil(TILE as u64) as u32;
        let q = self.ctx.queue();
        let seg = SortSegment { offset: 0, count: n as u32, tile_offset: 0, tile_count: tiles };
        q.write_buffer(&b.segments, 0, bytemuck::bytes_of(&seg));
        q.write_buffer(&b.tile_body, 0, bytemuck::cast_slice(&vec![0u32; tiles as usize]));
        q.write_buffer(&b.passes, 0, &sort_pass_uniforms(tiles, false, SORT_PASSES));
        q.write_buffer(&b.keys[0], 0, bytemuck::cast_slice(keys));
        q.write_buffer(&b.values[0], 0, bytemuck::cast_slice(values));
        // One tile: `radix_tiles`, which needs no digit counts; else the first pass's counts,
        // then the passes.
        let whole = tiles == 1;
        if !whole {
            encoder.clear_buffer(&b.counters, 0, Some(counters_bytes(tiles as u64)));
        }
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("raycontact.sort"),
            timestamp_writes: None,
        });
        if !whole {
            pass.set_pipeline(self.pipelines.pipeline(Kernel::RadixCount));
            pass.set_bind_group(0, b.group(Kernel::RadixCount, 0), &[0]);
            let (x, y) = dispatch_size(tiles);
            pass.dispatch_workgroups(x, y, 1);
        }
        record_sort(&mut pass, &self.pipelines, |k, sp| b.group(k, sp), tiles, SORT_PASSES, whole, |_, _| {});
        Ok(())
    }

    /// The keys buffer the sorted keys end in.
    pub fn keys(&self) -> &wgpu::Buffer {
        &self.bufs.as_ref().expect("a sorter has buffers").keys[0]
    }

    /// The values buffer the sorted values end in.
    pub fn values(&self) -> &wgpu::Buffer {
        &self.bufs.as_ref().expect("a sorter has buffers").values[0]
    }

    /// Sorts `keys` (with `values` alongside) stably by key: one submission and one readback;
    /// blocking. Errors: as [`Self::record`], and a GPU error.
    pub fn sort(&mut self, keys: &[u32], values: &[u32]) -> Result<(Vec<u32>, Vec<u32>)> {
        let ctx = self.ctx.clone();
        ctx.scoped("radix sort", || {
            let n = keys.len() as u64;
            let mut enc = ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("raycontact.sort") });
            self.record(&mut enc, keys, values)?;
            if n == 0 {
                return Ok((Vec::new(), Vec::new()));
            }
            let b = self.bufs.as_ref().expect("reserved");
            enc.copy_buffer_to_buffer(&b.keys[0], 0, &b.read, 0, Some(4 * n));
            enc.copy_buffer_to_buffer(&b.values[0], 0, &b.read, 4 * n, Some(4 * n));
            ctx.queue().submit([enc.finish()]);
            let bytes = ctx.read_mapped(&b.read, "raycontact.sort.read", 0, 8 * n)?;
            ctx.take_error("radix sort")?;
            let all: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
            let (k, v) = all.split_at(n as usize);
            Ok((k.to_vec(), v.to_vec()))
        })
    }
}
