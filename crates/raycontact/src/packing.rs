//! [`Packing`]: the live bodies laid out one after another in the contiguous arrays that the
//! kernels and their CPU twins read.

use crate::body::BodyData;
use crate::id::BodyId;
use crate::layout::{BodyGpu, EdgeGpu, FrameParams, SortSegment, TILE, tiles_for};

/// The live bodies packed one after another, as the kernels see them. Rebuilt when a body is
/// added or removed, never per frame.
#[derive(Clone, Debug, Default)]
pub struct Packing {
    /// Ids of the packed bodies, in packing order.
    pub ids: Vec<BodyId>,
    /// Offsets and counts of each packed body.
    pub bodies: Vec<BodyGpu>,
    /// The body of each tile.
    pub tile_body: Vec<u32>,
    /// The sort segment of each body (its triangles).
    pub segments: Vec<SortSegment>,
    /// Triangles with packed (global) vertex indices, 3 per triangle.
    pub triangles: Vec<u32>,
    /// Vertex -> incident triangles, CSR over packed vertices and packed triangles.
    pub vertex_tri_offsets: Vec<u32>,
    /// See `vertex_tri_offsets`.
    pub vertex_tris: Vec<u32>,
    /// Totals.
    pub params: FrameParams,
    /// Triangle adjacency, 3 per packed triangle: body-local neighbour across edge `i`
    /// (opposite vertex `i`), or [`BOUNDARY`](crate::layout::BOUNDARY) /
    /// [`NON_MANIFOLD`](crate::layout::NON_MANIFOLD) ([`crate::internals::adjacency`]).
    pub adjacency: Vec<u32>,
    /// The unique edges of every body, body after body: packed vertex indices, body-local
    /// triangles ([`crate::internals::adjacency::unique_edges`]).
    pub edges: Vec<EdgeGpu>,
}

impl Packing {
    pub(crate) fn build<'a>(bodies: impl Iterator<Item = (BodyId, &'a BodyData)>) -> Self {
        let mut p = Packing::default();
        let (mut v0, mut t0, mut tile0, mut e0) = (0u32, 0u32, 0u32, 0u32);
        p.vertex_tri_offsets.push(0);
        for (id, b) in bodies {
            let nv = b.positions.len() as u32;
            let nt = b.triangles.len() as u32;
            let tiles = tiles_for(nt);
            let bi = p.bodies.len() as u32;
            p.ids.push(id);
            p.bodies.push(BodyGpu {
                vertex_offset: v0,
                vertex_count: nv,
                tri_offset: t0,
                tri_count: nt,
                node_offset: 2 * t0,
                tile_offset: tile0,
                tile_count: tiles,
                flags: b.flags(),
                half_thickness: b.kind.half_thickness(),
                mean_size: b.mean_size,
                edge_offset: e0,
                edge_count: b.edges.len() as u32,
            });
            p.edges.extend(b.edges.iter().map(|e| EdgeGpu { a: e.a + v0, b: e.b + v0, ..*e }));
            e0 += b.edges.len() as u32;
            p.segments.push(SortSegment { offset: t0, count: nt, tile_offset: tile0, tile_count: tiles });
            p.tile_body.extend(std::iter::repeat_n(bi, tiles as usize));
            p.triangles.extend(b.triangles.iter().flat_map(|t| t.map(|i| i + v0)));
            let base = *p.vertex_tri_offsets.last().unwrap_or(&0);
            p.vertex_tri_offsets.extend(b.vertex_tri_offsets[1..].iter().map(|o| o + base));
            p.vertex_tris.extend(b.vertex_tris.iter().map(|t| t + t0));
            p.adjacency.extend(b.adjacency.iter().flatten());
            v0 += nv;
            t0 += nt;
            tile0 += tiles;
        }
        debug_assert!(p.tile_body.len() as u32 == tile0 && tile0 * TILE >= t0);
        p.params = FrameParams {
            vertex_count: v0,
            tri_count: t0,
            tile_count: tile0,
            body_count: p.bodies.len() as u32,
        };
        p
    }

    /// Each packed body's part of `data`, whose bodies' parts lie at `part(body, b)` = (start,
    /// length), in packing order without overlap (e.g. their triangles or their BVH nodes), so
    /// that the bodies can be worked on in parallel.
    pub(crate) fn split_per_body<'a, T>(
        &self,
        mut data: &'a mut [T],
        part: impl Fn(&BodyGpu, usize) -> (usize, usize),
    ) -> Vec<&'a mut [T]> {
        let mut out = Vec::with_capacity(self.bodies.len());
        let mut at = 0;
        for (b, body) in self.bodies.iter().enumerate() {
            let (start, len) = part(body, b);
            let (_, rest) = std::mem::take(&mut data).split_at_mut(start - at);
            let (mine, rest) = rest.split_at_mut(len);
            out.push(mine);
            data = rest;
            at = start + len;
        }
        out
    }

    /// Packed index of a body.
    pub fn index_of(&self, id: BodyId) -> Option<usize> {
        self.ids.iter().position(|&b| b == id)
    }
}

/// Whether packed body `b` is to be brought up to date: `moved` marks it, or it lies past the
/// end of `moved` (an empty `moved`: every body). The CPU backend's stages skip the others,
/// whose positions, and so whose normals, boxes, keys and trees, did not change since their
/// last update.
pub(crate) fn has_moved(moved: &[bool], b: usize) -> bool {
    moved.get(b).is_none_or(|&m| m)
}
