// The contour's loops, walked: one invocation per stored crossing, of which only each loop's
// start (the crossing whose canonical key is its root's least, `contour_start`) works. It
// appends the loop's record, then walks it: from the start through its link on side 0 (or its
// only link, at an end of an open polyline), then out of each crossing through the side it did
// not come in by, until it comes back to the start (a closed loop) or reaches an end (an open
// polyline, cut by a cloth's boundary). Each crossing gets the loop's index and its rank along
// it; the record gets the count, the length of the polyline and, for each of the pair's bodies,
// the regions on the front and back side of the other body's triangles at the first crossing of
// one of its edges whose both ends are next to the loop. One walker per loop: a loop's
// crossings are visited in order, as the CPU twin does. CPU twin:
// `raycontact::internals::cpu::contour_walk`.
//!include shared/common.wgsl
//!include shared/intersect.wgsl

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> edges: array<Edge>;
@group(0) @binding(3) var<storage, read_write> state: IntersectState;
@group(0) @binding(4) var<storage, read> crossings: array<Crossing>;
@group(0) @binding(5) var<storage, read_write> contour: array<ContourNode>;
@group(0) @binding(6) var<storage, read_write> loops: array<Loop>;
@group(0) @binding(7) var<storage, read> regions: array<RegionRead>;

fn degree(i: u32) -> u32 {
    return select(0u, 1u, atomicLoad(&contour[i].links[0]) != 0u)
        + select(0u, 1u, atomicLoad(&contour[i].links[1]) != 0u);
}

fn root(v: u32) -> u32 {
    return decode_parent(regions[v].parent, v);
}

// (front region, back region) of crossing c when both ends of its edge are next to it, else
// (NONE, NONE).
fn sides(c: Crossing) -> vec2<u32> {
    if (c.flags & (CROSSING_FIRST | CROSSING_LAST)) != (CROSSING_FIRST | CROSSING_LAST) {
        return vec2<u32>(NONE);
    }
    let e = edges[bodies[c.source_body].edge_offset + c.edge];
    if (c.flags & CROSSING_FORWARD) != 0u {
        return vec2<u32>(root(e.b), root(e.a));
    }
    return vec2<u32>(root(e.a), root(e.b));
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let stored = min(atomicLoad(&state.crossings), params.crossing_capacity);
    let i = linear_group(wid) * WG_SIZE + lid;
    if i >= stored {
        return;
    }
    let start = crossings[i];
    let r = decode_parent(atomicLoad(&contour[i].parent), i);
    let key = crossing_key(start, degree(i));
    if key.x != ~atomicLoad(&contour[r].key_hi) || key.y != ~atomicLoad(&contour[r].key_lo) {
        return;
    }
    let index = atomicAdd(&state.loops, 1u);
    var side = 0u;
    if atomicLoad(&contour[i].links[0]) == 0u {
        side = 1u;
    }
    var regions_a = vec2<u32>(NONE);
    var regions_b = vec2<u32>(NONE);
    let self_pair = start.source_body == start.target_body;
    var at = i;
    var here = start;
    var count = 0u;
    var total = 0.0;
    var flags = 0u;
    loop {
        contour[at].loop_id = index + 1u;
        contour[at].rank = count;
        count += 1u;
        let s = sides(here);
        if s.x != NONE {
            if (here.pair & 1u) == 0u && regions_a.x == NONE {
                regions_a = s;
            } else if (here.pair & 1u) == 1u && regions_b.x == NONE {
                regions_b = s;
            } else if self_pair && regions_b.x == NONE && any(s != regions_a) {
                regions_b = s;
            }
        }
        let l = atomicLoad(&contour[at].links[side]);
        if l == 0u {
            break;
        }
        let next = (l - 1u) / 2u;
        let there = crossings[next];
        total += distance(here.point, there.point);
        if next == i {
            flags = LOOP_CLOSED;
            break;
        }
        // Links are symmetric, so a walk cannot revisit a crossing but the start; the guard only
        // bounds the loop.
        if count >= stored {
            break;
        }
        side = 1u - ((l - 1u) & 1u);
        at = next;
        here = there;
    }
    loops[index] = Loop(start.pair / 2u, i, count, flags, total, array<u32, 2>(regions_a.x, regions_a.y),
        array<u32, 2>(regions_b.x, regions_b.y), 0u, 0u, 0u);
}
