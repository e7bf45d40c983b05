//! Bodies: triangle meshes with a kind, validated when added, and their packing into the
//! contiguous arrays that the kernels and their CPU twins read.

use std::fmt;

use glam::Vec3;

use crate::error::{Error, Result};
use crate::layout::{BodyGpu, FrameParams, SortSegment, TILE, tiles_for};

/// Handle of a body in a [`Scene`](crate::Scene). Stays invalid once the body is removed, even
/// if its slot is reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyId {
    pub(crate) index: u32,
    pub(crate) generation: u32,
}

impl BodyId {
    /// The slot of the body: small, dense, reused after removal.
    pub fn index(self) -> u32 {
        self.index
    }
}

impl fmt::Display for BodyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.index)?;
        if self.generation > 0 {
            write!(f, "(gen {})", self.generation)?;
        }
        Ok(())
    }
}

/// What a body is made of.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BodyKind {
    /// A closed, outward-oriented surface bounding a volume (Hermann et al. 2008).
    Volumetric,
    /// An open or closed sheet: a mid-surface with a half-thickness (Lehericey et al. 2015).
    Cloth {
        /// Half the thickness of the sheet, in scene units (finite, >= 0).
        half_thickness: f32,
    },
}

impl BodyKind {
    pub(crate) fn flags(self) -> u32 {
        match self {
            BodyKind::Volumetric => 0,
            BodyKind::Cloth { .. } => crate::layout::BODY_CLOTH,
        }
    }

    /// The half-thickness `e` of a cloth, 0 for a volumetric body.
    pub fn half_thickness(self) -> f32 {
        match self {
            BodyKind::Volumetric => 0.0,
            BodyKind::Cloth { half_thickness } => half_thickness,
        }
    }
}

/// A body's data on the host.
#[derive(Clone, Debug)]
pub(crate) struct BodyData {
    pub kind: BodyKind,
    pub positions: Vec<Vec3>,
    pub triangles: Vec<[u32; 3]>,
    /// Vertex -> incident triangles, CSR, body-local: `vertex_tri_offsets[v]..[v+1]` indexes
    /// `vertex_tris`, in increasing triangle order.
    pub vertex_tri_offsets: Vec<u32>,
    pub vertex_tris: Vec<u32>,
    /// Neighbour of each triangle across each edge, body-local ([`crate::adjacency`]).
    pub adjacency: Vec<[u32; 3]>,
    /// Mean triangle size as added ([`crate::adjacency::mean_triangle_size`]).
    pub mean_size: f32,
}

/// Largest triangle count of one body: leaves must fit below [`crate::layout::LEAF_BIT`].
pub const MAX_TRIANGLES: u64 = 1 << 30;

pub(crate) fn validate_kind(body: BodyId, kind: BodyKind) -> Result<()> {
    if let BodyKind::Cloth { half_thickness } = kind {
        if !half_thickness.is_finite() || half_thickness < 0.0 {
            return Err(Error::BadThickness { body, value: half_thickness });
        }
    }
    Ok(())
}

pub(crate) fn validate_positions(body: BodyId, positions: &[Vec3]) -> Result<()> {
    match positions.iter().position(|p| !p.is_finite()) {
        Some(vertex) => Err(Error::NonFinite { body, vertex, position: positions[vertex].to_array() }),
        None => Ok(()),
    }
}

impl BodyData {
    /// Validates a new body and builds its vertex-triangle incidence.
    pub fn new(body: BodyId, positions: &[Vec3], triangles: &[[u32; 3]], kind: BodyKind) -> Result<Self> {
        validate_kind(body, kind)?;
        if triangles.is_empty() {
            return Err(Error::NoTriangles { body });
        }
        if triangles.len() as u64 > MAX_TRIANGLES {
            return Err(Error::TooLarge {
                body,
                what: "the triangle count",
                value: triangles.len() as u64,
                limit: MAX_TRIANGLES,
            });
        }
        if positions.len() as u64 > u32::MAX as u64 / 4 {
            return Err(Error::TooLarge {
                body,
                what: "the vertex count",
                value: positions.len() as u64,
                limit: u32::MAX as u64 / 4,
            });
        }
        let n = positions.len();
        for (t, tri) in triangles.iter().enumerate() {
            if let Some(&index) = tri.iter().find(|&&i| i as usize >= n) {
                return Err(Error::IndexOutOfRange { body, triangle: t, index, vertex_count: n });
            }
        }
        validate_positions(body, positions)?;
        let mut offsets = vec![0u32; n + 1];
        for tri in triangles {
            for &v in tri {
                offsets[v as usize + 1] += 1;
            }
        }
        for v in 0..n {
            offsets[v + 1] += offsets[v];
        }
        let mut fill = offsets.clone();
        let mut incident = vec![0u32; triangles.len() * 3];
        for (t, tri) in triangles.iter().enumerate() {
            for &v in tri {
                let slot = &mut fill[v as usize];
                incident[*slot as usize] = t as u32;
                *slot += 1;
            }
        }
        Ok(Self {
            kind,
            positions: positions.to_vec(),
            triangles: triangles.to_vec(),
            vertex_tri_offsets: offsets,
            vertex_tris: incident,
            adjacency: crate::adjacency::triangle_adjacency(triangles),
            mean_size: crate::adjacency::mean_triangle_size(positions, triangles),
        })
    }
}

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
    /// [`NON_MANIFOLD`](crate::layout::NON_MANIFOLD) ([`crate::adjacency`]).
    pub adjacency: Vec<u32>,
}

impl Packing {
    pub(crate) fn build<'a>(bodies: impl Iterator<Item = (BodyId, &'a BodyData)>) -> Self {
        let mut p = Packing::default();
        let (mut v0, mut t0, mut tile0) = (0u32, 0u32, 0u32);
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
                flags: b.kind.flags(),
                half_thickness: b.kind.half_thickness(),
                mean_size: b.mean_size,
            });
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

    /// Packed index of a body.
    pub fn index_of(&self, id: BodyId) -> Option<usize> {
        self.ids.iter().position(|&b| b == id)
    }
}
