//! The intersection stages' own buffers (created the first time a detection runs them, sized by
//! capacity and grown, never per frame), and their kernels' bind groups over these and the
//! scene's buffers (rebuilt whenever either is reallocated).

use super::super::GpuScene;
use super::super::buffers::{B, STORAGE, UNIFORM, contact_sides, create_buffer};
use crate::kernels::Kernel;
use crate::layout::{
    ContourGpu, CrossingGpu, EdgeGpu, IntersectParams, IntersectState, LoopGpu, RegionGpu, WG_SIZE,
};

const INDIRECT: wgpu::BufferUsages = STORAGE.union(wgpu::BufferUsages::INDIRECT);

/// Element counts the intersection buffers hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct IntersectCapacity {
    /// Pairs of the pair list (the tile offsets hold `2 pairs + 1`).
    pub pairs: u64,
    /// Packed edges.
    pub edges: u64,
    /// Packed vertices.
    pub vertices: u64,
    /// Entries of the edge list.
    pub list: u64,
    /// Crossings (and contour states, and loop records).
    pub crossings: u64,
}

impl IntersectCapacity {
    fn fits(&self, need: &Self) -> bool {
        self.pairs >= need.pairs
            && self.edges >= need.edges
            && self.vertices >= need.vertices
            && self.list >= need.list
            && self.crossings >= need.crossings
    }

    /// Each count at least `need`'s, grown by half again when short.
    fn grown(&self, need: &Self) -> Self {
        let g = |have: u64, need: u64| if need <= have { have } else { need.max(have + have / 2).max(1) };
        Self {
            pairs: g(self.pairs, need.pairs),
            edges: g(self.edges, need.edges),
            vertices: g(self.vertices, need.vertices),
            list: g(self.list, need.list),
            crossings: g(self.crossings, need.crossings),
        }
    }

    /// Entries of the contour's hash table: a power of two, at least four per crossing (two
    /// half-incidences each, at most half full).
    pub fn table(&self) -> u64 {
        (4 * self.crossings).max(16).next_power_of_two()
    }
}

/// A buffer an intersection kernel binds: one of the scene's, or one of the stages' own.
enum Res<'a> {
    Scene(B),
    Own(&'a wgpu::Buffer),
}

/// The buffers of the intersection stages.
#[derive(Debug)]
pub(crate) struct IntersectBuffers {
    pub cap: IntersectCapacity,
    /// The scene buffers' generation the bind groups were made over.
    generation: u64,
    /// The packing the edges were uploaded for.
    pub packing_epoch: u64,
    pub params: wgpu::Buffer,
    pub state: wgpu::Buffer,
    /// Indirect dispatches: `edge_sources` (0..4), `crossings` (4..8), per crossing (8..12).
    pub args: wgpu::Buffer,
    pub tile_offsets: wgpu::Buffer,
    pub edges: wgpu::Buffer,
    pub list: wgpu::Buffer,
    pub crossings: wgpu::Buffer,
    pub contour: wgpu::Buffer,
    pub table: wgpu::Buffer,
    pub marks: wgpu::Buffer,
    pub regions: wgpu::Buffer,
    pub loops: wgpu::Buffer,
    /// Bind groups: (kernel, contact side, group).
    groups: Vec<(Kernel, u32, wgpu::BindGroup)>,
}

/// Bytes of one element of each buffer.
pub(crate) const CROSSING_BYTES: u64 = size_of::<CrossingGpu>() as u64;
pub(crate) const CONTOUR_BYTES: u64 = size_of::<ContourGpu>() as u64;
pub(crate) const LOOP_BYTES: u64 = size_of::<LoopGpu>() as u64;
pub(crate) const REGION_BYTES: u64 = size_of::<RegionGpu>() as u64;
pub(crate) const STATE_BYTES: u64 = size_of::<IntersectState>() as u64;

impl IntersectBuffers {
    fn new(s: &mut GpuScene, cap: IntersectCapacity, packing_epoch: u64) -> Self {
        let (ctx, a) = (&s.ctx, &mut s.bufs.allocations);
        let mut buf = |label: &'static str, bytes: u64, usage| create_buffer(ctx, a, label, bytes, usage);
        let params = buf("raycontact.intersect.params", size_of::<IntersectParams>() as u64, UNIFORM);
        let state = buf("raycontact.intersect.state", STATE_BYTES, STORAGE);
        let args = buf("raycontact.intersect.args", 48, INDIRECT);
        let tile_offsets = buf("raycontact.intersect.tile_offsets", 4 * (2 * cap.pairs + 1), STORAGE);
        let edges = buf("raycontact.intersect.edges", size_of::<EdgeGpu>() as u64 * cap.edges, STORAGE);
        let list = buf("raycontact.intersect.edge_list", 16 * cap.list, STORAGE);
        let crossings = buf("raycontact.intersect.crossings", CROSSING_BYTES * cap.crossings, STORAGE);
        let contour = buf("raycontact.intersect.contour", CONTOUR_BYTES * cap.crossings, STORAGE);
        let table = buf("raycontact.intersect.table", 4 * cap.table(), STORAGE);
        let marks = buf("raycontact.intersect.marks", 4 * cap.edges, STORAGE);
        let regions = buf("raycontact.intersect.regions", REGION_BYTES * cap.vertices, STORAGE);
        let loops = buf("raycontact.intersect.loops", LOOP_BYTES * cap.crossings, STORAGE);
        let mut b = IntersectBuffers {
            cap,
            generation: u64::MAX,
            packing_epoch,
            params,
            state,
            args,
            tile_offsets,
            edges,
            list,
            crossings,
            contour,
            table,
            marks,
            regions,
            loops,
            groups: Vec::new(),
        };
        b.make_groups(s);
        b
    }

    /// The bind group of `k` (for the contacts of ping-pong side `side`).
    pub fn group(&self, k: Kernel, side: u32) -> &wgpu::BindGroup {
        let side = if matches!(k, Kernel::EdgeContacts | Kernel::UntangleContacts) { side % 2 } else { 0 };
        &self.groups.iter().find(|(e, s, _)| *e == k && *s == side).expect("intersection bind group").2
    }

    /// The buffers each intersection kernel binds, in binding order (the scene's by name).
    fn bindings(&self, k: Kernel, side: u32) -> Vec<Res<'_>> {
        let g = Res::Scene;
        let ((contacts, _), _) = contact_sides(side);
        let o = Res::Own;
        let p = o(&self.params);
        match k {
            Kernel::EdgeTiles => {
                vec![p, g(B::Bodies), g(B::Pairs), o(&self.state), o(&self.tile_offsets), o(&self.args)]
            }
            Kernel::EdgeSources => vec![
                p,
                g(B::Bodies),
                g(B::BodyState),
                g(B::Vertices),
                o(&self.edges),
                g(B::Pairs),
                o(&self.tile_offsets),
                o(&self.state),
                o(&self.list),
            ],
            Kernel::IntersectArgs => vec![p, o(&self.state), o(&self.args)],
            Kernel::Crossings => vec![
                p,
                g(B::Bodies),
                g(B::Vertices),
                g(B::Triangles),
                g(B::Nodes),
                o(&self.edges),
                o(&self.list),
                o(&self.state),
                o(&self.crossings),
            ],
            Kernel::CrossingLinks => vec![
                p,
                g(B::Bodies),
                o(&self.edges),
                o(&self.state),
                o(&self.crossings),
                o(&self.contour),
                o(&self.table),
                o(&self.marks),
            ],
            Kernel::ContourHook => vec![p, o(&self.state), o(&self.contour)],
            Kernel::ContourCompress | Kernel::ContourStart => {
                vec![p, o(&self.state), o(&self.crossings), o(&self.contour)]
            }
            Kernel::RegionsHook => vec![p, o(&self.edges), o(&self.marks), o(&self.regions)],
            Kernel::RegionAreas => vec![p, g(B::Bodies), g(B::Vertices), g(B::Triangles), o(&self.regions)],
            Kernel::WrongSide => {
                vec![p, g(B::Bodies), o(&self.edges), o(&self.state), o(&self.crossings), o(&self.regions)]
            }
            Kernel::ContourWalk => vec![
                p,
                g(B::Bodies),
                o(&self.edges),
                o(&self.state),
                o(&self.crossings),
                o(&self.contour),
                o(&self.loops),
                o(&self.regions),
            ],
            Kernel::EdgeContacts => vec![
                p,
                g(B::Bodies),
                g(B::Vertices),
                g(B::Triangles),
                o(&self.edges),
                o(&self.crossings),
                o(&self.state),
                g(B::Pairs),
                g(contacts),
            ],
            Kernel::UntangleContacts => vec![
                p,
                g(B::Bodies),
                g(B::Vertices),
                g(B::Triangles),
                g(B::Nodes),
                o(&self.regions),
                g(B::Pairs),
                g(contacts),
            ],
            _ => unreachable!("{k:?} is not an intersection kernel"),
        }
    }

    /// (bytes, written) of each buffer `k` binds: the scene's in use, its own whole.
    pub fn bound_bytes(&self, s: &GpuScene, k: Kernel) -> Vec<(u64, bool)> {
        self.bindings(k, 0)
            .iter()
            .zip(k.bindings())
            .map(|(r, b)| {
                let bytes = match r {
                    Res::Scene(x) => s.bufs.used(*x),
                    Res::Own(x) => x.size(),
                };
                (bytes, b.writes())
            })
            .collect()
    }

    fn make_groups(&mut self, s: &GpuScene) {
        let mut groups = Vec::new();
        for k in Kernel::INTERSECTION {
            let sides = if matches!(k, Kernel::EdgeContacts | Kernel::UntangleContacts) { 2 } else { 1 };
            for side in 0..sides {
                let resources: Vec<wgpu::BindingResource<'_>> = self
                    .bindings(k, side)
                    .into_iter()
                    .map(|r| match r {
                        Res::Scene(b) => s.bufs.get(b).as_entire_binding(),
                        Res::Own(b) => b.as_entire_binding(),
                    })
                    .collect();
                let group = s.pipelines.bind_group(s.ctx.device(), k, &resources);
                groups.push((k, side, group));
            }
        }
        self.groups = groups;
        self.generation = s.bufs.generation;
    }
}

impl GpuScene {
    /// Makes the intersection buffers hold `crossings` crossings and an edge list of `list`
    /// entries (at least every edge as the source of two pairs) for the current packing and
    /// pair capacity; uploads the packed edges when the packing changed; rebuilds the bind
    /// groups when a buffer (theirs or the scene's) was replaced.
    pub(super) fn fit_intersections(&mut self, crossings: u64, list: u64) {
        let need = IntersectCapacity {
            pairs: self.bufs.capacity().pairs.max(1),
            edges: (self.edges.len() as u64).max(1),
            vertices: (self.params.vertex_count as u64).max(1),
            list: list.max(2 * self.edges.len() as u64).max(WG_SIZE as u64),
            crossings: crossings.max(1),
        };
        let epoch = self.packing_epoch;
        match self.intersect.take() {
            Some(mut b) if b.cap.fits(&need) => {
                if b.generation != self.bufs.generation {
                    b.make_groups(self);
                }
                self.intersect = Some(b);
            }
            old => {
                let cap = old.as_ref().map_or(need, |b| b.cap.grown(&need));
                // New buffers: the edges are uploaded below.
                self.intersect = Some(IntersectBuffers::new(self, cap, epoch.wrapping_sub(1)));
            }
        }
        let b = self.intersect.as_mut().expect("intersection buffers");
        if b.packing_epoch != epoch {
            if !self.edges.is_empty() {
                self.ctx.queue().write_buffer(&b.edges, 0, bytemuck::cast_slice(&self.edges));
            }
            b.packing_epoch = epoch;
        }
    }
}
