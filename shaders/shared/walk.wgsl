// Iterative ray walk over the triangle adjacency (Lehericey et al. 2013, Algorithm 2; the rules
// are documented in `raycontact::walk`). A kernel that includes this includes
// shared/common.wgsl, shared/ray.wgsl and shared/bvh.wgsl (for `vertex_position`) first, and
// defines `fn triangle_count() -> u32`, the packing's triangle count: the adjacency is the
// second region of `triangles` (TRIANGLE_ADJACENCY; 3 words per packed triangle: the body-local
// neighbour across edge i, opposite vertex i, or BOUNDARY / NON_MANIFOLD).
// CPU twin: `raycontact::internals::cpu::walk_ray`.

// The neighbour of packed triangle g across its edge `edge`.
fn adjacent(g: u32, edge: u32) -> u32 {
    return triangles[3u * (TRIANGLE_ADJACENCY * triangle_count() + g) + edge];
}

// Mirrors `layout::WalkHit`.
struct WalkHit {
    t: f32,
    triangle: u32,
    u: f32,
    v: f32,
    outcome: u32,
    steps: u32,
    last: u32,
    bvh: u32,
}

// The walk of `ray` over `body` from body-local triangle `start` (NONE: no start), crossing at
// most `max_steps` edges (clamped to MAX_WALK_STEPS). Never consults the BVH (bvh = 0).
fn walk_ray(ray: Ray, body: BodyGpu, start: u32, max_steps_in: u32) -> WalkHit {
    var out = WalkHit(infinity(), NONE, 0.0, 0.0, WALK_NO_START, 0u, NONE, 0u);
    if start >= body.tri_count {
        return out;
    }
    let max_steps = min(max_steps_in, MAX_WALK_STEPS);
    let axes = ray_axes(ray.dir);
    // The last WALK_HISTORY (8) triangles visited, newest first, shifted along two vectors at
    // each step: no private array indexed by a variable, which a GPU keeps in (spilled) local
    // memory and llvmpipe runs as a loop over its SIMD lanes. A set: only membership is asked.
    var recent = vec4<u32>(NONE);
    var older = vec4<u32>(NONE);
    var tri = start;
    loop {
        older = vec4<u32>(recent.w, older.xyz);
        recent = vec4<u32>(tri, recent.xyz);
        out.last = tri;
        let g = body.tri_offset + tri;
        let a = vertex_position(triangles[3u * g]);
        let b = vertex_position(triangles[3u * g + 1u]);
        let c = vertex_position(triangles[3u * g + 2u]);
        let sheared = shear(ray.origin, ray.dir, axes, a, b, c);
        let e = sheared.uvw;
        let outside = (e.x < 0.0 || e.y < 0.0 || e.z < 0.0) && (e.x > 0.0 || e.y > 0.0 || e.z > 0.0);
        let det = e.x + e.y + e.z;
        if !outside {
            let h = hit_sheared(sheared, ray.dir, axes, ray.tmin, ray.tmax);
            if h.w > 0.0 {
                out.t = h.x;
                out.triangle = tri;
                out.u = h.y;
                out.v = h.z;
                out.outcome = WALK_HIT;
            } else if det == 0.0 {
                out.outcome = WALK_PARALLEL;
            } else {
                out.outcome = WALK_RANGE;
            }
            return out;
        }
        if det == 0.0 {
            out.outcome = WALK_PARALLEL;
            return out;
        }
        // A barycentric weight is negative where its edge function has the determinant's
        // opposite sign. Algorithm 2's order: u (edge 1), v (edge 2), 1 - u - v (edge 0).
        let s = select(e, -e, det < 0.0);
        var edge = 0u;
        if s.y < 0.0 {
            edge = 1u;
        } else if s.z < 0.0 {
            edge = 2u;
        }
        let next = adjacent(g, edge);
        if next == BOUNDARY || next == NON_MANIFOLD {
            out.outcome = WALK_BOUNDARY;
            return out;
        }
        if any(recent == vec4<u32>(next)) || any(older == vec4<u32>(next)) {
            out.outcome = WALK_LOOP;
            return out;
        }
        if out.steps >= max_steps {
            out.outcome = WALK_STEPS;
            return out;
        }
        out.steps += 1u;
        tri = next;
    }
    return out;
}
