// After `regions_hook`: every packed vertex points at its region's root, and adds its area (a
// third of the area of each triangle around it) to the root's, in fixed point: round(area /
// unit) with unit = AREA_UNIT_SCALE x the body's squared mean triangle size, summed as a 64-bit
// integer (a carry into the high word), so that the sums are the same whatever the order of the
// additions. One invocation per packed vertex. CPU twin:
// `raycontact::internals::cpu::region_areas`.
//!include shared/common.wgsl
//!include shared/bodies.wgsl
//!include shared/intersect.wgsl
//!include shared/vertices.wgsl
//!include shared/triangles.wgsl
//!include shared/incidence.wgsl

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> vertices: array<f32>;
@group(0) @binding(3) var<storage, read> triangles: array<u32>;
@group(0) @binding(4) var<storage, read_write> regions: array<Region>;

fn triangle_count() -> u32 {
    return params.tri_count;
}

fn position(v: u32) -> vec3<f32> {
    return vec3<f32>(vertices[3u * v], vertices[3u * v + 1u], vertices[3u * v + 2u]);
}

fn find(x0: u32) -> u32 {
    var x = x0;
    var s = atomicLoad(&regions[x].parent);
    while s != 0u {
        x = ~s;
        s = atomicLoad(&regions[x].parent);
    }
    return x;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let v = linear_group(wid) * WG_SIZE + lid;
    if v >= params.vertex_count {
        return;
    }
    let root = find(v);
    if root != v {
        atomicStore(&regions[v].parent, ~root);
    }
    var area = 0.0;
    // The triangles around v: the incidence in the triangle buffer (shared/incidence.wgsl).
    let range = incident_range(v);
    for (var j = range.x; j < range.y; j += 1u) {
        let g = incident_triangle(j);
        let a = position(triangles[3u * g]);
        let b = position(triangles[3u * g + 1u]);
        let c = position(triangles[3u * g + 2u]);
        area += length(cross(b - a, c - a)) * (0.5 * ONE_THIRD);
    }
    var m = bodies[body_of_vertex(v)].mean_size;
    if !(m > 0.0 && m < 3.0e38) {
        m = 1.0;
    }
    let unit = max(m * m * AREA_UNIT_SCALE, 1.17549435e-38);
    let steps = u32(min(round(area / unit), 4294967040.0));
    if steps != 0u {
        let before = atomicAdd(&regions[root].area_lo, steps);
        if before > 0xffffffffu - steps {
            atomicAdd(&regions[root].area_hi, 1u);
        }
    }
}
