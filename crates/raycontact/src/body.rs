//! Bodies: triangle meshes with a kind, validated when added ([`crate::packing`] lays them out
//! for the kernels).

use glam::Vec3;

use crate::error::{Error, Result};
pub use crate::id::BodyId;

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
    /// Neighbour of each triangle across each edge, body-local ([`crate::internals::adjacency`]).
    pub adjacency: Vec<[u32; 3]>,
    /// Mean triangle size as added ([`crate::internals::adjacency::mean_triangle_size`]).
    pub mean_size: f32,
    /// Unique edges, body-local ([`crate::internals::adjacency::unique_edges`]).
    pub edges: Vec<crate::layout::EdgeGpu>,
    /// Whether the body is static ([`crate::Scene::set_static`]).
    pub fixed: bool,
}

/// Most unique edges of one body: the contour's canonical keys hold an edge index in 30 bits.
pub const MAX_EDGES: u64 = 1 << 30;

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

/// [`Error::NonFinite`] for the first vertex of `positions` with a coordinate that is not
/// finite. Every frame's positions go through it: they are first checked as plain floats
/// (exponent bits all set: an infinity or a NaN), a loop the compiler vectorises, and searched
/// vertex by vertex (a loop it leaves scalar) only when one is found. On resting-pile's 50
/// moving bodies of 513 vertices, 0.033 ms a frame by the search alone, 0.010 so. Checking,
/// comparing with the body's last positions and copying in one pass over the words (in place
/// of this check, `Scene::set_positions`' equality test and its copy) was slower: the benchmark's
/// positions step on resting-pile, median per frame, 62–66 -> 75–97 µs (3 runs alternated): the
/// equality test stops at the first word that differs, the fused pass reads both vectors whole.
pub(crate) fn validate_positions(body: BodyId, positions: &[Vec3]) -> Result<()> {
    const EXPONENT: u32 = 0x7f80_0000;
    let floats: &[f32] = bytemuck::cast_slice(positions);
    let any_bad =
        floats.chunks(96).any(|c| c.iter().fold(false, |bad, x| bad | (x.to_bits() & EXPONENT == EXPONENT)));
    if !any_bad {
        return Ok(());
    }
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
        let edges = crate::adjacency::unique_edges(triangles);
        if edges.len() as u64 >= MAX_EDGES {
            return Err(Error::TooLarge {
                body,
                what: "the edge count",
                value: edges.len() as u64,
                limit: MAX_EDGES - 1,
            });
        }
        Ok(Self {
            kind,
            positions: positions.to_vec(),
            triangles: triangles.to_vec(),
            vertex_tri_offsets: offsets,
            vertex_tris: incident,
            adjacency: crate::adjacency::triangle_adjacency(triangles),
            mean_size: crate::adjacency::mean_triangle_size(positions, triangles),
            edges,
            fixed: false,
        })
    }

    /// The body's [`crate::layout::BodyGpu::flags`]: its kind's, whether it is static, and
    /// whether a vertex has [`FAN_VALENCE`](crate::layout::FAN_VALENCE) triangles or more around
    /// it ([`BODY_FANS`](crate::layout::BODY_FANS), below
    /// [`FAN_MAX_TRIANGLES`](crate::layout::FAN_MAX_TRIANGLES) triangles).
    pub fn flags(&self) -> u32 {
        use crate::layout::{BODY_FANS, BODY_STATIC, FAN_MAX_TRIANGLES, FAN_VALENCE};
        let fans = self.triangles.len() < FAN_MAX_TRIANGLES as usize
            && self.vertex_tri_offsets.windows(2).any(|w| w[1] - w[0] >= FAN_VALENCE);
        self.kind.flags() | if self.fixed { BODY_STATIC } else { 0 } | if fans { BODY_FANS } else { 0 }
    }
}
