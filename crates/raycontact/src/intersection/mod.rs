//! The surfaces' intersections, as a detection finds them when
//! [`Scene::set_intersections`](crate::Scene::set_intersections) asks: edge–triangle crossings,
//! the intersection contour they form, and global intersection analysis (Baraff, Witkin and Kass
//! 2003): the regions each surface's contour cuts it into, and which of them lie on the wrong
//! side of the other surface. The GPU kernels (`shaders/edge_tiles.wgsl` to
//! `untangle_contacts.wgsl`) and their CPU twins compute them; [`Intersections`] is their
//! deterministic, host-side form.

use glam::{Vec2, Vec3};

use crate::body::BodyId;

mod canonical;

pub(crate) use canonical::{RawIntersections, canonical};

/// How much of the intersection analysis a detection runs
/// ([`Scene::set_intersections`](crate::Scene::set_intersections)). It runs on the pairs the
/// detection tests, after the vertex rays, on the BVHs the frame built (in full passes, and in
/// iterative passes that rebuild the BVHs), in the same submission.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IntersectionMode {
    /// None (the default).
    #[default]
    Off,
    /// Edge–triangle crossings ([`Intersections::crossings`]) and their contacts
    /// ([`ContactFlags::EDGE`](crate::ContactFlags::EDGE)).
    Crossings,
    /// Crossings, the contour ([`Intersections::loops`]), the regions and their wrong sides
    /// ([`Intersections::regions`]), edge contacts and untangling contacts
    /// ([`ContactFlags::UNTANGLE`](crate::ContactFlags::UNTANGLE)).
    Full,
}

impl IntersectionMode {
    /// The kernels' code ([`INTERSECT_CROSSINGS`](crate::internals::layout::INTERSECT_CROSSINGS),
    /// [`INTERSECT_FULL`](crate::internals::layout::INTERSECT_FULL)), 0 when off.
    pub(crate) fn code(self) -> u32 {
        match self {
            IntersectionMode::Off => 0,
            IntersectionMode::Crossings => crate::layout::INTERSECT_CROSSINGS,
            IntersectionMode::Full => crate::layout::INTERSECT_FULL,
        }
    }

    pub(crate) fn from_code(code: u32) -> Self {
        match code {
            crate::layout::INTERSECT_CROSSINGS => IntersectionMode::Crossings,
            crate::layout::INTERSECT_FULL => IntersectionMode::Full,
            _ => IntersectionMode::Off,
        }
    }
}

/// An edge of one body crossing a triangle of another (or of the same cloth): the segment from
/// the edge's lower vertex (`t = 0`) to its higher (`t = 1`) passes through the triangle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crossing {
    /// The body whose edge crosses.
    pub edge_body: BodyId,
    /// The edge, an index into the body's unique edges (sorted by their lower, then higher
    /// vertex: [`crate::internals::adjacency::unique_edges`]).
    pub edge: u32,
    /// The edge's lower and higher vertex (of `edge_body`).
    pub edge_vertices: [u32; 2],
    /// The body whose triangle is crossed.
    pub triangle_body: BodyId,
    /// The triangle (of `triangle_body`).
    pub triangle: u32,
    /// Where the edge crosses it.
    pub point: Vec3,
    /// The crossing's parameter along the edge, from its lower vertex (0) to its higher (1).
    pub t: f32,
    /// Barycentric weights (u, v) of the point on the triangle's second and third vertices.
    pub barycentric: Vec2,
    /// The edge runs from the triangle's back to its front (its lower vertex is behind the
    /// triangle: inside, for a volumetric body).
    pub forward: bool,
    /// No other crossing of the edge with the same body lies towards its lower vertex.
    pub first: bool,
    /// No other crossing of the edge with the same body lies towards its higher vertex.
    pub last: bool,
}

/// The regions of one side of a contour loop on one of its bodies: indices into that body's
/// [`BodyRegions::regions`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopSides {
    /// The region in front of the other body's crossed triangles (outside a volumetric body).
    pub front: u32,
    /// The region behind them (inside a volumetric body).
    pub back: u32,
}

/// A loop of the intersection contour of one pair of bodies: crossings joined where they end the
/// same segment of two intersecting triangles, closed, or open where a cloth's boundary cuts it.
#[derive(Clone, Debug, PartialEq)]
pub struct ContourLoop {
    /// The pair's bodies (the same body twice for a cloth crossing itself).
    pub bodies: [BodyId; 2],
    /// The loop's crossings in order along it, as indices into [`Intersections::crossings`].
    /// It starts, on every backend and run, at the least of its crossings by (an end of an open
    /// polyline first, the direction of the pair its edge belongs to, edge, triangle) and goes on
    /// through the first crossing's neighbour on the side of the edge's lower-indexed triangle.
    pub crossings: Vec<u32>,
    /// The last crossing links back to the first.
    pub closed: bool,
    /// The length of the polyline through the crossing points (the closing segment included).
    pub length: f32,
    /// For each segment between two consecutive crossings (and the closing one of a closed
    /// loop): the triangle of `bodies[0]` and the triangle of `bodies[1]` whose intersection it
    /// is — the triangles the loop passes through.
    pub triangles: Vec<[u32; 2]>,
    /// For each body of the pair: the regions on either side of the loop, at the loop's first
    /// crossing of one of that body's edges whose both vertices lie next to the loop (`None`
    /// when there is no such crossing, or without [`IntersectionMode::Full`]).
    pub sides: [Option<LoopSides>; 2],
}

/// A region of a body: the vertices connected by edges that no surface crosses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Region {
    /// Its lowest vertex.
    pub lowest_vertex: u32,
    /// Its vertices.
    pub vertices: u32,
    /// Its area: a third of the area of every triangle around each of its vertices.
    pub area: f32,
    /// The body whose other side this region is on the wrong side of (the lowest such body in
    /// packing order): inside it, for a volumetric body; the smaller of the two regions that a
    /// contour with a cloth separates, for a cloth (Baraff et al. 2003), whatever the region's
    /// own body is (a cloth, the same cloth, or a volumetric body that went through the cloth).
    pub wrong_side_of: Option<BodyId>,
}

/// The regions of one body that another surface (or itself) crosses.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyRegions {
    /// The body.
    pub body: BodyId,
    /// The region of each vertex, an index into `regions`.
    pub vertex_region: Vec<u32>,
    /// The regions, in order of their lowest vertex.
    pub regions: Vec<Region>,
}

impl BodyRegions {
    /// Vertices on the wrong side of some body.
    pub fn wrong_side_vertices(&self) -> impl Iterator<Item = u32> + '_ {
        self.vertex_region
            .iter()
            .enumerate()
            .filter(|(_, r)| self.regions[**r as usize].wrong_side_of.is_some())
            .map(|(v, _)| v as u32)
    }
}

/// Counters of the intersection stages of one detection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntersectionCounts {
    /// (Pair direction, edge) entries traced: the edges whose box overlaps the other body's.
    pub edges_traced: u32,
    /// Crossings found (also past the capacity, when the detection failed with
    /// [`Error::CrossingOverflow`](crate::Error::CrossingOverflow)).
    pub crossings: u32,
    /// Edges that cross one body more than
    /// [`MAX_EDGE_HITS`](crate::internals::layout::MAX_EDGE_HITS) times (traced more than once).
    pub multi_pass_edges: u32,
    /// Contour loops and open polylines.
    pub loops: u32,
    /// Regions of the bodies with crossings.
    pub regions: u32,
    /// Vertices on the wrong side of some body.
    pub wrong_side_vertices: u32,
    /// Contacts from crossings ([`ContactFlags::EDGE`](crate::ContactFlags::EDGE)).
    pub edge_contacts: u32,
    /// Untangling contacts ([`ContactFlags::UNTANGLE`](crate::ContactFlags::UNTANGLE)).
    pub untangle_contacts: u32,
}

/// What a detection found of the surfaces' intersections, in a deterministic order (the same on
/// the GPU and on the CPU backend). Empty with [`IntersectionMode::Off`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Intersections {
    /// The mode the detection ran.
    pub mode: IntersectionMode,
    /// Every crossing, sorted by (edge body, triangle body, edge, triangle, pair).
    pub crossings: Vec<Crossing>,
    /// The contour's loops ([`IntersectionMode::Full`]), sorted by (pair, first crossing).
    pub loops: Vec<ContourLoop>,
    /// The regions of every body that has a crossing ([`IntersectionMode::Full`]), by body id.
    pub regions: Vec<BodyRegions>,
    /// The counters.
    pub counts: IntersectionCounts,
}

impl Intersections {
    /// The regions of `body`, if it has crossings and the analysis ran.
    pub fn regions_of(&self, body: BodyId) -> Option<&BodyRegions> {
        self.regions.iter().find(|r| r.body == body)
    }
}
