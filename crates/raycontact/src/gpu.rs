//! The GPU backend: pipelines (once per device), capacity-sized buffers (reused across frames),
//! and the recording of a frame into a caller's command encoder.

use std::sync::Arc;

use bytemuck::Pod;

use crate::body::Packing;
use crate::context::GpuContext;
use crate::error::{Error, Result};
use crate::kernels::{Binding, Kernel};
use crate::layout::{
    self, BodyGpu, BodyPair, BodyState, ContactGpu, DETECT_REMEMBER_EXIT, DetectParams, DetectState,
    FrameParams, Node, RADIX_BITS, RADIX_BUCKETS, Ray, RayHit, RaycastParams, SORT_PASSES, SortPass,
    SortSegment, TILE, TriBox, UNIFORM_STRIDE, WG_SIZE, dispatch_size,
};
use crate::stats::{FrameStats, Stage, StageStats};

/// The GPU buffers a detection recorded with [`Scene::record_detect`](crate::Scene::record_detect)
/// leaves its contacts in.
#[derive(Clone, Copy, Debug)]
pub struct ContactBuffers<'a> {
    /// `array<ContactGpu>`: [`ContactGpu`] records, bodies by packed index, in no particular
    /// order; the first `min(count, capacity)` are valid.
    pub contacts: &'a wgpu::Buffer,
    /// [`DetectState`]: the contact count (possibly above the capacity after an overflow) is
    /// the `u32` at byte 8.
    pub state: &'a wgpu::Buffer,
    /// Four `u32` with `INDIRECT` usage: the `dispatch_workgroups_indirect` arguments (x, y, z)
    /// of one invocation per stored contact in workgroups of
    /// [`WG_SIZE`](crate::layout::WG_SIZE), then the number of stored contacts.
    pub dispatch_args: &'a wgpu::Buffer,
}

/// Bytes of one contact record.
const CONTACT_BYTES: u64 = std::mem::size_of::<ContactGpu>() as u64;
/// Bytes of the detection counters at the head of the contact readback.
const HEAD_BYTES: u64 = std::mem::size_of::<DetectState>() as u64;

/// Contact capacity of a new scene.
pub const DEFAULT_CONTACT_CAPACITY: u64 = 1 << 16;

/// Compute pipelines and bind-group layouts of every kernel, created once per device.
#[derive(Debug)]
pub(crate) struct Pipelines {
    entries: Vec<(Kernel, wgpu::BindGroupLayout, wgpu::ComputePipeline)>,
}

impl Pipelines {
    pub fn new(device: &wgpu::Device) -> Self {
        let entries = Kernel::ALL
            .iter()
            .map(|&k| {
                let label = k.label();
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&label),
                    source: wgpu::ShaderSource::Wgsl(k.source().into()),
                });
                let entries: Vec<wgpu::BindGroupLayoutEntry> = k
                    .bindings()
                    .iter()
                    .enumerate()
                    .map(|(i, b)| wgpu::BindGroupLayoutEntry {
                        binding: i as u32,
                        visibility: wgpu::ShaderStages::COMPUTE,
                        ty: wgpu::BindingType::Buffer {
                            ty: match b {
                                Binding::Uniform | Binding::UniformDynamic => {
                                    wgpu::BufferBindingType::Uniform
                                }
                                Binding::Storage => wgpu::BufferBindingType::Storage { read_only: true },
                                Binding::StorageMut => wgpu::BufferBindingType::Storage { read_only: false },
                            },
                            has_dynamic_offset: *b == Binding::UniformDynamic,
                            min_binding_size: None,
                        },
                        count: None,
                    })
                    .collect();
                let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some(&label),
                    entries: &entries,
                });
                let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                    label: Some(&label),
                    bind_group_layouts: &[Some(&bgl)],
                    immediate_size: 0,
                });
                let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&label),
                    layout: Some(&layout),
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                });
                (k, bgl, pipeline)
            })
            .collect();
        Self { entries }
    }

    fn get(&self, k: Kernel) -> (&wgpu::BindGroupLayout, &wgpu::ComputePipeline) {
        let (_, bgl, p) = self.entries.iter().find(|(e, _, _)| *e == k).expect("every kernel has a pipeline");
        (bgl, p)
    }
}

/// A buffer that counts its creation.
fn create_buffer(
    ctx: &GpuContext,
    allocations: &mut u64,
    label: &'static str,
    size: u64,
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    *allocations += 1;
    ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(16),
        usage,
        mapped_at_creation: false,
    })
}

const STORAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_DST).union(wgpu::BufferUsages::COPY_SRC);
const UNIFORM: wgpu::BufferUsages = wgpu::BufferUsages::UNIFORM.union(wgpu::BufferUsages::COPY_DST);
const READBACK: wgpu::BufferUsages = wgpu::BufferUsages::MAP_READ.union(wgpu::BufferUsages::COPY_DST);

/// A buffer and how many of its bytes the current packing uses.
#[derive(Debug)]
struct Buf {
    buffer: wgpu::Buffer,
    used: u64,
}

/// The scene's buffers, by name. Each kernel's bind group is a list of these names
/// ([`kernel_buffers`]), which also gives the bytes each dispatch reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum B {
    Params,
    Positions,
    PrevPositions,
    Upload,
    Normals,
    Triangles,
    VertexTriOffsets,
    VertexTris,
    TriBoxes,
    Bodies,
    BodyState,
    TileBody,
    Segments,
    Keys0,
    Keys1,
    Values0,
    Values1,
    Counters,
    SortPasses,
    Nodes,
    Parents,
    Visits,
    DetectParams,
    DetectState,
    Pairs,
    TileOffsets,
    Dispatch,
    Contacts,
    /// The other side of the contacts' ping-pong (iterative detection reads last frame's).
    Contacts2,
    ContactArgs,
    Adjacency,
    /// The narrow phase's source vertices, (directed pair, vertex).
    Sources,
}

const BUF_COUNT: usize = 32;

/// Capacities of the scene buffers, in elements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Capacity {
    pub vertices: u64,
    pub triangles: u64,
    pub bodies: u64,
    pub tiles: u64,
    pub pairs: u64,
    pub contacts: u64,
    /// Entries of the source-vertex list (`ray_sources`).
    pub sources: u64,
}

impl Capacity {
    fn fits(&self, need: &Capacity) -> bool {
        self.vertices >= need.vertices
            && self.triangles >= need.triangles
            && self.bodies >= need.bodies
            && self.tiles >= need.tiles
            && self.pairs >= need.pairs
            && self.contacts >= need.contacts
            && self.sources >= need.sources
    }

    /// What a packing needs, with room for every pair of bodies and `contacts` contacts.
    fn of(p: &FrameParams, contacts: u64) -> Self {
        let b = p.body_count as u64;
        Capacity {
            vertices: p.vertex_count as u64,
            triangles: p.tri_count as u64,
            bodies: b,
            tiles: p.tile_count as u64,
            pairs: (b * b.saturating_sub(1) / 2).max(1),
            contacts: contacts.max(1),
            // Every vertex as the source of two pairs; grown when a detection lists more.
            sources: (2 * p.vertex_count as u64).max(WG_SIZE as u64),
        }
    }

    /// Bytes of buffer `b` for these element counts.
    fn bytes(&self, b: B) -> u64 {
        let (v, t, n, tiles) = (self.vertices, self.triangles, self.bodies, self.tiles);
        match b {
            B::Params => 16,
            B::Positions | B::PrevPositions | B::Upload | B::Normals => 12 * v,
            B::Triangles | B::VertexTris => 12 * t,
            B::VertexTriOffsets => 4 * (v + 1),
            B::TriBoxes => 32 * t,
            B::Bodies => size_of::<BodyGpu>() as u64 * n,
            B::BodyState => size_of::<BodyState>() as u64 * n,
            B::TileBody => 4 * tiles,
            B::Segments => 16 * n,
            B::Keys0 | B::Keys1 | B::Values0 | B::Values1 => 4 * t,
            B::Counters => 4 * RADIX_BUCKETS as u64 * tiles,
            B::SortPasses => UNIFORM_STRIDE * SORT_PASSES as u64,
            B::Nodes => 64 * t,
            B::Parents | B::Visits => 8 * t,
            B::DetectParams => size_of::<DetectParams>() as u64,
            B::DetectState => size_of::<DetectState>() as u64,
            B::Dispatch | B::ContactArgs => 16,
            B::Pairs => size_of::<BodyPair>() as u64 * self.pairs,
            B::TileOffsets => 4 * (2 * self.pairs + 1),
            B::Sources => 8 * self.sources,
            B::Contacts | B::Contacts2 => std::mem::size_of::<ContactGpu>() as u64 * self.contacts,
            B::Adjacency => 12 * t,
        }
    }

    fn grown(&self, need: &Capacity) -> Capacity {
        let g = |have: u64, need: u64| if need <= have { have } else { need.max(have + have / 2).max(1) };
        Capacity {
            vertices: g(self.vertices, need.vertices),
            triangles: g(self.triangles, need.triangles),
            bodies: g(self.bodies, need.bodies),
            tiles: g(self.tiles, need.tiles),
            pairs: g(self.pairs, need.pairs),
            contacts: g(self.contacts, need.contacts),
            sources: g(self.sources, need.sources),
        }
    }
}

const ALL_BUFS: [B; BUF_COUNT] = [
    B::Params,
    B::Positions,
    B::PrevPositions,
    B::Upload,
    B::Normals,
    B::Triangles,
    B::VertexTriOffsets,
    B::VertexTris,
    B::TriBoxes,
    B::Bodies,
    B::BodyState,
    B::TileBody,
    B::Segments,
    B::Keys0,
    B::Keys1,
    B::Values0,
    B::Values1,
    B::Counters,
    B::SortPasses,
    B::Nodes,
    B::Parents,
    B::Visits,
    B::DetectParams,
    B::DetectState,
    B::Pairs,
    B::TileOffsets,
    B::Dispatch,
    B::Contacts,
    B::Contacts2,
    B::ContactArgs,
    B::Adjacency,
    B::Sources,
];

fn buf_label(b: B) -> &'static str {
    match b {
        B::Params => "raycontact.params",
        B::Positions => "raycontact.positions",
        B::PrevPositions => "raycontact.prev_positions",
        B::Upload => "raycontact.upload",
        B::Normals => "raycontact.normals",
        B::Triangles => "raycontact.triangles",
        B::VertexTriOffsets => "raycontact.vertex_tri_offsets",
        B::VertexTris => "raycontact.vertex_tris",
        B::TriBoxes => "raycontact.tri_boxes",
        B::Bodies => "raycontact.bodies",
        B::BodyState => "raycontact.body_state",
        B::TileBody => "raycontact.tile_body",
        B::Segments => "raycontact.segments",
        B::Keys0 => "raycontact.keys0",
        B::Keys1 => "raycontact.keys1",
        B::Values0 => "raycontact.values0",
        B::Values1 => "raycontact.values1",
        B::Counters => "raycontact.counters",
        B::SortPasses => "raycontact.sort_passes",
        B::Nodes => "raycontact.nodes",
        B::Parents => "raycontact.parents",
        B::Visits => "raycontact.visits",
        B::DetectParams => "raycontact.detect_params",
        B::DetectState => "raycontact.detect_state",
        B::Pairs => "raycontact.pairs",
        B::TileOffsets => "raycontact.tile_offsets",
        B::Dispatch => "raycontact.dispatch",
        B::Contacts => "raycontact.contacts",
        B::Contacts2 => "raycontact.contacts.alternate",
        B::ContactArgs => "raycontact.contact_args",
        B::Adjacency => "raycontact.adjacency",
        B::Sources => "raycontact.sources",
    }
}

/// The contact buffer written on ping-pong side `side` (and read back from), and the other one.
pub(crate) fn contact_sides(side: u32) -> (B, B) {
    if side.is_multiple_of(2) { (B::Contacts, B::Contacts2) } else { (B::Contacts2, B::Contacts) }
}

/// The buffers each kernel binds, in binding order. `pass` picks the ping-pong side of the sort
/// and of the contacts.
pub(crate) fn kernel_buffers(k: Kernel, pass: u32) -> Vec<B> {
    let (cur, prev) = contact_sides(pass);
    let (kin, vin, kout, vout) = if pass.is_multiple_of(2) {
        (B::Keys0, B::Values0, B::Keys1, B::Values1)
    } else {
        (B::Keys1, B::Values1, B::Keys0, B::Values0)
    };
    match k {
        Kernel::VertexNormals => {
            vec![B::Params, B::Positions, B::Triangles, B::VertexTriOffsets, B::VertexTris, B::Normals]
        }
        Kernel::TriangleBounds => {
            vec![B::Bodies, B::TileBody, B::Positions, B::Triangles, B::TriBoxes, B::BodyState, B::Params]
        }
        Kernel::Morton => vec![
            B::Bodies,
            B::TileBody,
            B::Positions,
            B::Triangles,
            B::TriBoxes,
            B::BodyState,
            B::Keys0,
            B::Values0,
            B::Params,
        ],
        Kernel::RadixCount => vec![B::SortPasses, B::Segments, B::TileBody, kin, B::Counters],
        Kernel::RadixScan => vec![B::SortPasses, B::Counters],
        Kernel::RadixScatter => {
            vec![B::SortPasses, B::Segments, B::TileBody, B::Counters, kin, vin, kout, vout]
        }
        Kernel::Hierarchy => {
            vec![B::Bodies, B::TileBody, B::BodyState, B::Keys0, B::Values0, B::Nodes, B::Parents, B::Params]
        }
        Kernel::Fit => vec![
            B::Bodies,
            B::TileBody,
            B::BodyState,
            B::TriBoxes,
            B::Parents,
            B::Nodes,
            B::Visits,
            B::Params,
        ],
        Kernel::Raycast => unreachable!("the ray-cast query has its own bind group"),
        Kernel::BroadPhase => vec![B::DetectParams, B::Bodies, B::BodyState, B::DetectState, B::Pairs],
        Kernel::PairTiles => {
            vec![B::DetectParams, B::Bodies, B::Pairs, B::DetectState, B::TileOffsets, B::Dispatch]
        }
        Kernel::NarrowPhase => vec![
            B::DetectParams,
            B::Bodies,
            B::BodyState,
            B::Positions,
            B::PrevPositions,
            B::Normals,
            B::Triangles,
            B::Nodes,
            B::Pairs,
            B::Sources,
            B::DetectState,
            cur,
        ],
        Kernel::ContactArgs => vec![B::DetectParams, B::DetectState, B::ContactArgs],
        Kernel::RaySources => vec![
            B::DetectParams,
            B::Bodies,
            B::BodyState,
            B::Positions,
            B::Pairs,
            B::TileOffsets,
            B::DetectState,
            B::Sources,
        ],
        Kernel::SourceArgs => vec![B::DetectParams, B::DetectState, B::Dispatch],
        Kernel::Walk => unreachable!("the walk query has its own bind group"),
        Kernel::WalkContacts => vec![
            B::DetectParams,
            B::Bodies,
            B::BodyState,
            B::Positions,
            B::PrevPositions,
            B::Normals,
            B::Triangles,
            B::Nodes,
            B::Adjacency,
            B::Pairs,
            prev,
            B::ContactArgs,
            B::DetectState,
            cur,
        ],
    }
}

/// Capacity-sized buffers of a scene and the bind groups over them.
#[derive(Debug)]
pub(crate) struct SceneGpu {
    ctx: GpuContext,
    pipelines: Arc<Pipelines>,
    cap: Capacity,
    bufs: Vec<Buf>,
    groups: Vec<(Kernel, u32, wgpu::BindGroup)>,
    /// Changes whenever the buffers are reallocated (query bind groups follow it).
    pub generation: u64,
    /// Buffers created so far (the scene's and its queries').
    pub allocations: u64,
    params: FrameParams,
    timer: Option<Timer>,
    query: Option<QueryBuffers>,
    readback: Option<(wgpu::Buffer, u64)>,
    /// Contact capacity asked for (the buffer may be larger).
    pub contact_capacity: u64,
    /// Readback of the detection state and the first contacts, and its capacity in contacts.
    contact_read: Option<(wgpu::Buffer, u64)>,
    /// Contacts of the last detection, to size the next readback.
    pub last_contact_count: u64,
    /// Buffers of walk queries ([`walk`]).
    walk: Option<walk::WalkBuffers>,
    /// The ping-pong side of the contacts of the last recorded detection.
    pub side: u32,
}

/// GPU timestamps around each stage's compute pass.
#[derive(Debug)]
struct Timer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
}

/// Stages of a frame that run in compute passes, in order: the update's, then the detection's.
pub(crate) const TIMED_STAGES: [Stage; 8] = [
    Stage::Normals,
    Stage::Bounds,
    Stage::Morton,
    Stage::Sort,
    Stage::Hierarchy,
    Stage::Fit,
    Stage::Pairs,
    Stage::Rays,
];
/// Timed stages of an update alone.
const UPDATE_STAGES: usize = 6;

impl SceneGpu {
    pub fn new(ctx: &GpuContext, pipelines: Arc<Pipelines>) -> Self {
        let mut s = SceneGpu {
            ctx: ctx.clone(),
            pipelines,
            cap: Capacity::default(),
            bufs: Vec::new(),
            groups: Vec::new(),
            generation: 0,
            allocations: 0,
            params: FrameParams::default(),
            timer: None,
            query: None,
            readback: None,
            contact_capacity: DEFAULT_CONTACT_CAPACITY,
            contact_read: None,
            last_contact_count: 0,
            walk: None,
            side: 0,
        };
        if ctx.has_timestamps() {
            let n = 2 * TIMED_STAGES.len() as u32;
            let set = ctx.device().create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("raycontact.timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: n,
            });
            let resolve = create_buffer(
                ctx,
                &mut s.allocations,
                "raycontact.timestamps.resolve",
                8 * n as u64,
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            );
            let read =
                create_buffer(ctx, &mut s.allocations, "raycontact.timestamps.read", 8 * n as u64, READBACK);
            s.timer = Some(Timer { set, resolve, read });
        }
        s
    }

    fn buf(&self, b: B) -> &wgpu::Buffer {
        &self.bufs[b as usize].buffer
    }

    /// Largest buffer the packing needs, for the limit check before it is applied.
    pub fn check_fits(
        ctx: &GpuContext,
        p: &FrameParams,
    ) -> std::result::Result<(), (&'static str, u64, u64)> {
        let need = Capacity::of(p, 1);
        let limits = ctx.device().limits();
        let max_binding = limits.max_storage_buffer_binding_size;
        let max_buffer = limits.max_buffer_size;
        for b in ALL_BUFS {
            let bytes = need.bytes(b);
            if bytes > max_binding.min(max_buffer) {
                return Err((buf_label(b), bytes, max_binding.min(max_buffer)));
            }
        }
        let groups = p.tile_count.div_ceil(layout::MAX_GROUPS_X);
        if groups > limits.max_compute_workgroups_per_dimension {
            return Err((
                "the tile count",
                p.tile_count as u64,
                limits.max_compute_workgroups_per_dimension as u64 * layout::MAX_GROUPS_X as u64,
            ));
        }
        Ok(())
    }

    /// Uploads a new packing (topology change): grows the buffers if needed, writes the
    /// topology, the current positions and the previous positions.
    pub fn set_packing(&mut self, p: &Packing, positions: &[glam::Vec3], previous: &[glam::Vec3]) {
        let need = Capacity::of(&p.params, self.cap.contacts.max(self.contact_capacity));
        if self.bufs.is_empty() || !self.cap.fits(&need) {
            self.cap = self.cap.grown(&need);
            self.bufs = ALL_BUFS
                .iter()
                .map(|&b| {
                    let usage = match b {
                        B::Params | B::SortPasses | B::DetectParams => UNIFORM,
                        B::Dispatch | B::ContactArgs => STORAGE | wgpu::BufferUsages::INDIRECT,
                        _ => STORAGE,
                    };
                    let size = self.cap.bytes(b);
                    Buf {
                        buffer: create_buffer(&self.ctx, &mut self.allocations, buf_label(b), size, usage),
                        used: 0,
                    }
                })
                .collect();
            self.generation += 1;
            self.make_groups();
        }
        for b in ALL_BUFS {
            self.bufs[b as usize].used = need.bytes(b);
        }
        self.params = p.params;
        let q = self.ctx.queue();
        let w = |b: B, data: &[u8]| {
            if !data.is_empty() {
                q.write_buffer(&self.bufs[b as usize].buffer, 0, data);
            }
        };
        w(B::Params, bytemuck::bytes_of(&p.params));
        w(B::Triangles, bytemuck::cast_slice(&p.triangles));
        w(B::VertexTriOffsets, bytemuck::cast_slice(&p.vertex_tri_offsets));
        w(B::VertexTris, bytemuck::cast_slice(&p.vertex_tris));
        w(B::Bodies, bytemuck::cast_slice(&p.bodies));
        w(B::TileBody, bytemuck::cast_slice(&p.tile_body));
        w(B::Segments, bytemuck::cast_slice(&p.segments));
        w(B::Positions, bytemuck::cast_slice(positions));
        w(B::PrevPositions, bytemuck::cast_slice(previous));
        w(B::SortPasses, &sort_pass_uniforms(p.params.tile_count));
        w(B::Adjacency, bytemuck::cast_slice(&p.adjacency));
    }

    fn make_groups(&mut self) {
        let mut groups = Vec::new();
        for k in Kernel::ALL {
            let passes = match k {
                Kernel::Raycast | Kernel::Walk => continue,
                Kernel::RadixCount | Kernel::RadixScatter | Kernel::NarrowPhase | Kernel::WalkContacts => 2,
                _ => 1,
            };
            for pass in 0..passes {
                let bufs = kernel_buffers(k, pass);
                let entries: Vec<wgpu::BindGroupEntry> = bufs
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| wgpu::BindGroupEntry {
                        binding: i as u32,
                        resource: if b == B::SortPasses {
                            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: self.buf(b),
                                offset: 0,
                                size: wgpu::BufferSize::new(std::mem::size_of::<SortPass>() as u64),
                            })
                        } else {
                            self.buf(b).as_entire_binding()
                        },
                    })
                    .collect();
                let group = self.ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&k.label()),
                    layout: self.pipelines.get(k).0,
                    entries: &entries,
                });
                groups.push((k, pass, group));
            }
        }
        self.groups = groups;
    }

    fn group(&self, k: Kernel, pass: u32) -> &wgpu::BindGroup {
        let two = matches!(
            k,
            Kernel::RadixCount | Kernel::RadixScatter | Kernel::NarrowPhase | Kernel::WalkContacts
        );
        let pass = if two { pass % 2 } else { 0 };
        &self.groups.iter().find(|(e, p, _)| *e == k && *p == pass).expect("bind group exists").2
    }

    /// Writes new positions of a body (packed vertex range) into the upload buffer; the next
    /// recorded frame copies them in.
    pub fn stage_positions(&self, vertex_offset: u32, positions: &[glam::Vec3]) {
        self.ctx.queue().write_buffer(
            self.buf(B::Upload),
            12 * vertex_offset as u64,
            bytemuck::cast_slice(positions),
        );
    }

    /// Records one frame: previous positions, staged uploads, then normals, bounds, Morton codes,
    /// sort, hierarchy and fit, for all bodies. Does not submit.
    pub fn record_frame(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        copy_previous: bool,
        uploads: &[(u32, u32)],
        rebuild: bool,
        stats: &mut FrameStats,
    ) {
        let p = self.params;
        if p.tri_count == 0 {
            return;
        }
        let pos_bytes = 12 * p.vertex_count as u64;
        if copy_previous {
            encoder.copy_buffer_to_buffer(
                self.buf(B::Positions),
                0,
                self.buf(B::PrevPositions),
                0,
                Some(pos_bytes),
            );
            stats.stage(Stage::Upload).add_copy(pos_bytes);
        }
        for &(first, count) in uploads {
            let (off, size) = (12 * first as u64, 12 * count as u64);
            encoder.copy_buffer_to_buffer(self.buf(B::Upload), off, self.buf(B::Positions), off, Some(size));
            stats.stage(Stage::Upload).add_copy(size);
        }
        // Per-frame accumulators start from zero (when the BVH is rebuilt: otherwise the last
        // one, boxes included, stays).
        for b in [B::BodyState, B::Visits].into_iter().filter(|_| rebuild) {
            encoder.clear_buffer(self.buf(b), 0, Some(self.bufs[b as usize].used));
            stats.stage(Stage::Bounds).bytes_written += self.bufs[b as usize].used;
        }
        let vertex_groups = p.vertex_count.div_ceil(WG_SIZE);
        let tiles = p.tile_count;
        for (si, stage) in TIMED_STAGES[..UPDATE_STAGES].iter().enumerate() {
            let timestamp_writes = self.timer.as_ref().map(|t| wgpu::ComputePassTimestampWrites {
                query_set: &t.set,
                beginning_of_pass_write_index: Some(2 * si as u32),
                end_of_pass_write_index: Some(2 * si as u32 + 1),
            });
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(stage.label()),
                timestamp_writes,
            });
            if !rebuild && *stage != Stage::Normals {
                // Iterative detection without a BVH: the pass stays (empty) so that every
                // timestamp pair is written.
                continue;
            }
            match stage {
                Stage::Normals => {
                    self.dispatch(&mut pass, Kernel::VertexNormals, 0, vertex_groups, stats.stage(*stage))
                }
                Stage::Bounds => {
                    self.dispatch(&mut pass, Kernel::TriangleBounds, 0, tiles, stats.stage(*stage))
                }
                Stage::Morton => self.dispatch(&mut pass, Kernel::Morton, 0, tiles, stats.stage(*stage)),
                Stage::Sort => {
                    for sp in 0..SORT_PASSES {
                        let st = stats.stage(*stage);
                        self.dispatch(&mut pass, Kernel::RadixCount, sp, tiles, st);
                        self.dispatch(&mut pass, Kernel::RadixScan, sp, 1, st);
                        self.dispatch(&mut pass, Kernel::RadixScatter, sp, tiles, st);
                    }
                }
                Stage::Hierarchy => {
                    self.dispatch(&mut pass, Kernel::Hierarchy, 0, tiles, stats.stage(*stage))
                }
                Stage::Fit => self.dispatch(&mut pass, Kernel::Fit, 0, tiles, stats.stage(*stage)),
                _ => unreachable!("not a stage of the update"),
            }
        }
        self.resolve_timestamps(encoder, UPDATE_STAGES);
    }

    fn resolve_timestamps(&self, encoder: &mut wgpu::CommandEncoder, stages: usize) {
        if let Some(t) = &self.timer {
            let n = 2 * stages as u32;
            encoder.resolve_query_set(&t.set, 0..n, &t.resolve, 0);
            encoder.copy_buffer_to_buffer(&t.resolve, 0, &t.read, 0, Some(8 * n as u64));
        }
    }

    fn timed_pass<'e>(&self, encoder: &'e mut wgpu::CommandEncoder, stage: Stage) -> wgpu::ComputePass<'e> {
        let si = TIMED_STAGES.iter().position(|s| *s == stage).expect("a timed stage") as u32;
        let timestamp_writes = self.timer.as_ref().map(|t| wgpu::ComputePassTimestampWrites {
            query_set: &t.set,
            beginning_of_pass_write_index: Some(2 * si),
            end_of_pass_write_index: Some(2 * si + 1),
        });
        encoder
            .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(stage.label()), timestamp_writes })
    }

    /// Grows the pair list, the source list and the contact buffers (only those buffers: the
    /// frame's data stays).
    pub fn reserve_detect(&mut self, pairs: u64, contacts: u64, sources: u64) {
        let need = Capacity {
            pairs: pairs.max(1),
            contacts: contacts.max(1),
            sources: sources.max(self.cap.sources),
            ..self.cap
        };
        self.contact_capacity = contacts.max(1);
        if self.bufs.is_empty() || self.cap.fits(&need) {
            return;
        }
        let grown = self.cap.grown(&need);
        let grown = Capacity { contacts: grown.contacts.max(contacts), ..grown };
        for b in [B::Pairs, B::TileOffsets, B::Contacts, B::Contacts2, B::Sources] {
            if grown.bytes(b) > self.cap.bytes(b) {
                let buffer =
                    create_buffer(&self.ctx, &mut self.allocations, buf_label(b), grown.bytes(b), STORAGE);
                self.bufs[b as usize] = Buf { buffer, used: grown.bytes(b) };
            }
        }
        self.cap = grown;
        self.generation += 1;
        self.make_groups();
    }

    /// Capacities of the pair list and of contacts (as asked; the buffer may be larger).
    pub fn detect_capacity(&self) -> (u64, u64) {
        (self.cap.pairs, self.contact_capacity)
    }

    /// Capacity of the source-vertex list.
    pub fn source_capacity(&self) -> u64 {
        self.cap.sources
    }

    /// Records a detection over this frame's BVHs (recorded before it), writing the contacts
    /// into ping-pong side `side` (see [`contact_sides`]). A full pass (`walk` is `None`): the
    /// pairs (`list`, or every pair whose boxes overlap, found on the GPU with `pairing`'s
    /// self-collision bits and prediction distance) and the narrow phase as an indirect
    /// dispatch. An iterative pass (`walk`: the fallback code and `confidence × threshold`):
    /// `walk_contacts` over the other side's contacts, with the pair list of the last full pass.
    /// `remember`: contacts keep their exit triangles and `contact_args` records the count for
    /// the next frame's walks. When `readback` is set, the counters and the first contacts are
    /// copied to the readback buffer; returns how many contacts that copy holds.
    #[allow(clippy::too_many_arguments)]
    pub fn record_detect(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        list: Option<&[BodyPair]>,
        pairing: (u32, f32),
        walk: Option<(u32, f32)>,
        remember: bool,
        side: u32,
        readback: bool,
        stats: &mut FrameStats,
    ) -> u64 {
        let q = self.ctx.queue().clone();
        let (walk_fallback, walk_reach) = walk.unwrap_or((0, 0.0));
        let params = DetectParams {
            pair_capacity: self.cap.pairs as u32,
            contact_capacity: self.contact_capacity as u32,
            body_count: self.params.body_count,
            self_collision: pairing.0,
            prediction: pairing.1,
            walk_fallback,
            walk_reach,
            flags: if remember { DETECT_REMEMBER_EXIT } else { 0 },
            source_capacity: self.cap.sources.min(u32::MAX as u64) as u32,
            ..Default::default()
        };
        q.write_buffer(self.buf(B::DetectParams), 0, bytemuck::bytes_of(&params));
        let b = self.params.body_count;
        if walk.is_none() {
            let pair_count = list.map_or(0, |l| l.len() as u32);
            if let Some(l) = list.filter(|l| !l.is_empty()) {
                q.write_buffer(self.buf(B::Pairs), 0, bytemuck::cast_slice(l));
            }
            let state = DetectState { pair_count, ..Default::default() };
            q.write_buffer(self.buf(B::DetectState), 0, bytemuck::bytes_of(&state));
            let used_pairs = list.map_or((b as u64 * (b as u64 + 1) / 2).max(1), |l| l.len() as u64);
            self.bufs[B::Pairs as usize].used = size_of::<BodyPair>() as u64 * used_pairs;
            self.bufs[B::TileOffsets as usize].used = 4 * (2 * used_pairs + 1);
            self.bufs[B::Sources as usize].used = 8 * self.cap.sources;
        } else {
            // The pair list and its workgroup layout stay those of the last full pass.
            q.write_buffer(self.buf(B::DetectState), 8, bytemuck::bytes_of(&[0u32; 14]));
        }
        {
            let mut pass = self.timed_pass(encoder, Stage::Pairs);
            if walk.is_none() {
                if list.is_none() {
                    let groups = (b * b).div_ceil(WG_SIZE);
                    self.dispatch(&mut pass, Kernel::BroadPhase, 0, groups, stats.stage(Stage::Pairs));
                }
                self.dispatch(&mut pass, Kernel::PairTiles, 0, 1, stats.stage(Stage::Pairs));
                // The source vertices within reach, then the narrow phase's dispatch over them.
                let (_, pipeline) = self.pipelines.get(Kernel::RaySources);
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, self.group(Kernel::RaySources, 0), &[]);
                pass.dispatch_workgroups_indirect(self.buf(B::Dispatch), 0);
                let st = stats.stage(Stage::Pairs);
                st.dispatches += 1;
                self.account(Kernel::RaySources, 0, st);
                self.dispatch(&mut pass, Kernel::SourceArgs, 0, 1, stats.stage(Stage::Pairs));
            }
        }
        {
            let mut pass = self.timed_pass(encoder, Stage::Rays);
            let (kernel, args) = match walk {
                None => (Kernel::NarrowPhase, B::Dispatch),
                Some(_) => (Kernel::WalkContacts, B::ContactArgs),
            };
            let (_, pipeline) = self.pipelines.get(kernel);
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, self.group(kernel, side), &[]);
            pass.dispatch_workgroups_indirect(self.buf(args), 0);
            let st = stats.stage(Stage::Rays);
            st.dispatches += 1;
            self.account(kernel, side, st);
            if remember || !readback {
                // Dispatch arguments over the contacts: for a GPU consumer, and for the next
                // frame's walks.
                self.dispatch(&mut pass, Kernel::ContactArgs, 0, 1, st);
            }
        }
        self.resolve_timestamps(encoder, TIMED_STAGES.len());
        self.side = side;
        if !readback {
            return 0;
        }
        let k = (self.last_contact_count + self.last_contact_count / 4 + 64).min(self.contact_capacity);
        let bytes = HEAD_BYTES + k * CONTACT_BYTES;
        self.ensure_contact_read(k);
        let (read, _) = self.contact_read.as_ref().expect("contact readback");
        let (cur, _) = contact_sides(side);
        encoder.copy_buffer_to_buffer(self.buf(B::DetectState), 0, read, 0, Some(HEAD_BYTES));
        encoder.copy_buffer_to_buffer(self.buf(cur), 0, read, HEAD_BYTES, Some(k * CONTACT_BYTES));
        stats.stage(Stage::Readback).add_copy(bytes);
        k
    }

    fn ensure_contact_read(&mut self, contacts: u64) {
        if self.contact_read.as_ref().is_none_or(|(_, cap)| *cap < contacts) {
            let cap = contacts.max(self.contact_read.as_ref().map_or(0, |r| r.1 + r.1 / 2));
            let b = create_buffer(
                &self.ctx,
                &mut self.allocations,
                "raycontact.contacts.read",
                HEAD_BYTES + cap * CONTACT_BYTES,
                READBACK,
            );
            self.contact_read = Some((b, cap));
        }
    }

    /// Reads the counters and the contacts of a submitted detection whose first `copied`
    /// contacts were copied for readback; copies the rest (a second, copy-only submission) when
    /// there were more. Returns the counters and at most the capacity of contacts.
    pub async fn read_detect(
        &mut self,
        copied: u64,
        stats: &mut FrameStats,
        blocking: bool,
    ) -> Result<(DetectState, Vec<ContactGpu>)> {
        let (read, _) = self.contact_read.as_ref().expect("contact readback");
        let head =
            self.ctx.read_mapped_async(read, "raycontact.contacts.read", 0, HEAD_BYTES, blocking).await?;
        let state: DetectState = bytemuck::pod_read_unaligned(&head);
        let count = (state.contact_count as u64).min(self.contact_capacity);
        self.last_contact_count = state.contact_count as u64;
        if count > copied {
            // Room for what the next frame will copy at once (see `record_detect`).
            self.ensure_contact_read((count + count / 4 + 64).min(self.contact_capacity));
            let (read, _) = self.contact_read.as_ref().expect("contact readback");
            let mut enc = self.ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("raycontact.contacts.read"),
            });
            let (cur, _) = contact_sides(self.side);
            enc.copy_buffer_to_buffer(self.buf(cur), 0, read, HEAD_BYTES, Some(count * CONTACT_BYTES));
            self.ctx.queue().submit([enc.finish()]);
            stats.stage(Stage::Readback).add_copy(count * CONTACT_BYTES);
        }
        let (read, _) = self.contact_read.as_ref().expect("contact readback");
        let bytes = self
            .ctx
            .read_mapped_async(read, "raycontact.contacts.read", HEAD_BYTES, count * CONTACT_BYTES, blocking)
            .await?;
        stats.bytes_read_back += HEAD_BYTES + count * CONTACT_BYTES;
        Ok((state, bytemuck::pod_collect_to_vec(&bytes)))
    }

    /// The contact buffer, the counters buffer and the indirect arguments buffer, for a GPU
    /// consumer of [`Scene::record_detect`](crate::Scene::record_detect).
    pub fn contact_buffers(&self) -> ContactBuffers<'_> {
        ContactBuffers {
            contacts: self.buf(contact_sides(self.side).0),
            state: self.buf(B::DetectState),
            dispatch_args: self.buf(B::ContactArgs),
        }
    }

    fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        k: Kernel,
        sort_pass: u32,
        groups: u32,
        st: &mut StageStats,
    ) {
        if groups == 0 {
            return;
        }
        let (_, pipeline) = self.pipelines.get(k);
        pass.set_pipeline(pipeline);
        let dynamic = [sort_pass * UNIFORM_STRIDE as u32];
        let offsets: &[u32] = if k.bindings().contains(&Binding::UniformDynamic) { &dynamic } else { &[] };
        pass.set_bind_group(0, self.group(k, sort_pass), offsets);
        let (x, y) = dispatch_size(groups);
        pass.dispatch_workgroups(x, y, 1);
        st.dispatches += 1;
        self.account(k, sort_pass, st);
    }

    /// Counts the bytes a dispatch of `k` binds for reading and writing.
    fn account(&self, k: Kernel, sort_pass: u32, st: &mut StageStats) {
        for (b, binding) in kernel_buffers(k, sort_pass).iter().zip(k.bindings()) {
            let used = if *b == B::SortPasses {
                std::mem::size_of::<SortPass>() as u64
            } else {
                self.bufs[*b as usize].used
            };
            st.bytes_read += used;
            if binding.writes() {
                st.bytes_written += used;
            }
        }
    }

    /// Per-stage GPU times of the last submitted frame, in nanoseconds (None without
    /// timestamps). Waits for the GPU.
    pub fn read_timings(&self, detect: bool) -> Result<Option<Vec<(Stage, f64)>>> {
        let Some(t) = &self.timer else { return Ok(None) };
        let stages = if detect { TIMED_STAGES.len() } else { UPDATE_STAGES };
        let n = 2 * stages as u64;
        let bytes = self.ctx.read_mapped(&t.read, "raycontact.timestamps.read", 0, 8 * n)?;
        let ticks: &[u64] = bytemuck::cast_slice(&bytes);
        let period = self.ctx.queue().get_timestamp_period() as f64;
        Ok(Some(
            TIMED_STAGES[..stages]
                .iter()
                .enumerate()
                .map(|(i, s)| (*s, ticks[2 * i + 1].saturating_sub(ticks[2 * i]) as f64 * period))
                .collect(),
        ))
    }

    /// Reads back `count` elements of type `T` from buffer `b` at element `first` (debugging and
    /// tests; reuses one readback buffer, grown when needed).
    pub fn read<T: Pod>(&mut self, b: B, first: u64, count: u64) -> Result<Vec<T>> {
        let ctx = self.ctx.clone();
        ctx.scoped("readback", || self.read_unscoped(b, first, count))
    }

    fn read_unscoped<T: Pod>(&mut self, b: B, first: u64, count: u64) -> Result<Vec<T>> {
        let size = std::mem::size_of::<T>() as u64;
        let bytes = (count * size).div_ceil(4) * 4;
        if bytes == 0 {
            return Ok(Vec::new());
        }
        self.ensure_readback(bytes);
        let (rb, _) = self.readback.as_ref().expect("readback buffer");
        let mut enc = self
            .ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("raycontact.read") });
        enc.copy_buffer_to_buffer(self.buf(b), first * size, rb, 0, Some(bytes));
        self.ctx.queue().submit([enc.finish()]);
        let data = self.ctx.read_mapped(rb, "raycontact.readback", 0, bytes)?;
        Ok(bytemuck::pod_collect_to_vec(&data[..(count * size) as usize]))
    }

    fn ensure_readback(&mut self, bytes: u64) {
        if self.readback.as_ref().is_none_or(|(_, cap)| *cap < bytes) {
            let cap = bytes.max(self.readback.as_ref().map_or(0, |r| r.1 * 2));
            let b = create_buffer(&self.ctx, &mut self.allocations, "raycontact.readback", cap, READBACK);
            self.readback = Some((b, cap));
        }
    }

    /// Reads back everything a frame built, in the CPU twins' layout.
    pub fn read_frame(&mut self) -> Result<crate::frame::FrameData> {
        let p = self.params;
        let (v, t, n) = (p.vertex_count as u64, p.tri_count as u64, p.body_count as u64);
        Ok(crate::frame::FrameData {
            normals: self.read::<glam::Vec3>(B::Normals, 0, v)?,
            tri_boxes: self.read::<TriBox>(B::TriBoxes, 0, t)?,
            body_state: self.read::<BodyState>(B::BodyState, 0, n)?,
            keys: self.read::<u32>(B::Keys0, 0, t)?,
            values: self.read::<u32>(B::Values0, 0, t)?,
            nodes: self.read::<Node>(B::Nodes, 0, 2 * t)?,
            parents: self.read::<u32>(B::Parents, 0, 2 * t)?,
        })
    }

    /// Closest hits of `rays` against packed body `body`: one submission, one readback.
    pub fn raycast(&mut self, body: u32, rays: &[Ray]) -> Result<Vec<RayHit>> {
        if rays.is_empty() {
            return Ok(Vec::new());
        }
        let n = rays.len() as u64;
        let grow = self.query.as_ref().is_none_or(|q| q.capacity < n || q.generation != self.generation);
        if grow {
            let capacity = self.query.as_ref().map_or(0, |q| q.capacity).max(n);
            self.query = Some(QueryBuffers::new(self, capacity));
        }
        let q = self.query.as_ref().expect("query buffers");
        let queue = self.ctx.queue();
        queue.write_buffer(
            &q.params,
            0,
            bytemuck::bytes_of(&RaycastParams { body, ray_count: n as u32, pad0: 0, pad1: 0 }),
        );
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
        let bytes = n * std::mem::size_of::<RayHit>() as u64;
        enc.copy_buffer_to_buffer(&q.hits, 0, &q.read, 0, Some(bytes));
        queue.submit([enc.finish()]);
        let data = self.ctx.read_mapped(&q.read, "raycontact.raycast.read", 0, bytes)?;
        self.ctx.take_error("raycast")?;
        Ok(bytemuck::pod_collect_to_vec(&data))
    }
}

impl SceneGpu {
    /// The bind group of a query kernel over whole buffers, in binding order.
    pub(crate) fn query_group(&self, k: Kernel, bufs: &[&wgpu::Buffer]) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = bufs
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
            .collect();
        self.ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&k.label()),
            layout: self.pipelines.get(k).0,
            entries: &entries,
        })
    }
}

/// Buffers of ray-cast queries, grown to the largest batch seen.
#[derive(Debug)]
struct QueryBuffers {
    capacity: u64,
    generation: u64,
    params: wgpu::Buffer,
    rays: wgpu::Buffer,
    hits: wgpu::Buffer,
    read: wgpu::Buffer,
    group: wgpu::BindGroup,
}

impl QueryBuffers {
    fn new(s: &mut SceneGpu, capacity: u64) -> Self {
        let ray_bytes = capacity * std::mem::size_of::<Ray>() as u64;
        let hit_bytes = capacity * std::mem::size_of::<RayHit>() as u64;
        let ctx = s.ctx.clone();
        let params = create_buffer(&ctx, &mut s.allocations, "raycontact.raycast.params", 16, UNIFORM);
        let rays = create_buffer(&ctx, &mut s.allocations, "raycontact.raycast.rays", ray_bytes, STORAGE);
        let hits = create_buffer(&ctx, &mut s.allocations, "raycontact.raycast.hits", hit_bytes, STORAGE);
        let read = create_buffer(&ctx, &mut s.allocations, "raycontact.raycast.read", hit_bytes, READBACK);
        let bufs = [
            &params,
            s.buf(B::Bodies),
            s.buf(B::BodyState),
            s.buf(B::Positions),
            s.buf(B::Triangles),
            s.buf(B::Nodes),
            &rays,
            &hits,
        ];
        let group = s.query_group(Kernel::Raycast, &bufs);
        QueryBuffers { capacity, generation: s.generation, params, rays, hits, read, group }
    }
}

/// The eight per-pass uniforms of the radix sort, at [`UNIFORM_STRIDE`] apart.
fn sort_pass_uniforms(tile_count: u32) -> Vec<u8> {
    let mut out = vec![0u8; (UNIFORM_STRIDE * SORT_PASSES as u64) as usize];
    for p in 0..SORT_PASSES {
        let u = SortPass { shift: p * RADIX_BITS, tile_count, pad0: 0, pad1: 0 };
        let at = (p as u64 * UNIFORM_STRIDE) as usize;
        out[at..at + 16].copy_from_slice(bytemuck::bytes_of(&u));
    }
    out
}

/// A standalone GPU radix sort of (key, value) pairs, on its own capacity-sized buffers, with
/// the scene's kernels (`radix_count`, `radix_scan`, `radix_scatter`).
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
    inner: SceneGpu,
}

impl GpuRadixSort {
    /// A sorter for up to `capacity` pairs (it grows when given more).
    pub fn new(ctx: &GpuContext, capacity: usize) -> Self {
        let mut inner = SceneGpu::new(ctx, ctx.pipelines());
        inner.timer = None;
        let mut s = GpuRadixSort { inner };
        s.reserve(capacity.max(1) as u64);
        s
    }

    /// Grows the buffers (element and tile capacity alike) to hold `n` pairs.
    fn reserve(&mut self, n: u64) {
        let tiles = n.div_ceil(TILE as u64);
        let p = FrameParams { vertex_count: 0, tri_count: n as u32, tile_count: tiles as u32, body_count: 1 };
        if !self.inner.bufs.is_empty() && self.inner.cap.fits(&Capacity::of(&p, 1)) {
            return;
        }
        let packing = Packing { params: p, ..Default::default() };
        self.inner.set_packing(&packing, &[], &[]);
    }

    /// Sorts `keys` (with `values` alongside) stably by key; blocking. Errors: a GPU error.
    pub fn sort(&mut self, keys: &[u32], values: &[u32]) -> Result<(Vec<u32>, Vec<u32>)> {
        let ctx = self.inner.ctx.clone();
        ctx.scoped("radix sort", || self.sort_unscoped(keys, values))
    }

    fn sort_unscoped(&mut self, keys: &[u32], values: &[u32]) -> Result<(Vec<u32>, Vec<u32>)> {
        if keys.len() != values.len() {
            return Err(Error::InvalidInput {
                what: format!("{} keys but {} values", keys.len(), values.len()),
            });
        }
        let n = keys.len() as u64;
        if n == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        if n > u32::MAX as u64 / 2 {
            return Err(Error::InvalidInput { what: format!("{n} keys, over the supported 2^31") });
        }
        self.reserve(n);
        let tiles = n.div_ceil(TILE as u64) as u32;
        let q = self.inner.ctx.queue();
        let seg = SortSegment { offset: 0, count: n as u32, tile_offset: 0, tile_count: tiles };
        q.write_buffer(self.inner.buf(B::Segments), 0, bytemuck::bytes_of(&seg));
        q.write_buffer(self.inner.buf(B::TileBody), 0, bytemuck::cast_slice(&vec![0u32; tiles as usize]));
        q.write_buffer(self.inner.buf(B::SortPasses), 0, &sort_pass_uniforms(tiles));
        q.write_buffer(self.inner.buf(B::Keys0), 0, bytemuck::cast_slice(keys));
        q.write_buffer(self.inner.buf(B::Values0), 0, bytemuck::cast_slice(values));
        let mut enc = self
            .inner
            .ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("raycontact.sort") });
        let mut stats = FrameStats::default();
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("raycontact.sort"),
                timestamp_writes: None,
            });
            for sp in 0..SORT_PASSES {
                let st = stats.stage(Stage::Sort);
                self.inner.dispatch(&mut pass, Kernel::RadixCount, sp, tiles, st);
                self.inner.dispatch(&mut pass, Kernel::RadixScan, sp, 1, st);
                self.inner.dispatch(&mut pass, Kernel::RadixScatter, sp, tiles, st);
            }
        }
        self.inner.ctx.queue().submit([enc.finish()]);
        self.inner.ctx.wait("radix sort")?;
        let k = self.inner.read::<u32>(B::Keys0, 0, n)?;
        let v = self.inner.read::<u32>(B::Values0, 0, n)?;
        self.inner.ctx.take_error("radix sort")?;
        Ok((k, v))
    }
}

mod walk;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_table_follows_the_enum() {
        for (i, b) in ALL_BUFS.iter().enumerate() {
            assert_eq!(*b as usize, i, "ALL_BUFS[{i}] is {b:?}: the scene's buffers are indexed by B");
        }
    }
}
