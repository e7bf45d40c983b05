// The closest hits of a ray and of its opposite ray (the same origin and bounds, the direction
// negated) through one walk of a body's BVH: a cloth vertex's inward and outward rays, which the
// classification casts on the same body with the same bounds (cloth -> volumetric, cloth ->
// cloth, a cloth against itself). Both rays start inside the boxes around their common origin,
// and a cloth's rays mostly miss: a miss walks every box on its way out of the tree, so two
// walks would share most of their nodes. This one reads each node once for both. A kernel that
// includes this includes shared/bvh.wgsl first. CPU twin:
// `raycontact::internals::cpu::closest_hits_line_binary`.
//
// Exactness: each ray keeps its own hit and bound, tests each box by its own `box_entry` (with
// its own bound; `enter_both` computes both from one slab computation, and says why they are
// each ray's own) and each triangle with its own `intersect_triangle`; a box is left out for a
// ray only when that ray's own test rejects it, and a ray's tests stop below a box it did not
// enter (its children lie inside it). So each ray gets the closest hit of its own walk, the
// lowest index on ties, whatever the order of the visit: `closest_hit`'s hit for each.
//
// Whether the narrow phase walks the two rays so is the tuning's choice (`Tuning::line_walks`:
// on a GPU, whose ray stage is bound by the nodes it reads; not on lavapipe, where the larger
// state and both rays' tests in every SIMD slice cost more than the reads they save).
//
// The walk is `closest_hit`'s (while-while, both children's boxes a step, nearer child first, a
// short stack whose entries keep where the rays enter their boxes, the stackless walk when the
// stack overflowed), over the union of the two rays' walks: a child is entered when either ray
// enters its box, and nearest first by the smaller of the two entries. A popped entry is walked
// into by the rays that entered its box when it was pushed and whose entry is still within
// their hit found so far: each ray's own second test of the box (`closest_hit` says why),
// without that test. `nodes_visited` counts the boxes tested (the root's, two a step), once
// for both rays, in the first ray's hit; each ray's stackless walk counts in its own.

// A line walk's leaf: the tests of `leaf_hit` on body-local triangle `tri` for `ray` when bit 0
// of `act` is set and for `back` when bit 1 is, the triangle read once for both. Each result is
// `leaf_hit`'s, (0, 0, 0, -2) for a ray not tested.
struct LeafPair {
    front: vec4<f32>,
    back: vec4<f32>,
}

fn leaf_hits(ray: Ray, axes: vec3<u32>, back: Ray, back_axes: vec3<u32>, act: u32, body: BodyGpu, tri: u32,
             ignore_vertex: u32, tmax: vec2<f32>) -> LeafPair {
    let untested = vec4<f32>(0.0, 0.0, 0.0, -2.0);
    var out = LeafPair(untested, untested);
    let g = body.tri_offset + tri;
    let ia = triangles[3u * g];
    let ib = triangles[3u * g + 1u];
    let ic = triangles[3u * g + 2u];
    if ia == ignore_vertex || ib == ignore_vertex || ic == ignore_vertex {
        let skipped = vec4<f32>(0.0, 0.0, 0.0, -1.0);
        return LeafPair(select(untested, skipped, (act & 1u) != 0u), select(untested, skipped, (act & 2u) != 0u));
    }
    let a = vertex_position(ia);
    let b = vertex_position(ib);
    let c = vertex_position(ic);
    if (act & 1u) != 0u {
        out.front = intersect_triangle(ray.origin, ray.dir, axes, ray.tmin, tmax.x, a, b, c);
    }
    if (act & 2u) != 0u {
        out.back = intersect_triangle(back.origin, back.dir, back_axes, back.tmin, tmax.y, a, b, c);
    }
    return out;
}

// Which of the two rays enter the box (lo, hi) before their bounds `tmax` (bit 0: `ray`, bit 1:
// its opposite; only those of `act` count), the smaller entry of those that do, and each one's
// entry (`t`, read only where `rays` has its bit): each ray's `box_entry`, from one slab
// computation. The opposite ray's inverse direction is `-inv` on every axis it is not
// parallel to (`safe_inverse` of -d is exactly -(1 / d)), so its distances to the slab planes
// are the ray's negated, bit for bit: its per-axis entries are the ray's exits negated and its
// exits the entries negated, so over the axes its entry is -tf and its exit -tn, and the
// widening, symmetric, gives -(tf + |tf| w) and -(tn - |tn| w).
// A parallel axis's slab is decided by the origin alone, the same for both. (Boxes with a NaN
// corner, whose tests no order of `min` and `max` makes exact, may be decided differently from
// `box_entry`: they are tested, not trusted, either way.)
struct Entered {
    rays: u32,
    at: f32,
    t: vec2<f32>,
}

fn enter_both(ray: Ray, inv: vec3<f32>, act: u32, tmax: vec2<f32>, lo: vec3<f32>, hi: vec3<f32>) -> Entered {
    var e = Entered(0u, infinity(), vec2<f32>(0.0));
    let parallel = abs(ray.dir) < vec3<f32>(1.0e-30);
    let inside = (ray.origin >= lo) & (ray.origin <= hi);
    if any(parallel & !inside) {
        return e;
    }
    let t0 = (lo - ray.origin) * inv;
    let t1 = (hi - ray.origin) * inv;
    let near = select(min(t0, t1), vec3<f32>(-3.0e38), parallel);
    let far = select(max(t0, t1), vec3<f32>(3.0e38), parallel);
    let tn = max(max(near.x, near.y), near.z);
    let tf = min(min(far.x, far.y), far.z);
    let low = tn - abs(tn) * 2.0e-6;
    let high = tf + abs(tf) * 2.0e-6;
    let front = max(low, ray.tmin);
    let back = max(-high, ray.tmin);
    e.t = vec2<f32>(front, back);
    if (act & 1u) != 0u && front <= min(high, tmax.x) {
        e.rays = 1u;
        e.at = front;
    }
    if (act & 2u) != 0u && back <= min(-low, tmax.y) {
        e.rays |= 2u;
        e.at = min(e.at, back);
    }
    return e;
}

// The line walk's two hits: `closest_hit`'s of `ray` and of its opposite ray, in that order.
struct LineHits {
    front: RayHit,
    back: RayHit,
}

// Closest hits of `ray` and of its opposite ray against a body (its BodyGpu and leaf count),
// skipping the triangles that use packed vertex `ignore_vertex` and passing `fan` (`passes_fan`),
// in one walk (the header).
fn closest_hits_line(ray: Ray, body: BodyGpu, leaf_count: u32, ignore_vertex: u32, fan: Fan) -> LineHits {
    let back = Ray(ray.origin, ray.tmin, -ray.dir, ray.tmax);
    let axes = ray_axes(ray.dir);
    let back_axes = ray_axes(back.dir);
    let inv = safe_inverse(ray.dir);
    let back_inv = safe_inverse(back.dir);
    let miss = RayHit(infinity(), NONE, 0.0, 0.0, 0u, 0u, 0u, 0u);
    var out = LineHits(miss, miss);
    if leaf_count == 0u {
        return out;
    }
    var tmax = vec2<f32>(ray.tmax, back.tmax);
    // The stacked children (their handles, `Children`), the rays that entered
    // each one's box and where.
    var stack: array<u32, SHORT_STACK>;
    var stack_rays: array<u32, SHORT_STACK>;
    var stack_t: array<vec2<f32>, SHORT_STACK>;
    var sp = 0u;
    var lost = false;
    // `act`: the rays that entered the box of the node of word `word` (`closest_hit`'s words).
    let root = body.node_offset;
    let pairs = child_pairs(body);
    let grid = stored_pair_grid(pairs, body);
    out.front.nodes_visited += 1u;
    var word = NONE;
    var act = enter_both(ray, inv, 3u, tmax, nodes[root].min, nodes[root].max).rays;
    if act != 0u && passes_fan(fan, leaf_count, 0u) {
        act = 0u;
    }
    if act != 0u {
        word = root_word(root);
    }
    loop {
        loop {
            if word == NONE {
                while sp > 0u {
                    sp -= 1u;
                    let within = select(0u, 1u, stack_t[sp].x <= tmax.x) | select(0u, 2u, stack_t[sp].y <= tmax.y);
                    act = stack_rays[sp] & within;
                    if act != 0u {
                        word = word_of(stack[sp]);
                        break;
                    }
                }
                if word == NONE {
                    break;
                }
            }
            if (word & LEAF_BIT) != 0u {
                break;
            }
            let at = children_of(body, pairs, grid, word);
            out.front.nodes_visited += 2u;
            var el = enter_both(ray, inv, act, tmax, at.lmin, at.lmax);
            var er = enter_both(ray, inv, act, tmax, at.rmin, at.rmax);
            if el.rays != 0u && passes_fan_at(fan, leaf_count, body, at.left) {
                el.rays = 0u;
            }
            if er.rays != 0u && passes_fan_at(fan, leaf_count, body, at.right) {
                er.rays = 0u;
            }
            var next = NONE;
            if el.rays != 0u && er.rays != 0u {
                var near = at.left;
                var far = at.right;
                var far_entered = er;
                act = el.rays;
                if er.at < el.at {
                    near = at.right;
                    far = at.left;
                    far_entered = el;
                    act = er.rays;
                }
                if sp < SHORT_STACK {
                    stack[sp] = far;
                    stack_rays[sp] = far_entered.rays;
                    stack_t[sp] = far_entered.t;
                    sp += 1u;
                } else {
                    lost = true;
                }
                next = near;
            } else if el.rays != 0u {
                next = at.left;
                act = el.rays;
            } else if er.rays != 0u {
                next = at.right;
                act = er.rays;
            }
            word = NONE;
            if next != NONE {
                word = word_of(next);
            }
        }
        if word == NONE {
            break;
        }
        let tri = word & ~LEAF_BIT;
        let h = leaf_hits(ray, axes, back, back_axes, act, body, tri, ignore_vertex, tmax);
        out.front = nearer(out.front, h.front, tri);
        out.back = nearer(out.back, h.back, tri);
        tmax = min(tmax, vec2<f32>(out.front.t, out.back.t));
        word = NONE;
    }
    if lost {
        out.front = stackless_hit(ray, axes, inv, body, leaf_count, ignore_vertex, fan, out.front, tmax.x);
        out.back = stackless_hit(back, back_axes, back_inv, body, leaf_count, ignore_vertex, fan, out.back, tmax.y);
    }
    return out;
}
