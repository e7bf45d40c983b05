// The vertex normal of `vertex_normals`, for one vertex: the normalised sum of the unnormalised
// face normals (cross(b - a, c - a)) of the triangles incident to it, in CSR order (zero where
// they cancel up to rounding: `layout::NORMAL_CANCELLED`), read from the
// triangle buffer (`layout::TRIANGLE_REGIONS`: the incident triangles in region
// TRIANGLE_INCIDENT, the CSR offsets after the fan words: TRIANGLE_WORDS). `vertex_normals` writes it for
// every vertex; `walk_contacts` computes it for its sources only (an iterative pass runs no
// `vertex_normals`): the same operations in the same order, so the same bits. `region_areas`
// walks the same incidence (`incident_range`, `incident_triangle`).
// A kernel that includes this (after shared/vertices.wgsl and shared/triangles.wgsl) declares
// `triangles: array<u32>` and defines `triangle_count() -> u32`.
// CPU twin: `raycontact::internals::cpu::vertex_normal`.

// The range of vertex v's incident triangles, positions in the incidence region (CSR offsets).
fn incident_range(v: u32) -> vec2<u32> {
    let offsets = TRIANGLE_WORDS * triangle_count() + v;
    return vec2<u32>(triangles[offsets], triangles[offsets + 1u]);
}

// The packed triangle at position `k` of the incidence region.
fn incident_triangle(k: u32) -> u32 {
    return triangles[3u * TRIANGLE_INCIDENT * triangle_count() + k];
}

// The sum's normal, whether one of the triangles is not degenerate (computed only when
// `want_live`: `vertex_normals` reduces the body boxes over such vertices), and the vertex's
// position.
struct FaceSum {
    normal: vec3<f32>,
    live: bool,
    position: vec3<f32>,
}

// The vertex's own position is read once, not once per incident triangle: of each triangle only
// the two other corners are read, and (a, b, c) put back in the triangle's order, so the cross
// product is the one of the triangle's corners in order, bit for bit (a triangle holding v at
// two corners reads it again there: the same position). llvmpipe runs every buffer read as a
// loop over its SIMD lanes, so the reads are this kernel's cost there: 10 a triangle, not 13.
fn face_sum(v: u32, want_live: bool) -> FaceSum {
    var n = vec3<f32>(0.0);
    // The sum of the cross products' L1 lengths: the scale of what cancels in `n`.
    var scale = 0.0;
    var live = false;
    let pv = vertex_in(0u, v);
    let range = incident_range(v);
    for (var k = range.x; k < range.y; k += 1u) {
        let g = incident_triangle(k);
        let ia = triangles[3u * g];
        let ib = triangles[3u * g + 1u];
        let ic = triangles[3u * g + 2u];
        // v's corner (the first that is v), and the other two corners in order.
        let at_a = ia == v;
        let at_b = !at_a && ib == v;
        let at_c = !at_a && !at_b;
        let p1 = vertex_in(0u, select(ia, ib, at_a));
        let p2 = vertex_in(0u, select(ic, ib, at_c));
        let a = select(p1, pv, at_a);
        let b = select(select(p2, pv, at_b), p1, at_a);
        let c = select(p2, pv, at_c);
        let f = cross(b - a, c - a);
        n += f;
        scale += abs(f.x) + abs(f.y) + abs(f.z);
        if want_live && !live {
            live = (triangle_box(a, b, c).flags & 1u) == 0u;
        }
    }
    // No normal where the faces cancel up to rounding (`layout::NORMAL_CANCELLED`).
    let len = length(n);
    if len > NORMAL_CANCELLED * scale {
        n = n / len;
    } else {
        n = vec3<f32>(0.0);
    }
    return FaceSum(n, live, pv);
}
