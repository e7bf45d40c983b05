//! The scene's GPU buffers: one table of named buffers ([`B`]) sized by capacity, grown (never
//! shrunk) when a packing or a detection needs more, and the bind groups of every frame kernel
//! over them. Each kernel's bind group is a list of buffer names ([`kernel_buffers`]), which,
//! with the parts of each buffer the kernel uses ([`super::traffic`]), also gives the bytes each
//! dispatch reads and writes.

use crate::context::GpuContext;
use crate::kernels::{Kernel, Pipelines};
use crate::layout::{
    BodyGpu, BodyPair, BodyState, COUNTERS_PER_TILE, ContactGpu, DetectParams, FrameParams, PAIRS_OFFSET,
    SORT_PASSES, SortPass, TRIANGLE_WORDS, UNIFORM_STRIDE, VERTEX_REGIONS, WG_SIZE,
};
use crate::stats::StageStats;

pub(crate) const STORAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_DST).union(wgpu::BufferUsages::COPY_SRC);
pub(crate) const UNIFORM: wgpu::BufferUsages =
    wgpu::BufferUsages::UNIFORM.union(wgpu::BufferUsages::COPY_DST);
pub(crate) const READBACK: wgpu::BufferUsages =
    wgpu::BufferUsages::MAP_READ.union(wgpu::BufferUsages::COPY_DST);
const INDIRECT: wgpu::BufferUsages = STORAGE.union(wgpu::BufferUsages::INDIRECT);

/// Creates a buffer (at least 16 bytes) and counts it in `allocations`.
pub(crate) fn create_buffer(
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

/// The scene's buffers, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum B {
    Params,
    /// Positions, previous positions and normals, three regions
    /// ([`VERTEX_REGIONS`](crate::layout::VERTEX_REGIONS)).
    Vertices,
    /// Where the positions are copied on their way to the previous positions' region (WebGPU
    /// copies no buffer into itself).
    Previous,
    Upload,
    /// Triangles, their adjacency, the incidence, the trees' fan words and the incidence's
    /// offsets ([`TRIANGLE_WORDS`](crate::layout::TRIANGLE_WORDS)).
    Triangles,
    TriBoxes,
    Bodies,
    BodyState,
    TileBody,
    Segments,
    Keys0,
    Keys1,
    Values0,
    Values1,
    /// The radix sort's digit counts of every pass ([`COUNTERS_PER_TILE`] per tile).
    Counters,
    SortPasses,
    Nodes,
    Parents,
    /// `fit`'s box keys and fan sets, seven words per internal node, zeroed before each fit.
    FitKeys,
    DetectParams,
    /// The detection's counters ([`DetectState`](crate::layout::DetectState)), then the pair list
    /// ([`PAIRS_OFFSET`]).
    Pairs,
    TileOffsets,
    Dispatch,
    /// Contacts of ping-pong side 0 (iterative detection reads last frame's side).
    Contacts,
    /// Contacts of ping-pong side 1.
    Contacts2,
    /// Indirect arguments over the contacts of side 0.
    ContactArgs,
    /// Indirect arguments over the contacts of side 1.
    ContactArgs2,
    /// The narrow phase's source vertices, (directed pair, vertex), and after the list's
    /// capacity its exit memo (a word per packed vertex, a moved body's emptied before a full
    /// pass: `narrow_phase.wgsl`).
    Sources,
    /// Each body's vertices (packed indices) in the order its rays are cast and its normals
    /// computed ([`crate::ray_order`]).
    VertexOrder,
}

const BUF_COUNT: usize = 29;

pub(crate) const ALL_BUFS: [B; BUF_COUNT] = [
    B::Params,
    B::Vertices,
    B::Previous,
    B::Upload,
    B::Triangles,
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
    B::FitKeys,
    B::DetectParams,
    B::Pairs,
    B::TileOffsets,
    B::Dispatch,
    B::Contacts,
    B::Contacts2,
    B::ContactArgs,
    B::ContactArgs2,
    B::Sources,
    B::VertexOrder,
];

/// The buffers a detection grows: the pair list, its workgroup layout, the sources and both
/// contact sides.
pub(crate) const DETECT_BUFS: [B; 5] = [B::Pairs, B::TileOffsets, B::Contacts, B::Contacts2, B::Sources];

pub(crate) fn buf_label(b: B) -> &'static str {
    match b {
        B::Params => "raycontact.params",
        B::Vertices => "raycontact.vertices",
        B::Previous => "raycontact.previous",
        B::Upload => "raycontact.upload",
        B::Triangles => "raycontact.triangles",
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
        B::FitKeys => "raycontact.fit_keys",
        B::DetectParams => "raycontact.detect_params",
        B::Pairs => "raycontact.pairs",
        B::TileOffsets => "raycontact.tile_offsets",
        B::Dispatch => "raycontact.dispatch",
        B::Contacts => "raycontact.contacts",
        B::Contacts2 => "raycontact.contacts.alternate",
        B::ContactArgs => "raycontact.contact_args",
        B::ContactArgs2 => "raycontact.contact_args.alternate",
        B::Sources => "raycontact.sources",
        B::VertexOrder => "raycontact.vertex_order",
    }
}

fn usage(b: B) -> wgpu::BufferUsages {
    match b {
        B::Params | B::SortPasses | B::DetectParams => UNIFORM,
        B::Dispatch | B::ContactArgs | B::ContactArgs2 => INDIRECT,
        _ => STORAGE,
    }
}

/// The contact buffer and its dispatch arguments written on ping-pong side `side`, then the
/// other side's (which an iterative pass reads).
pub(crate) fn contact_sides(side: u32) -> ((B, B), (B, B)) {
    let even = ((B::Contacts, B::ContactArgs), (B::Contacts2, B::ContactArgs2));
    if side.is_multiple_of(2) { even } else { (even.1, even.0) }
}

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
    /// Whether the node buffer holds the child pairs too (`Tuning::child_pairs`).
    pub child_pairs: bool,
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
            && self.child_pairs == need.child_pairs
    }

    /// What a packing needs, with room for every pair of bodies and `contacts` contacts, and
    /// the child pairs where `child_pairs` (`Tuning::child_pairs`).
    pub fn of(p: &FrameParams, contacts: u64, child_pairs: bool) -> Self {
        let b = p.body_count as u64;
        Capacity {
            vertices: p.vertex_count as u64,
            triangles: p.tri_count as u64,
            bodies: b,
            tiles: p.tile_count as u64,
            pairs: (b * b.saturating_sub(1) / 2).max(1),
            contacts: contacts.max(1),
            // Every vertex as the source of as many pairs as there are bodies, up to four (two
            // bodies: each vertex in its own self pair and in the pair with the other), so that
            // bodies coming into reach of each other do not grow the list in a timed frame;
            // grown when a detection lists more.
            sources: (p.vertex_count as u64 * b.clamp(1, 4)).max(WG_SIZE as u64),
            child_pairs,
        }
    }

    /// Bytes of buffer `b` for these element counts.
    pub fn bytes(&self, b: B) -> u64 {
        let (v, t, n, tiles) = (self.vertices, self.triangles, self.bodies, self.tiles);
        match b {
            B::Params => 16,
            B::Vertices => 12 * VERTEX_REGIONS as u64 * v,
            B::Previous | B::Upload => 12 * v,
            B::VertexOrder => 4 * v,
            B::Triangles => 4 * TRIANGLE_WORDS as u64 * t + 4 * (v + 1),
            B::TriBoxes => 32 * t,
            B::Bodies => size_of::<BodyGpu>() as u64 * n,
            B::BodyState => size_of::<BodyState>() as u64 * n,
            B::TileBody => 4 * tiles,
            B::Segments => 16 * n,
            B::Keys0 | B::Keys1 | B::Values0 | B::Values1 => 4 * t,
            B::Counters => 4 * COUNTERS_PER_TILE as u64 * tiles,
            B::SortPasses => UNIFORM_STRIDE * SORT_PASSES as u64,
            // Two nodes per triangle, then one for the compact child pairs (`layout::Node`).
            B::Nodes if self.child_pairs => 96 * t,
            B::Nodes => 64 * t,
            B::Parents => 8 * t,
            // Six box keys and the fan set per internal node (fewer than triangles).
            B::FitKeys => 28 * t,
            B::DetectParams => size_of::<DetectParams>() as u64,
            B::Dispatch | B::ContactArgs | B::ContactArgs2 => 16,
            B::Pairs => PAIRS_OFFSET + size_of::<BodyPair>() as u64 * self.pairs,
            B::TileOffsets => 4 * (2 * self.pairs + 1),
            B::Sources => 8 * self.sources + 4 * self.vertices,
            B::Contacts | B::Contacts2 => size_of::<ContactGpu>() as u64 * self.contacts,
        }
    }

    /// At least `need`, growing each short count by half again (so that a slowly rising need
    /// does not reallocate every frame).
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
            child_pairs: need.child_pairs,
        }
    }
}

/// A buffer and how many of its bytes the current packing uses.
#[derive(Debug)]
struct Buf {
    buffer: wgpu::Buffer,
    used: u64,
}

/// Kernels whose bind group depends on a ping-pong side (of the sort or of the contacts).
fn two_sided(k: Kernel) -> bool {
    matches!(
        k,
        Kernel::RadixCount
            | Kernel::RadixScatter
            | Kernel::NarrowPhase
            | Kernel::WalkContacts
            | Kernel::ContactArgs
    )
}

/// The buffers each frame kernel binds, in binding order ([`Kernel::bindings`]). `pass` picks
/// the ping-pong side of the sort and of the contacts.
pub(crate) fn kernel_buffers(k: Kernel, pass: u32) -> Vec<B> {
    let ((cur, cur_args), (prev, _)) = contact_sides(pass);
    let (kin, vin, kout, vout) = if pass.is_multiple_of(2) {
        (B::Keys0, B::Values0, B::Keys1, B::Values1)
    } else {
        (B::Keys1, B::Values1, B::Keys0, B::Values0)
    };
    use B::*;
    match k {
        Kernel::VertexNormals => {
            vec![Params, Vertices, Triangles, Bodies, BodyState, VertexOrder]
        }
        Kernel::TriangleBounds => vec![Bodies, TileBody, Vertices, Triangles, TriBoxes, Params],
        Kernel::Morton => {
            vec![Bodies, TileBody, Vertices, Triangles, TriBoxes, BodyState, Keys0, Counters, Params]
        }
        Kernel::RadixCount => vec![SortPasses, Segments, TileBody, kin, Counters],
        Kernel::RadixScatter => vec![SortPasses, Segments, TileBody, Counters, kin, vin, kout, vout],
        Kernel::RadixTiles => vec![SortPasses, Segments, TileBody, Keys0, Values0, Keys1, Values1],
        Kernel::Hierarchy => vec![Bodies, TileBody, BodyState, Keys0, Values0, Nodes, Parents, Params],
        Kernel::Fit => {
            vec![Bodies, TileBody, BodyState, TriBoxes, Parents, Nodes, FitKeys, Triangles, Params]
        }
        Kernel::Raycast | Kernel::RaycastAnyhit | Kernel::RaycastAll => {
            unreachable!("the ray queries have their own bind groups")
        }
        Kernel::BroadPhase => vec![DetectParams, Bodies, BodyState, Pairs],
        Kernel::PairTiles => vec![DetectParams, Bodies, BodyState, Pairs, TileOffsets, Dispatch],
        Kernel::NarrowPhase => {
            vec![DetectParams, Bodies, BodyState, Vertices, Triangles, Nodes, Sources, Pairs, cur]
        }
        Kernel::ContactArgs => vec![DetectParams, Pairs, cur_args],
        Kernel::RaySources => {
            vec![DetectParams, Bodies, BodyState, Vertices, VertexOrder, TileOffsets, Pairs, Sources]
        }
        Kernel::SourceArgs => vec![DetectParams, Pairs, Dispatch],
        Kernel::Walk => unreachable!("the walk query has its own bind group"),
        Kernel::Response => unreachable!("the response has its own bind groups"),
        Kernel::EdgeTiles
        | Kernel::EdgeSources
        | Kernel::IntersectArgs
        | Kernel::Crossings
        | Kernel::CrossingLinks
        | Kernel::ContourHook
        | Kernel::ContourCompress
        | Kernel::ContourStart
        | Kernel::RegionsHook
        | Kernel::RegionAreas
        | Kernel::WrongSide
        | Kernel::ContourWalk
        | Kernel::EdgeContacts
        | Kernel::UntangleContacts => unreachable!("the intersection stages have their own bind groups"),
        Kernel::WalkContacts => {
            vec![DetectParams, Bodies, BodyState, Vertices, Triangles, Nodes, prev, Pairs, cur]
        }
    }
}

/// The scene's buffer table and the frame kernels' bind groups over it.
#[derive(Debug)]
pub(crate) struct Buffers {
    cap: Capacity,
    bufs: Vec<Buf>,
    groups: Vec<(Kernel, u32, wgpu::BindGroup)>,
    /// Changes whenever a buffer is reallocated (the query bind groups follow it).
    pub generation: u64,
    /// Buffers created so far (the scene's and its queries').
    pub allocations: u64,
    /// The contact buffers were created since the last detection recorded
    /// ([`Self::clear_new_contacts`]).
    new_contacts: bool,
}

impl Buffers {
    /// No buffers yet: the first packing creates them.
    pub fn new() -> Self {
        Self {
            cap: Capacity::default(),
            bufs: Vec::new(),
            groups: Vec::new(),
            generation: 0,
            allocations: 0,
            new_contacts: false,
        }
    }

    /// Whether the buffers exist (a packing was applied).
    pub fn exist(&self) -> bool {
        !self.bufs.is_empty()
    }

    /// The capacities of the current buffers.
    pub fn capacity(&self) -> &Capacity {
        &self.cap
    }

    /// Buffer `b`.
    pub fn get(&self, b: B) -> &wgpu::Buffer {
        &self.bufs[b as usize].buffer
    }

    /// The byte offset of the node buffer's compact child pairs, its last third, after two
    /// nodes a triangle of capacity (`layout::Node`; WGSL `child_pairs`), where the tuning keeps
    /// them.
    pub fn child_pairs_offset(&self) -> u64 {
        self.get(B::Nodes).size() / 3 * 2
    }

    /// The bytes of buffer `b` the current packing and detection use.
    pub fn used(&self, b: B) -> u64 {
        self.bufs[b as usize].used
    }

    /// Sets the bytes of buffer `b` in use.
    pub fn set_used(&mut self, b: B, bytes: u64) {
        self.bufs[b as usize].used = bytes;
    }

    /// Makes room for `need` (every buffer; a packing change): grows all buffers when any is short.
    pub fn fit_packing(&mut self, ctx: &GpuContext, pipelines: &Pipelines, need: &Capacity) {
        if !self.exist() || !self.cap.fits(need) {
            self.cap = self.cap.grown(need);
            let cap = self.cap;
            self.bufs = ALL_BUFS
                .iter()
                .map(|&b| Buf {
                    buffer: create_buffer(ctx, &mut self.allocations, buf_label(b), cap.bytes(b), usage(b)),
                    used: 0,
                })
                .collect();
            self.generation += 1;
            self.new_contacts = true;
            self.make_groups(ctx, pipelines);
        }
        for b in ALL_BUFS {
            self.bufs[b as usize].used = need.bytes(b);
        }
    }

    /// Grows the detection's buffers ([`DETECT_BUFS`]) to hold `pairs` pairs, `contacts`
    /// contacts and `sources` source vertices; the frame's data stays. Returns the replaced
    /// buffers (name, old buffer, its bytes) so that a caller can carry their contents over.
    pub fn fit_detect(
        &mut self,
        ctx: &GpuContext,
        pipelines: &Pipelines,
        pairs: u64,
        contacts: u64,
        sources: u64,
    ) -> Vec<(B, wgpu::Buffer, u64)> {
        let need = Capacity {
            pairs: pairs.max(1),
            contacts: contacts.max(1),
            sources: sources.max(self.cap.sources),
            ..self.cap
        };
        if !self.exist() || self.cap.fits(&need) {
            return Vec::new();
        }
        let grown = self.cap.grown(&need);
        let mut replaced = Vec::new();
        for b in DETECT_BUFS {
            if grown.bytes(b) > self.cap.bytes(b) {
                let buffer = create_buffer(ctx, &mut self.allocations, buf_label(b), grown.bytes(b), STORAGE);
                let old = std::mem::replace(&mut self.bufs[b as usize], Buf { buffer, used: grown.bytes(b) });
                replaced.push((b, old.buffer, self.cap.bytes(b)));
                self.new_contacts |= matches!(b, B::Contacts | B::Contacts2);
            }
        }
        self.cap = grown;
        self.generation += 1;
        self.make_groups(ctx, pipelines);
        replaced
    }

    /// Zeroes both ping-pong sides of the contact buffers in `encoder` when they were created
    /// since the last call (a new packing, or a detection that grew them), counting the clears
    /// in `stats`; records nothing otherwise. The caller records it before anything in
    /// `encoder` writes the contacts.
    ///
    /// A buffer's first use costs a pass over all of it: wgpu zeroes it (its lazy
    /// initialisation, at the first submission that binds it), and on a CPU adapter such as
    /// lavapipe the memory is touched for the first time. A detection writes one side, the next
    /// frame the other: without this, the first frame after a packing paid for the side it
    /// wrote first. On lavapipe that frame took about twice the median frame of two tori of
    /// 1,600 triangles (the default capacity, 65,536 contacts of 96 bytes a side), past three
    /// times it in one suite run. Cleared here, wgpu does not zero them again: the same work,
    /// done in the detection that created the buffers.
    pub fn clear_new_contacts(&mut self, encoder: &mut wgpu::CommandEncoder, stats: &mut StageStats) {
        if !std::mem::take(&mut self.new_contacts) {
            return;
        }
        for b in [B::Contacts, B::Contacts2] {
            let buffer = self.get(b);
            encoder.clear_buffer(buffer, 0, None);
            stats.add_clear(buffer.size());
        }
    }

    fn make_groups(&mut self, ctx: &GpuContext, pipelines: &Pipelines) {
        let mut groups = Vec::new();
        for k in Kernel::ALL {
            if matches!(
                k,
                Kernel::Raycast
                    | Kernel::RaycastAnyhit
                    | Kernel::RaycastAll
                    | Kernel::Walk
                    | Kernel::Response
            ) || Kernel::INTERSECTION.contains(&k)
            {
                continue;
            }
            let passes = if two_sided(k) { 2 } else { 1 };
            for pass in 0..passes {
                let resources: Vec<wgpu::BindingResource<'_>> = kernel_buffers(k, pass)
                    .iter()
                    .map(|&b| {
                        if b == B::SortPasses {
                            // One pass's uniform, at a dynamic offset.
                            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: self.get(b),
                                offset: 0,
                                size: wgpu::BufferSize::new(size_of::<SortPass>() as u64),
                            })
                        } else {
                            self.get(b).as_entire_binding()
                        }
                    })
                    .collect();
                groups.push((k, pass, pipelines.bind_group(ctx.device(), k, &resources)));
            }
        }
        self.groups = groups;
    }

    /// The bind group of frame kernel `k` for ping-pong side `pass`.
    pub fn group(&self, k: Kernel, pass: u32) -> &wgpu::BindGroup {
        let pass = if two_sided(k) { pass % 2 } else { 0 };
        &self.groups.iter().find(|(e, p, _)| *e == k && *p == pass).expect("bind group exists").2
    }
}

/// Checks a packing against the device's limits before it is applied: the largest buffer it
/// needs and the dispatch size of its tiles. Returns (what, value, limit) of the first excess.
pub(crate) fn check_fits(ctx: &GpuContext, p: &FrameParams) -> Result<(), (&'static str, u64, u64)> {
    let need = Capacity::of(p, 1, ctx.tuning().child_pairs);
    let limits = ctx.device().limits();
    let max = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
    for b in ALL_BUFS {
        let bytes = need.bytes(b);
        if bytes > max {
            return Err((buf_label(b), bytes, max));
        }
    }
    let groups = p.tile_count.div_ceil(crate::layout::MAX_GROUPS_X);
    if groups > limits.max_compute_workgroups_per_dimension {
        return Err((
            "the tile count",
            p.tile_count as u64,
            limits.max_compute_workgroups_per_dimension as u64 * crate::layout::MAX_GROUPS_X as u64,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Binding;

    #[test]
    fn buffer_table_follows_the_enum() {
        for (i, b) in ALL_BUFS.iter().enumerate() {
            assert_eq!(*b as usize, i, "ALL_BUFS[{i}] is {b:?}: the scene's buffers are indexed by B");
        }
    }

    /// The frame kernels (the queries and the response bind their own buffers).
    fn frame_kernels() -> impl Iterator<Item = Kernel> {
        Kernel::ALL.into_iter().filter(|k| {
            !matches!(
                k,
                Kernel::Raycast
                    | Kernel::RaycastAnyhit
                    | Kernel::RaycastAll
                    | Kernel::Walk
                    | Kernel::Response
            ) && !Kernel::INTERSECTION.contains(k)
        })
    }

    #[test]
    fn every_two_sided_kernel_changes_with_the_side() {
        for k in frame_kernels().filter(|&k| two_sided(k)) {
            assert_ne!(kernel_buffers(k, 0), kernel_buffers(k, 1), "{k:?}");
        }
    }

    #[test]
    fn each_binding_is_a_buffer_of_its_kind() {
        for k in frame_kernels() {
            for side in 0..2 {
                let bufs = kernel_buffers(k, side);
                assert_eq!(bufs.len(), k.bindings().len(), "{k:?}: one buffer per binding");
                for (b, binding) in bufs.iter().zip(k.bindings()) {
                    let uniform = matches!(binding, Binding::Uniform | Binding::UniformDynamic);
                    assert_eq!(
                        usage(*b).contains(wgpu::BufferUsages::UNIFORM),
                        uniform,
                        "{k:?}: {b:?} bound as {binding:?}"
                    );
                }
                let mut seen = bufs.clone();
                seen.sort_by_key(|b| *b as usize);
                seen.dedup();
                assert_eq!(seen.len(), bufs.len(), "{k:?} binds a buffer twice");
            }
        }
    }
}
