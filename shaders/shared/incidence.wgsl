// The vertex normal of `vertex_normals`, for one vertex: the normalised sum of the unnormalised
// face normals (cross(b - a, c - a)) of the triangles incident to it, in CSR order, read from the
// triangle buffer (`layout::TRIANGLE_REGIONS`: the incident triangles in region
// TRIANGLE_INCIDENT, the CSR offsets after the last region). `vertex_normals` writes it for
// every vertex; `walk_contacts` computes it for its sources only (an iterative pass runs no
// `vertex_normals`): the same operations in the same order, so the same bits. `region_areas`
// walks the same incidence (`incident_range`, `incident_triangle`).
// A kernel that includes this (after shared/vertices.wgsl and shared/triangles.wgsl) declares
// `triangles: array<u32>` and defines `triangle_count() -> u32`.
// CPU twin: `raycontact::internals::cpu::vertex_normal`.

// The range of vertex v's incident triangles, positions in the incidence region (CSR offsets).
fn incident_range(v: u32) -> vec2<u32> {
    let offsets = 3u * TRIANGLE_REGIONS * triangle_count() + v;
    return vec2<u32>(triangles[offsets], triangles[offsets + 1u]);
}

// The packed triangle at position `k` of the incidence region.
fn incident_triangle(k: u32) -> u32 {
    return triangles[3u * TRIANGLE_INCIDENT * triangle_count() + k];
}

// The sum's normal, and whether one of the triangles is not degenerate (computed only when
// `want_live`: `vertex_normals` reduces the body boxes over such vertices).
struct FaceSum {
    normal: vec3<f32>,
    live: bool,
}

fn face_sum(v: u32, want_live: bool) -> FaceSum {
    var n = vec3<f32>(0.0);
    var live = false;
    let range = incident_range(v);
    for (var k = range.x; k < range.y; k += 1u) {
        let g = incident_triangle(k);
        let a = vertex_in(0u, triangles[3u * g]);
        let b = vertex_in(0u, triangles[3u * g + 1u]);
        let c = vertex_in(0u, triangles[3u * g + 2u]);
        n += cross(b - a, c - a);
        if want_live && !live {
            live = (triangle_box(a, b, c).flags & 1u) == 0u;
        }
    }
    let len = length(n);
    if len > 0.0 {
        n = n / len;
    }
    return FaceSum(n, live);
}
