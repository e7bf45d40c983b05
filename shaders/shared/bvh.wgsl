// Closest-hit ray query through one body's stackless BVH. A kernel that includes this declares
// `positions: array<f32>`, `triangles: array<u32>` and `nodes: array<Node>`, and includes
// shared/ray.wgsl.

fn vertex_position(v: u32) -> vec3<f32> {
    return vec3<f32>(positions[3u * v], positions[3u * v + 1u], positions[3u * v + 2u]);
}

// Closest hit of `ray` against a body (its BodyGpu and leaf count), skipping triangles that use
// packed vertex `ignore_vertex` (NONE: skip none). From the root, a node whose box the ray hits
// leads to its first child (or, for a leaf, its triangle is tested), any other to its escape
// link; NONE ends the walk. Ties in t go to the lower triangle index.
fn closest_hit(ray: Ray, body: BodyGpu, leaf_count: u32, ignore_vertex: u32) -> RayHit {
    let axes = ray_axes(ray.dir);
    let inv = safe_inverse(ray.dir);
    var best = RayHit(bitcast<f32>(0x7f800000u), NONE, 0.0, 0.0, 0u, 0u, 0u, 0u);
    var tmax = ray.tmax;
    var node = 0u;
    if leaf_count == 0u {
        node = NONE;
    }
    while node != NONE {
        let nd = nodes[body.node_offset + node];
        best.nodes_visited += 1u;
        if hit_box(ray.origin, ray.dir, inv, ray.tmin, tmax, nd.min, nd.max) {
            if (nd.child & LEAF_BIT) != 0u {
                let tri = nd.child & ~LEAF_BIT;
                let g = body.tri_offset + tri;
                let ia = triangles[3u * g];
                let ib = triangles[3u * g + 1u];
                let ic = triangles[3u * g + 2u];
                if ia != ignore_vertex && ib != ignore_vertex && ic != ignore_vertex {
                    best.triangles_tested += 1u;
                    let h = intersect_triangle(ray.origin, ray.dir, axes, ray.tmin, tmax,
                        vertex_position(ia), vertex_position(ib), vertex_position(ic));
                    if h.w != 0.0 && (h.x < best.t || (h.x == best.t && tri < best.triangle)) {
                        best.t = h.x;
                        best.triangle = tri;
                        best.u = h.y;
                        best.v = h.z;
                        tmax = h.x;
                    }
                }
                node = nd.escape;
            } else {
                node = nd.child;
            }
        } else {
            node = nd.escape;
        }
    }
    return best;
}
