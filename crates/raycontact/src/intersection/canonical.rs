//! From what the intersection stages leave in their buffers (in the GPU's layout, in the order
//! the kernels appended it, or the CPU twins' order) to [`Intersections`] in its documented,
//! deterministic order: crossings sorted, loops in order along themselves, regions numbered by
//! their lowest vertex.

use glam::Vec2;

use super::{
    BodyRegions, ContourLoop, Crossing, IntersectionCounts, IntersectionMode, Intersections, LoopSides,
    Region,
};
use crate::cpu::edge_side;
use crate::layout::{
    CROSSING_FIRST, CROSSING_FORWARD, CROSSING_LAST, ContourGpu, CrossingGpu, IntersectState, LOOP_CLOSED,
    LoopGpu, NONE, RegionGpu, area_unit, decode_index, decode_min, decode_parent,
};
use crate::packing::Packing;

/// What one detection's intersection stages produced, in the kernels' layout: the stored
/// crossings (slots `0..n`), their contour states and the loop records (full analysis), and the
/// region state of every packed vertex (full analysis).
#[derive(Clone, Debug, Default)]
pub(crate) struct RawIntersections {
    /// The kernels' mode code (0: the stages did not run).
    pub mode: u32,
    /// The counters.
    pub state: IntersectState,
    /// The stored crossings.
    pub crossings: Vec<CrossingGpu>,
    /// Their contour states (full analysis; empty otherwise).
    pub contour: Vec<ContourGpu>,
    /// The loop records (full analysis).
    pub loops: Vec<LoopGpu>,
    /// The region state of every packed vertex (full analysis).
    pub regions: Vec<RegionGpu>,
}

/// The pair's bodies (packed) of a crossing: (first, second) of the pair it was found for.
fn pair_bodies(c: &CrossingGpu) -> (u32, u32) {
    if c.pair & 1 == 0 { (c.source_body, c.target_body) } else { (c.target_body, c.source_body) }
}

/// [`Intersections`] from `raw`, bodies named by `packing`'s ids; `untangle_contacts` is the
/// number of untangling contacts the detection returned.
pub(crate) fn canonical(raw: &RawIntersections, packing: &Packing, untangle_contacts: u32) -> Intersections {
    let mode = IntersectionMode::from_code(raw.mode);
    if mode == IntersectionMode::Off {
        return Intersections::default();
    }
    let ids = &packing.ids;
    let edge_of = |c: &CrossingGpu| {
        packing.edges[(packing.bodies[c.source_body as usize].edge_offset + c.edge) as usize]
    };
    // Crossings in order; `index[slot]` is a slot's position in it.
    let mut order: Vec<usize> = (0..raw.crossings.len()).collect();
    order.sort_by_key(|&s| {
        let c = &raw.crossings[s];
        (ids[c.source_body as usize], ids[c.target_body as usize], c.edge, c.triangle, c.pair)
    });
    let mut index = vec![0u32; order.len()];
    for (i, &s) in order.iter().enumerate() {
        index[s] = i as u32;
    }
    let crossings: Vec<Crossing> = order
        .iter()
        .map(|&s| {
            let c = &raw.crossings[s];
            let e = edge_of(c);
            let v0 = packing.bodies[c.source_body as usize].vertex_offset;
            Crossing {
                edge_body: ids[c.source_body as usize],
                edge: c.edge,
                edge_vertices: [e.a - v0, e.b - v0],
                triangle_body: ids[c.target_body as usize],
                triangle: c.triangle,
                point: c.point,
                t: c.t,
                barycentric: Vec2::new(c.u, c.v),
                forward: c.flags & CROSSING_FORWARD != 0,
                first: c.flags & CROSSING_FIRST != 0,
                last: c.flags & CROSSING_LAST != 0,
            }
        })
        .collect();
    let regions = if mode == IntersectionMode::Full { body_regions(raw, packing) } else { Vec::new() };
    let loops = if mode == IntersectionMode::Full {
        contour_loops(raw, packing, &index, &regions)
    } else {
        Vec::new()
    };
    let counts = IntersectionCounts {
        edges_traced: raw.state.edge_sources,
        crossings: raw.state.crossings,
        multi_pass_edges: raw.state.multi_pass,
        loops: loops.len() as u32,
        regions: regions.iter().map(|r| r.regions.len() as u32).sum(),
        wrong_side_vertices: regions.iter().map(|r| r.wrong_side_vertices().count() as u32).sum(),
        edge_contacts: raw.state.edge_contacts,
        untangle_contacts,
    };
    Intersections { mode, crossings, loops, regions, counts }
}

/// The regions of every body with a crossing, by body id.
fn body_regions(raw: &RawIntersections, packing: &Packing) -> Vec<BodyRegions> {
    let mut bodies: Vec<usize> =
        raw.crossings.iter().flat_map(|c| [c.source_body as usize, c.target_body as usize]).collect();
    bodies.sort_by_key(|&b| packing.ids[b]);
    bodies.dedup();
    bodies
        .into_iter()
        .map(|b| {
            let body = &packing.bodies[b];
            let v0 = body.vertex_offset;
            let unit = area_unit(body.mean_size);
            let mut local = vec![0u32; body.vertex_count as usize];
            let mut regions = Vec::new();
            for v in v0..v0 + body.vertex_count {
                let root = decode_parent(raw.regions[v as usize].parent, v);
                if root == v {
                    let r = &raw.regions[v as usize];
                    regions.push(Region {
                        lowest_vertex: v - v0,
                        vertices: 0,
                        area: (r.area_steps() as f64 * unit as f64) as f32,
                        wrong_side_of: decode_min(r.other).map(|o| packing.ids[o as usize]),
                    });
                    local[(v - v0) as usize] = regions.len() as u32 - 1;
                } else {
                    local[(v - v0) as usize] = local[(root - v0) as usize];
                }
                regions[local[(v - v0) as usize] as usize].vertices += 1;
            }
            BodyRegions { body: packing.ids[b], vertex_region: local, regions }
        })
        .collect()
}

/// The contour's loops in order, each with its crossings in order along it.
fn contour_loops(
    raw: &RawIntersections,
    packing: &Packing,
    index: &[u32],
    regions: &[BodyRegions],
) -> Vec<ContourLoop> {
    let ids = &packing.ids;
    let mut members: Vec<Vec<(u32, usize)>> = vec![Vec::new(); raw.loops.len()];
    for (s, c) in raw.contour.iter().enumerate() {
        if let Some(l) = decode_index(c.loop_id).filter(|&l| (l as usize) < members.len()) {
            members[l as usize].push((c.rank, s));
        }
    }
    let side_of = |b: u32, r: [u32; 2]| -> Option<LoopSides> {
        if r[0] == NONE {
            return None;
        }
        let body = &packing.bodies[b as usize];
        let regs = regions.iter().find(|x| x.body == ids[b as usize])?;
        let at = |v: u32| regs.vertex_region[(v - body.vertex_offset) as usize];
        Some(LoopSides { front: at(r[0]), back: at(r[1]) })
    };
    let mut loops: Vec<ContourLoop> = raw
        .loops
        .iter()
        .zip(members)
        .map(|(l, mut m)| {
            m.sort_unstable();
            let slots: Vec<usize> = m.into_iter().map(|(_, s)| s).collect();
            let start = &raw.crossings[l.start as usize];
            let (a, b) = pair_bodies(start);
            let closed = l.flags & LOOP_CLOSED != 0;
            let segments = if closed { slots.len() } else { slots.len().saturating_sub(1) };
            let triangles = (0..segments)
                .map(|i| segment_triangles(raw, packing, slots[i], slots[(i + 1) % slots.len()]))
                .collect();
            ContourLoop {
                bodies: [ids[a as usize], ids[b as usize]],
                crossings: slots.iter().map(|&s| index[s]).collect(),
                closed,
                length: l.length,
                triangles,
                sides: [side_of(a, l.regions_a), side_of(b, l.regions_b)],
            }
        })
        .collect();
    loops.sort_by_key(|l| (l.bodies, l.crossings.first().copied()));
    loops
}

/// The triangles of the pair's first and second body whose intersection joins crossings `s` and
/// `n` (linked in the contour).
fn segment_triangles(raw: &RawIntersections, packing: &Packing, s: usize, n: usize) -> [u32; 2] {
    let c = &raw.crossings[s];
    let side = raw.contour[s].links.iter().position(|&l| l != 0 && ((l - 1) / 2) as usize == n).unwrap_or(0);
    let e = packing.edges[(packing.bodies[c.source_body as usize].edge_offset + c.edge) as usize];
    let own = edge_side(&e, side as u32);
    if c.pair & 1 == 0 { [own, c.triangle] } else { [c.triangle, own] }
}
