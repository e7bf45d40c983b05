// Declarations shared by the intersection kernels (edge-triangle crossings, their contour and
// the global intersection analysis). Mirrors `layout/intersect.rs`. Per-frame arrays that the
// kernels accumulate into start as zeros, so a union-find parent p is stored as ~p (0: a
// root), a minimum m as ~m reduced with atomicMax (0: none), a link or index i as i + 1.

// A unique edge of a body, from its lower vertex a to its higher b (packed vertex indices), with
// the triangles that use it (body-local; t1 may be BOUNDARY or NON_MANIFOLD).
struct Edge {
    a: u32,
    b: u32,
    t0: u32,
    t1: u32,
}

struct IntersectParams {
    mode: u32,
    crossing_capacity: u32,
    edge_source_capacity: u32,
    table_mask: u32,
    edge_count: u32,
    vertex_count: u32,
    body_count: u32,
    contact_capacity: u32,
    pair_capacity: u32,
    tri_count: u32,
    pad1: u32,
    pad2: u32,
}

struct IntersectState {
    pairs: atomic<u32>,
    edge_sources: atomic<u32>,
    crossings: atomic<u32>,
    loops: atomic<u32>,
    multi_pass: atomic<u32>,
    edge_contacts: atomic<u32>,
    pad0: u32,
    pad1: u32,
}

struct IntersectStateRead {
    pairs: u32,
    edge_sources: u32,
    crossings: u32,
    loops: u32,
    multi_pass: u32,
    edge_contacts: u32,
    pad0: u32,
    pad1: u32,
}

// Edge `edge` of `source_body` crosses `triangle` of `target_body` at point = a + t (b - a).
struct Crossing {
    source_body: u32,
    target_body: u32,
    edge: u32,
    triangle: u32,
    point: vec3<f32>,
    t: f32,
    u: f32,
    v: f32,
    inside_t: f32,
    flags: u32,
    pair: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

// The contour's state of one crossing. links[s]: the neighbour through the edge's triangle ts,
// as half-incidence (2 slot + side) + 1.
struct ContourNode {
    parent: atomic<u32>,
    key_hi: atomic<u32>,
    key_lo: atomic<u32>,
    links: array<atomic<u32>, 2>,
    loop_id: u32,
    rank: u32,
    pad: u32,
}

struct ContourRead {
    parent: u32,
    key_hi: u32,
    key_lo: u32,
    links: array<u32, 2>,
    loop_id: u32,
    rank: u32,
    pad: u32,
}

struct Loop {
    pair: u32,
    start: u32,
    count: u32,
    flags: u32,
    length: f32,
    regions_a: array<u32, 2>,
    regions_b: array<u32, 2>,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

// Region state of one packed vertex.
struct Region {
    parent: atomic<u32>,
    other: atomic<u32>,
    area_lo: atomic<u32>,
    area_hi: atomic<u32>,
}

struct RegionRead {
    parent: u32,
    other: u32,
    area_lo: u32,
    area_hi: u32,
}

// A union-find parent as stored (~p, 0 for the element i itself).
fn decode_parent(stored: u32, i: u32) -> u32 {
    if stored == 0u {
        return i;
    }
    return ~stored;
}

// Whether t is a triangle of the edge (not BOUNDARY nor NON_MANIFOLD).
fn is_triangle(t: u32) -> bool {
    return t < NON_MANIFOLD;
}

// The triangle of `e` on side s (0: t0, 1: t1), or NONE.
fn edge_side(e: Edge, s: u32) -> u32 {
    var t = e.t0;
    if s == 1u {
        t = e.t1;
    }
    if is_triangle(t) {
        return t;
    }
    return NONE;
}

// The canonical key of a crossing within its pair (the contour's loop start is the least):
// (high, low) = (not an end of the contour << 31 | direction << 30 | edge, triangle).
fn crossing_key(c: Crossing, degree: u32) -> vec2<u32> {
    var hi = ((c.pair & 1u) << 30u) | c.edge;
    if degree == 2u {
        hi = hi | 0x80000000u;
    }
    return vec2<u32>(hi, c.triangle);
}
