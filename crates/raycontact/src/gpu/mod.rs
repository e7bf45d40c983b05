//! The GPU backend: a scene's capacity-sized buffers (reused across frames), the recording of
//! its frames and detections into a command encoder, their readback, and the ray queries.
//! Pipelines are the context's, created once per device ([`crate::kernels`]).
//!
//! | file | concern |
//! | --- | --- |
//! | `buffers.rs` | the buffer table, capacities and growth, the frame kernels' bind groups |
//! | `traffic.rs` | the bytes each frame kernel's dispatch reads and writes |
//! | `frame.rs` | positions upload and the per-frame rebuild (normals to fit) |
//! | `detect.rs` | a detection plan recorded, submitted, read back, grown and re-run |
//! | `intersect/` | the intersection stages: their buffers, recording and readback |
//! | `readback.rs` | contact readback sized by the last frame, debugging reads |
//! | `raycast.rs` (`raycast/`) | the ray queries (closest, any and all hits): the target arena, the caller's buffers checked |
//! | `walk.rs` | the walk query |
//! | `response.rs` | the contact response's forces |
//! | `sort.rs` | the radix sort's recording, and [`GpuRadixSort`] |
//! | `timer.rs` | timestamps per stage |

use std::sync::Arc;

use glam::Vec3;

use crate::context::GpuContext;
use crate::kernels::{Binding, Kernel, Pipelines};
use crate::layout::{
    FrameParams, SORT_PASSES, TRIANGLE_ADJACENCY, TRIANGLE_INCIDENT, TRIANGLE_WORDS, UNIFORM_STRIDE,
    VERTEX_PREVIOUS, dispatch_size, sort_passes,
};
use crate::packing::Packing;
use crate::stats::StageStats;

mod buffers;
mod detect;
mod frame;
mod intersect;
mod kept;
mod raycast;
mod readback;
mod response;
mod sort;
mod timer;
mod traffic;
mod walk;

pub(crate) use buffers::{B, check_fits};
pub(crate) use detect::GpuDetection;
pub(crate) use intersect::IntersectRun;
pub use intersect::IntersectionBuffers;
pub(crate) use kept::{BuiltTree, HostTree};
pub(crate) use raycast::QueryKind;
pub use response::ForceBuffers;
pub use sort::GpuRadixSort;

/// The GPU buffers a detection recorded with [`Scene::record_detect`](crate::Scene::record_detect)
/// leaves its contacts in.
#[derive(Clone, Copy, Debug)]
pub struct ContactBuffers<'a> {
    /// `array<ContactGpu>`: [`ContactGpu`](crate::internals::layout::ContactGpu) records,
    /// bodies by packed index, in no particular order; the first `min(count, capacity)` are
    /// valid.
    pub contacts: &'a wgpu::Buffer,
    /// [`DetectState`](crate::internals::layout::DetectState) at its head: the contact count
    /// (possibly above the capacity after an overflow) is the `u32` at byte 8. (The pair list
    /// follows, from byte [`PAIRS_OFFSET`](crate::internals::layout::PAIRS_OFFSET).)
    pub state: &'a wgpu::Buffer,
    /// Four `u32` with `INDIRECT` usage: the `dispatch_workgroups_indirect` arguments (x, y, z)
    /// of one invocation per stored contact in workgroups of
    /// [`WG_SIZE`](crate::internals::layout::WG_SIZE), then the number of stored contacts.
    pub dispatch_args: &'a wgpu::Buffer,
}

/// A scene on the GPU: its buffers, what the last frame and detection left, and the query
/// buffers.
#[derive(Debug)]
pub(crate) struct GpuScene {
    ctx: GpuContext,
    pipelines: Arc<Pipelines>,
    bufs: buffers::Buffers,
    params: FrameParams,
    /// Whether the packing's sort is one `radix_tiles` dispatch (`sort::sorts_whole`).
    sort_whole: bool,
    /// Passes of the sort whose uniforms the sort-passes buffer holds (`layout::sort_passes`:
    /// fewer where every body sorted has short or tiny keys).
    sort_passes: u32,
    timer: Option<timer::Timer>,
    /// Whether the frames write the timer's timestamps ([`GpuScene::set_timing`]).
    timing: bool,
    /// Positions staged in the upload buffer since the last frame: (first vertex, count).
    uploads: Vec<(u32, u32)>,
    query: Option<raycast::QueryBuffers>,
    walk: Option<walk::WalkBuffers>,
    response: Option<response::ResponseBuffers>,
    /// Debugging readback buffer and its size.
    readback: Option<(wgpu::Buffer, u64)>,
    /// Readback of the detection state and the first contacts, and its capacity in contacts.
    contact_read: Option<(wgpu::Buffer, u64)>,
    /// Contacts of the last detection, to size the next readback.
    last_contact_count: u64,
    /// The contact vector of the detection before, handed back by the scene once it has the
    /// contacts in their order ([`GpuScene::recycle_contacts`]) and refilled by the next
    /// readback: no new vector a frame.
    spare: Vec<crate::layout::ContactGpu>,
    /// Source vertices the next full pass's list holds at least: raised (`plan::grown_capacity`)
    /// when a full pass filled more than three quarters of the list (`detect.rs`).
    source_headroom: u64,
    /// Source vertices the last read-back full pass listed (`None` before one): the part of
    /// the list that the traffic figures count as bound, as the readback is sized by the last
    /// frame's contacts.
    last_source_count: Option<u64>,
    /// The ping-pong side of the contacts of the last recorded detection.
    side: u32,
    /// The packed edges of the current packing (uploaded to the intersection stages' buffers).
    edges: Vec<crate::layout::EdgeGpu>,
    /// Packings applied so far (the intersection stages re-upload the edges when it changes).
    packing_epoch: u64,
    /// The intersection stages' buffers, created when a detection first runs them.
    intersect: Option<intersect::IntersectBuffers>,
    /// Readback of the intersection stages, and its size in bytes.
    intersect_read: Option<(wgpu::Buffer, u64)>,
    /// Crossings of the last detection, to size the next readback.
    last_crossing_count: u64,
    /// The bodies a frame leaves as they are (`layout::BODY_KEEP`), and what moved.
    kept: kept::Kept,
    /// Binned-SAH trees of the bodies the last frame rebuilt (built in that frame: not in the
    /// background), for the next frame to write before its commands ([`GpuScene::defer_tree`]).
    deferred: Vec<(usize, crate::layout::BodyGpu, HostTree)>,
    /// The child pairs of a tree written over a body's ([`GpuScene::write_rest_tree`]), kept
    /// between writes.
    pairs_scratch: Vec<crate::layout::Node>,
    /// Whether the binned-SAH trees of bodies at rest, and of bodies rebuilt under a refitting
    /// policy, are built in the background ([`GpuScene::set_background_trees`]).
    background_trees: bool,
}

impl GpuScene {
    /// A scene without bodies on `ctx` (buffers come with the first packing).
    pub fn new(ctx: &GpuContext) -> Self {
        let mut bufs = buffers::Buffers::new();
        let timer = timer::Timer::new(ctx, &mut bufs.allocations);
        GpuScene {
            ctx: ctx.clone(),
            pipelines: ctx.pipelines(),
            bufs,
            params: FrameParams::default(),
            sort_whole: false,
            sort_passes: SORT_PASSES,
            timer,
            timing: true,
            uploads: Vec::new(),
            query: None,
            walk: None,
            response: None,
            readback: None,
            contact_read: None,
            last_contact_count: 0,
            spare: Vec::new(),
            source_headroom: 0,
            last_source_count: None,
            side: 0,
            edges: Vec::new(),
            packing_epoch: 0,
            intersect: None,
            intersect_read: None,
            last_crossing_count: 0,
            kept: kept::Kept::default(),
            deferred: Vec::new(),
            pairs_scratch: Vec::new(),
            background_trees: cfg!(not(target_arch = "wasm32")),
        }
    }

    /// Whether the binned-SAH tree of a body newly at rest (or rebuilt under a refitting policy)
    /// is built in the background, and written by the first frame that finds it done with the
    /// body still at rest (or refitted by that frame), or built in the frame that finds the body
    /// at rest (or rebuilds it) and written before that frame's commands (before the next
    /// frame's) (`scene/rest_trees.rs`). Always the latter on the web, where there is no thread
    /// to build it on.
    pub fn set_background_trees(&mut self, on: bool) {
        self.background_trees = on && cfg!(not(target_arch = "wasm32"));
    }

    /// Whether the binned-SAH trees of bodies at rest, and of bodies rebuilt under a refitting
    /// policy, are built in the background.
    pub fn background_trees(&self) -> bool {
        self.background_trees
    }

    /// The context.
    pub fn ctx(&self) -> &GpuContext {
        &self.ctx
    }

    /// Whether the frames time their stages with timestamp queries (on by default, where the
    /// context has them): off, no pass writes a timestamp and nothing is resolved or read. The
    /// stages written so far are forgotten either way, so that a frame recorded across the change
    /// resolves only timestamps it wrote.
    pub fn set_timing(&mut self, on: bool) {
        self.timing = on;
        if let Some(t) = &self.timer {
            t.begin_frame();
        }
    }

    /// Whether the frames write timestamps (the context has them, and timing is on); those
    /// recorded into a caller's encoder never do.
    pub fn timing(&self) -> bool {
        self.timer().is_some()
    }

    /// The timer, when the frames write timestamps.
    fn timer(&self) -> Option<&timer::Timer> {
        self.timer.as_ref().filter(|_| self.timing)
    }

    /// The timer of a recording that this scene reads back (`read_back`), when the frames write
    /// timestamps; none for one recorded into a caller's encoder, which resolves nothing.
    fn timer_for(&self, read_back: bool) -> Option<&timer::Timer> {
        self.timer().filter(|_| read_back)
    }

    /// GPU buffers created so far (the scene's and its queries').
    pub fn allocations(&self) -> u64 {
        self.bufs.allocations
    }

    /// Capacity of the source-vertex list.
    pub fn source_capacity(&self) -> u64 {
        self.bufs.capacity().sources
    }

    /// Uploads a new packing (a body was added or removed): grows the buffers if needed, writes
    /// the topology, the current and the previous positions (regions of the vertex buffer at the
    /// new vertex count); room for `contacts` contacts.
    pub fn set_packing(&mut self, p: &Packing, positions: &[Vec3], previous: &[Vec3], contacts: u64) {
        let need = buffers::Capacity::of(
            &p.params,
            self.bufs.capacity().contacts.max(contacts),
            self.ctx.tuning().child_pairs,
        );
        self.bufs.fit_packing(&self.ctx, &self.pipelines, &need);
        self.params = p.params;
        self.sort_whole = sort::sorts_whole(&p.segments, &self.ctx.tuning());
        self.uploads.clear();
        let q = self.ctx.queue();
        let at = |b: B, offset: u64, data: &[u8]| {
            if !data.is_empty() {
                q.write_buffer(self.bufs.get(b), offset, data);
            }
        };
        let w = |b: B, data: &[u8]| at(b, 0, data);
        w(B::Params, bytemuck::bytes_of(&p.params));
        w(B::Triangles, bytemuck::cast_slice(&p.triangles));
        // The triangle buffer's regions of 3 words a triangle, then the fan words (`fit` writes
        // them), then the incidence's offsets (`layout::TRIANGLE_WORDS`).
        let region = |r: u32| 4 * r as u64 * p.triangles.len() as u64;
        at(B::Triangles, region(TRIANGLE_ADJACENCY), bytemuck::cast_slice(&p.adjacency));
        at(B::Triangles, region(TRIANGLE_INCIDENT), bytemuck::cast_slice(&p.vertex_tris));
        let offsets = 4 * TRIANGLE_WORDS as u64 * p.params.tri_count as u64;
        at(B::Triangles, offsets, bytemuck::cast_slice(&p.vertex_tri_offsets));
        w(B::Bodies, bytemuck::cast_slice(&p.bodies));
        w(B::TileBody, bytemuck::cast_slice(&p.tile_body));
        w(B::Segments, bytemuck::cast_slice(&p.segments));
        w(B::Vertices, bytemuck::cast_slice(positions));
        let mut order = crate::ray_order::vertex_order(p, positions);
        for body in &p.bodies {
            let part = &mut order[body.vertex_offset as usize..][..body.vertex_count as usize];
            part.iter_mut().for_each(|v| *v += body.vertex_offset);
        }
        w(B::VertexOrder, bytemuck::cast_slice(&order));
        at(B::Vertices, self.vertex_region(VERTEX_PREVIOUS), bytemuck::cast_slice(previous));
        self.write_sort_passes(sort_passes(&p.segments));
        self.edges.clone_from(&p.edges);
        self.packing_epoch += 1;
        self.kept.packed(p);
        self.deferred.clear();
    }

    /// Writes the uniforms of a frame's sort of `passes` passes (`layout::sort_passes`) over the
    /// packing's tiles.
    fn write_sort_passes(&mut self, passes: u32) {
        let uniforms = sort::sort_pass_uniforms(self.params.tile_count, true, passes);
        self.ctx.queue().write_buffer(self.bufs.get(B::SortPasses), 0, &uniforms);
        self.sort_passes = passes;
    }

    /// Byte offset of region `region` of the vertex buffer
    /// ([`VERTEX_REGIONS`](crate::layout::VERTEX_REGIONS)) for the current packing.
    pub fn vertex_region(&self, region: u32) -> u64 {
        12 * region as u64 * self.params.vertex_count as u64
    }

    /// Packed body `body` has new positions (staged by [`Self::stage_positions`]).
    pub fn mark_moved(&mut self, body: usize) {
        self.kept.moved(body);
    }

    /// Writes the new positions of consecutive packed vertices from `vertex_offset` on, `parts`
    /// one after the other, into the upload buffer in one write (one staging buffer in wgpu);
    /// the next recorded frame copies them in.
    pub fn stage_positions<'a>(
        &mut self,
        vertex_offset: u32,
        parts: impl Iterator<Item = &'a [Vec3]> + Clone,
    ) {
        let count: usize = parts.clone().map(<[Vec3]>::len).sum();
        let Some(size) = wgpu::BufferSize::new(12 * count as u64) else { return };
        let upload = self.bufs.get(B::Upload);
        // `None` when wgpu refuses the write; its error is the device's, reported as any other.
        if let Some(mut view) = self.ctx.queue().write_buffer_with(upload, 12 * vertex_offset as u64, size) {
            let mut at = 0;
            for part in parts {
                let bytes: &[u8] = bytemuck::cast_slice(part);
                view.slice(at..at + bytes.len()).copy_from_slice(bytes);
                at += bytes.len();
            }
        }
        self.uploads.push((vertex_offset, count as u32));
    }

    /// Records a dispatch of frame kernel `k` over `groups` workgroups with the bind group of
    /// ping-pong side `side`, and counts it in `st`.
    fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        k: Kernel,
        side: u32,
        groups: u32,
        st: &mut StageStats,
    ) {
        if groups == 0 {
            return;
        }
        pass.set_pipeline(self.pipelines.pipeline(k));
        pass.set_bind_group(0, self.bufs.group(k, side), &[]);
        let (x, y) = dispatch_size(groups);
        pass.dispatch_workgroups(x, y, 1);
        self.account(k, side, st);
    }

    /// Records an indirect dispatch of frame kernel `k` with the arguments in buffer `args`.
    fn dispatch_indirect(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        k: Kernel,
        side: u32,
        args: B,
        st: &mut StageStats,
    ) {
        pass.set_pipeline(self.pipelines.pipeline(k));
        pass.set_bind_group(0, self.bufs.group(k, side), &[]);
        pass.dispatch_workgroups_indirect(self.bufs.get(args), 0);
        self.account(k, side, st);
    }

    /// Counts a dispatch of `k` and the bytes it binds for reading and writing.
    fn account(&self, k: Kernel, side: u32, st: &mut StageStats) {
        st.dispatches += 1;
        for (b, binding) in buffers::kernel_buffers(k, side).iter().zip(k.bindings()) {
            let t = self.params.tri_count as u64;
            let (read, written) = traffic::traffic(k, *b, *binding, self.bufs.used(*b), t);
            st.bytes_read += read;
            st.bytes_written += written;
        }
        debug_assert_eq!(
            k.bindings().contains(&Binding::UniformDynamic),
            matches!(k, Kernel::RadixCount | Kernel::RadixScatter | Kernel::RadixTiles),
            "only the sort binds a dynamic uniform (stride {UNIFORM_STRIDE})"
        );
    }
}
