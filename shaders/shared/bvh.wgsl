// Closest-hit ray query through one body's BVH. A kernel that includes this declares
// `vertices: array<f32>` (the vertex buffer, whose first region holds the positions:
// shared/vertices.wgsl), `triangles: array<u32>` (the triangle buffer, whose first region holds
// the packed vertex indices, and whose fan words and incidence offsets `fan_to_pass` and
// `passes_fan` read: `layout::TRIANGLE_WORDS`) and `nodes: array<Node>`, and includes
// shared/ray.wgsl. CPU twin: `raycontact::internals::cpu::closest_hit` (with
// `cpu::fan_to_pass`).

fn vertex_position(v: u32) -> vec3<f32> {
    return vec3<f32>(vertices[3u * v], vertices[3u * v + 1u], vertices[3u * v + 2u]);
}

// Tests body-local triangle `tri` of `body` unless it uses `ignore_vertex`: (t, u, v, 1) on a
// hit within [tmin, tmax], w = 0 otherwise, and w = -1 when skipped.
fn leaf_hit(ray: Ray, axes: vec3<u32>, body: BodyGpu, tri: u32, ignore_vertex: u32, tmax: f32) -> vec4<f32> {
    let g = body.tri_offset + tri;
    let ia = triangles[3u * g];
    let ib = triangles[3u * g + 1u];
    let ic = triangles[3u * g + 2u];
    if ia == ignore_vertex || ib == ignore_vertex || ic == ignore_vertex {
        return vec4<f32>(0.0, 0.0, 0.0, -1.0);
    }
    return intersect_triangle(ray.origin, ray.dir, axes, ray.tmin, tmax,
        vertex_position(ia), vertex_position(ib), vertex_position(ic));
}

// The nearer of `best` and the result `h` of `leaf_hit` on triangle `tri` (ties: lower index).
fn nearer(best: RayHit, h: vec4<f32>, tri: u32) -> RayHit {
    var b = best;
    if h.w >= 0.0 {
        b.triangles_tested += 1u;
    }
    if h.w > 0.0 && (h.x < b.t || (h.x == b.t && tri < b.triangle)) {
        b.t = h.x;
        b.triangle = tri;
        b.u = h.y;
        b.v = h.z;
    }
    return b;
}

// The fan a walk passes: the nodes of the body whose fan word (written by `fit`, from word
// `words` of the triangle buffer: the body's first) is `vertex`, every triangle under them using
// it (NONE: the walk passes none).
struct Fan {
    vertex: u32,
    words: u32,
}

const NO_FAN = Fan(NONE, 0u);

// The fan that a walk through `body` ignoring packed vertex `ignore_vertex` passes, in a packing
// of `tri_count` triangles: that vertex's where the tuning passes fans (`Tuning::fan_walks`),
// at least FAN_VALENCE triangles are around it (the incidence's CSR offsets, after the fan words)
// and `fit` wrote the body's fan words (BODY_FANS), else none (`layout::FAN_VALENCE`).
fn fan_to_pass(ignore_vertex: u32, body: BodyGpu, tri_count: u32) -> Fan {
    if !FAN_WALKS || ignore_vertex == NONE || (body.flags & BODY_FANS) == 0u {
        return NO_FAN;
    }
    let at = TRIANGLE_WORDS * tri_count + ignore_vertex;
    if triangles[at + 1u] - triangles[at] < FAN_VALENCE {
        return NO_FAN;
    }
    return Fan(ignore_vertex, fan_words(tri_count) + body.tri_offset);
}

// Whether a walk passing `fan` passes node `n` of a body of `leaf_count` leaves as though its box
// were missed: an internal node whose fan word is the fan's vertex, so that each triangle under
// it uses that vertex and would be skipped at its leaf (the walk ignores it). The same hits;
// under a vertex of many triangles, whose boxes all hold the ray's origin, far fewer nodes
// (`layout::TRIANGLE_WORDS`). Read only for a box the ray enters.
fn passes_fan(fan: Fan, leaf_count: u32, n: u32) -> bool {
    return FAN_WALKS && fan.vertex != NONE && n + 1u < leaf_count && triangles[fan.words + n] == fan.vertex;
}

// The first of a body's compact child pairs (the node buffer's last third, `layout::Node`,
// where the tuning keeps them: CHILD_PAIRS, one node per triangle of the packing after two per
// triangle for the tree): internal node p's, node `child_pairs(body) + p`, holds both
// children's boxes in steps of the body's pair grid (`PairGrid`) and their words (an internal
// child's index, or LEAF_BIT | triangle), the left one's in `child`, the right one's in
// `escape`.
fn child_pairs(body: BodyGpu) -> u32 {
    return arrayLength(&nodes) / 3u * 2u + body.tri_offset;
}

// The grid of the child pairs at `pairs` of `body`, stored in its last pair node (node
// `pairs + tri_count - 1`, which no pair takes: a tree has fewer internal nodes than the body
// triangles; the corner in `min`, the step's bits in `child`) by whoever wrote them (`fit`, or
// the host with a tree it writes over a body's). Unread where the tuning keeps no pairs.
fn stored_pair_grid(pairs: u32, body: BodyGpu) -> PairGrid {
    if !CHILD_PAIRS {
        return ONE_LEAF_GRID;
    }
    let at = pairs + max(body.tri_count, 1u) - 1u;
    return PairGrid(nodes[at].min, bitcast<f32>(nodes[at].child));
}

// The word of the root of `body`'s tree, whose node is `root`. A walk's word (`closest_hit`) is
// `child` of the node that holds a node's box in the tree (for a leaf LEAF_BIT | triangle, for an
// internal node its left child's index), or in a child pair its word (LEAF_BIT | triangle, or an
// internal node's own index).
fn root_word(root: u32) -> u32 {
    let c = nodes[root].child;
    if CHILD_PAIRS && (c & LEAF_BIT) == 0u {
        return 0u;
    }
    return c;
}

// What a step of a walk reads of an internal node's two children (left, right): their boxes,
// and for each a handle that gives its word (`word_of`) when the walk goes into it: its word,
// read with the boxes from the node's compact child pair, or else the node that holds its
// box.
struct Children {
    lmin: vec3<f32>,
    lmax: vec3<f32>,
    rmin: vec3<f32>,
    rmax: vec3<f32>,
    left: u32,
    right: u32,
}

// The two children of the internal node of word `word` of `body` (`pairs`: `child_pairs(body)`,
// `grid`: the body's pair grid): from its compact child pair, one 32-byte record, or from the
// children's own nodes (the left one by the word, the right one by the left one's escape link,
// a second fetch that waits for the first; their words read only when walked into).
fn children_of(body: BodyGpu, pairs: u32, grid: PairGrid, word: u32) -> Children {
    if CHILD_PAIRS {
        let p = nodes[pairs + word];
        let b = pair_boxes(grid, p);
        return Children(b[0], b[1], b[2], b[3], p.child, p.escape);
    }
    let la = body.node_offset + word;
    let ra = body.node_offset + nodes[la].escape;
    return Children(nodes[la].min, nodes[la].max, nodes[ra].min, nodes[ra].max, la, ra);
}

// The word of the child of handle `h` (`Children`).
fn word_of(h: u32) -> u32 {
    if CHILD_PAIRS {
        return h;
    }
    return nodes[h].child;
}

// Whether a walk passing `fan` passes the child of handle `h` (`Children`) in a tree of
// `leaf_count` leaves of `body` (`passes_fan`; the node's index read only when a fan is passed).
fn passes_fan_at(fan: Fan, leaf_count: u32, body: BodyGpu, h: u32) -> bool {
    if !FAN_WALKS || fan.vertex == NONE {
        return false;
    }
    return passes_fan(fan, leaf_count, select(h - body.node_offset, h, CHILD_PAIRS));
}

// Closest hit of `ray` against a body (its BodyGpu and leaf count), skipping triangles that use
// packed vertex `ignore_vertex` (NONE: skip none), and passing `fan` (`passes_fan`: NO_FAN, or
// `fan_to_pass` of that vertex). Ties in t go to the lower triangle index.
//
// Each step reads both children's boxes of an internal node (`children_of`): from its compact child
// pair (`child_pairs`), one 32-byte record with both children's words, where the tuning keeps them
// (`grid`: their grid, `stored_pair_grid`; unread without them), else from the children's own
// nodes, then the word of the child the ray walks into. The walk visits the nearer child first and
// keeps the farther one on a short stack of SHORT_STACK entries (its handle, `Children`), with the
// distance at which the ray enters its box. A popped entry is walked into (its word read) when that
// distance is still within the hit found so far (`tmax`): the answer a second test of its box would
// give, without that test. (`box_entry` accepted the box when its entry e was at most min(exit,
// tmax) at the push; e and the exit are the same numbers at the pop and tmax has only shrunk, so
// the box passes again exactly when e <= tmax; the fan a walk passes does not change either.) On
// lavapipe the ray stage took 10-15 % less than with a second test (`cloth-layers` 139.0-139.6 ->
// 119.2-119.7 ms, the armadillo pair 65.1-66.2 -> 55.2-56.7, `resting-pile` 18.2-18.3 -> 16.4; two
// alternated pairs of whole runs, `raycontact-bench --no-parry --implementations gpu`). When the
// stack is full the farther child is dropped and, at the end, the whole tree is walked once more
// without any stack (depth-first through the escape links, pruned by the hit found,
// `next_leaf_passing`): no depth of tree can make the query miss a hit. That walk's leaves go to
// the same triangle test as the stack walk's, so the kernels that include this inline one test,
// not two (`stackless_hit` in a walk of its own had them compile a second: lavapipe took about a
// tenth longer over `narrow_phase`, the README's pipelines section). Each word is read only
// where the walk uses it (llvmpipe runs every buffer read as a loop over its SIMD lanes).
// `nodes_visited` counts the boxes tested: the root's, then two a step (and the stackless
// walk's, one a node).
fn closest_hit(ray: Ray, body: BodyGpu, leaf_count: u32, ignore_vertex: u32, fan: Fan) -> RayHit {
    let axes = ray_axes(ray.dir);
    let inv = safe_inverse(ray.dir);
    var best = RayHit(infinity(), NONE, 0.0, 0.0, 0u, 0u, 0u, 0u);
    var tmax = ray.tmax;
    if leaf_count == 0u {
        return best;
    }
    // The stacked children (their handles, `Children`), and where the ray enters
    // each one's box.
    var stack: array<u32, SHORT_STACK>;
    var stack_t: array<f32, SHORT_STACK>;
    var sp = 0u;
    var lost = false;
    // Once the stack walk has ended with entries lost: the stackless walk's next node
    // (`next_leaf_passing`), whose leaves the same test below takes.
    var stackless = false;
    var node = NONE;
    // `word`: the word of the node to walk into, read once its box has passed; NONE when none.
    let root = body.node_offset;
    let pairs = child_pairs(body);
    let grid = stored_pair_grid(pairs, body);
    best.nodes_visited += 1u;
    var word = NONE;
    if hit_box(ray.origin, ray.dir, inv, ray.tmin, tmax, nodes[root].min, nodes[root].max)
        && !passes_fan(fan, leaf_count, 0u) {
        word = root_word(root);
    }
    // While-while (Aila and Laine 2009): the inner loop walks inner nodes until this ray stands
    // on a leaf or has nothing left, then the leaf is tested. A SIMD group leaves the inner loop
    // only once all its rays have, so their leaf tests run together, once per leaf round,
    // instead of the whole group stepping through a masked triangle test whenever any one ray
    // meets a leaf. Each ray visits the same nodes in the same order as one loop would.
    loop {
        loop {
            if stackless {
                break;
            }
            if word == NONE {
                while sp > 0u {
                    sp -= 1u;
                    if stack_t[sp] <= tmax {
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
            best.nodes_visited += 2u;
            let el = box_entry(ray.origin, ray.dir, inv, ray.tmin, tmax, at.lmin, at.lmax);
            let er = box_entry(ray.origin, ray.dir, inv, ray.tmin, tmax, at.rmin, at.rmax);
            let enter_l = el.y != 0.0 && !passes_fan_at(fan, leaf_count, body, at.left);
            let enter_r = er.y != 0.0 && !passes_fan_at(fan, leaf_count, body, at.right);
            var next = NONE;
            if enter_l && enter_r {
                var near = at.left;
                var far = at.right;
                var far_t = er.x;
                if er.x < el.x {
                    near = at.right;
                    far = at.left;
                    far_t = el.x;
                }
                if sp < SHORT_STACK {
                    stack[sp] = far;
                    stack_t[sp] = far_t;
                    sp += 1u;
                } else {
                    lost = true;
                }
                next = near;
            } else if enter_l {
                next = at.left;
            } else if enter_r {
                next = at.right;
            }
            word = NONE;
            if next != NONE {
                word = word_of(next);
            }
        }
        if word == NONE && lost && !stackless {
            stackless = true;
            best.fallback = 1u;
            node = 0u;
        }
        if stackless {
            var tested = 0u;
            let bounded = Ray(ray.origin, ray.tmin, ray.dir, tmax);
            let leaf = next_leaf_passing(bounded, inv, body, leaf_count, fan, &node, &tested);
            best.nodes_visited += tested;
            if leaf != NONE {
                word = LEAF_BIT | leaf;
            }
        }
        if word == NONE {
            break;
        }
        let tri = word & ~LEAF_BIT;
        best = nearer(best, leaf_hit(ray, axes, body, tri, ignore_vertex, tmax), tri);
        tmax = min(tmax, best.t);
        word = NONE;
    }
    return best;
}

// The walk that makes up for the entries a full short stack dropped: the whole tree once more,
// depth first through the escape links without any stack, pruned by the hit found so far
// (`best_in`, with `tmax_in` the ray's bound shrunk to it), passing `fan`.
// Flags the hit as a fallback.
fn stackless_hit(ray: Ray, axes: vec3<u32>, inv: vec3<f32>, body: BodyGpu, leaf_count: u32, ignore_vertex: u32,
                 fan: Fan, best_in: RayHit, tmax_in: f32) -> RayHit {
    var best = best_in;
    var tmax = tmax_in;
    best.fallback = 1u;
    var node = 0u;
    loop {
        var tested = 0u;
        let bounded = Ray(ray.origin, ray.tmin, ray.dir, tmax);
        let tri = next_leaf_passing(bounded, inv, body, leaf_count, fan, &node, &tested);
        best.nodes_visited += tested;
        if tri == NONE {
            break;
        }
        best = nearer(best, leaf_hit(ray, axes, body, tri, ignore_vertex, tmax), tri);
        tmax = min(tmax, best.t);
    }
    return best;
}

// Whether some triangle of a body (its BodyGpu and leaf count) that does not use packed vertex
// `ignore_vertex` comes within distance r of p (`triangle_within`), walking the leaves whose box,
// grown by r, holds p. Where it does not, a self pair's rays from that vertex at p find nothing
// within r (the triangles they skip are those of `ignore_vertex`). Stops at the first such
// triangle. Without `test_triangles`, whether some leaf box grown by r holds p (no triangle
// tested): where none does, no triangle of the body comes within r of p. One walk for both
// questions, so that `narrow_phase`, which asks both, inlines one (a walk of each took lavapipe
// about 7 % longer to compile it). CPU twins: `raycontact::internals::cpu::other_near`, and
// without the triangle test `raycontact::internals::cpu::leaf_near`.
fn other_near(p: vec3<f32>, r: f32, ignore_vertex: u32, test_triangles: bool, body: BodyGpu,
              leaf_count: u32) -> bool {
    var node = NONE;
    if leaf_count > 0u {
        node = 0u;
    }
    let grow = vec3<f32>(r);
    // As `closest_hit`'s walk: the inner loop goes on to the next leaf whose grown box holds p,
    // then the leaf is tested, so that a SIMD group's lanes test their leaves together.
    loop {
        var tri = NONE;
        while node != NONE {
            let nd = nodes[body.node_offset + node];
            if all(nd.min - grow <= p) && all(p <= nd.max + grow) {
                if (nd.child & LEAF_BIT) != 0u {
                    tri = nd.child & ~LEAF_BIT;
                    node = nd.escape;
                    break;
                }
                node = nd.child;
            } else {
                node = nd.escape;
            }
        }
        if tri == NONE {
            return false;
        }
        if !test_triangles {
            return true;
        }
        let g = body.tri_offset + tri;
        let ia = triangles[3u * g];
        let ib = triangles[3u * g + 1u];
        let ic = triangles[3u * g + 2u];
        if ia != ignore_vertex && ib != ignore_vertex && ic != ignore_vertex
            && triangle_within(p, r, vertex_position(ia), vertex_position(ib), vertex_position(ic)) {
            return true;
        }
    }
    return false;
}

// Whether triangle (a, b, c) comes within distance r of p: the squared distance from p to the
// triangle at most r * r, without a branch (a SIMD group's lanes take the same steps): p's
// squared distance to the triangle's plane where p projects inside the triangle (on the inner
// side of each edge), else the least of its squared distances to the three edges. CPU twin:
// `raycontact::internals::cpu::triangle_within`.
fn triangle_within(p: vec3<f32>, r: f32, a: vec3<f32>, b: vec3<f32>, c: vec3<f32>) -> bool {
    let n = cross(b - a, c - a);
    let s = dot(p - a, n);
    let inside = dot(cross(b - a, p - a), n) >= 0.0 && dot(cross(c - b, p - b), n) >= 0.0
        && dot(cross(a - c, p - c), n) >= 0.0;
    let edges = min(edge_distance2(p, a, b), min(edge_distance2(p, b, c), edge_distance2(p, c, a)));
    return select(edges, s * s / dot(n, n), inside) <= r * r;
}

// The squared distance from p to the segment from a to b (a != b).
fn edge_distance2(p: vec3<f32>, a: vec3<f32>, b: vec3<f32>) -> f32 {
    let e = b - a;
    let t = clamp(dot(p - a, e) / dot(e, e), 0.0, 1.0);
    let d = a + t * e - p;
    return dot(d, d);
}

// The stackless walk's way to the next leaf (the escape links of `layout::Node`): from node
// `*node` of `body`, every box `ray` does not enter is passed by its escape link and every
// inner one it enters is entered, up to the first leaf whose box it enters. Returns that leaf's
// triangle (body-local) with `*node` left at its escape link, or NONE with `*node` NONE at the
// end of the walk; adds the boxes tested to `*tested`. The caller tests the triangle after the
// call: a SIMD group's calls return together, so their triangle tests run together (the
// while-while walk of `closest_hit`).
fn next_leaf(ray: Ray, inv: vec3<f32>, body: BodyGpu, node: ptr<function, u32>, tested: ptr<function, u32>) -> u32 {
    return next_leaf_passing(ray, inv, body, 0u, NO_FAN, node, tested);
}

// `next_leaf` of a walk passing `fan` (`passes_fan`) through a body of `leaf_count` leaves: a
// node it passes is passed by its escape link as though its box were missed.
fn next_leaf_passing(ray: Ray, inv: vec3<f32>, body: BodyGpu, leaf_count: u32, fan: Fan,
                     node: ptr<function, u32>, tested: ptr<function, u32>) -> u32 {
    loop {
        if *node == NONE {
            return NONE;
        }
        let nd = nodes[body.node_offset + *node];
        *tested += 1u;
        let entered = hit_box(ray.origin, ray.dir, inv, ray.tmin, ray.tmax, nd.min, nd.max)
            && !passes_fan(fan, leaf_count, *node);
        if entered && (nd.child & LEAF_BIT) == 0u {
            *node = nd.child;
            continue;
        }
        *node = nd.escape;
        if entered {
            return nd.child & ~LEAF_BIT;
        }
    }
    return NONE;
}
