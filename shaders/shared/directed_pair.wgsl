// The directed pair that a workgroup of a pair-tiled kernel (`ray_sources`, `edge_sources`)
// works on. Listed pair i is two directions, k = 2i (a -> b) and k = 2i + 1 (b -> a); direction k
// owns workgroups tile_offsets[k] <= w < tile_offsets[k + 1], so a direction without work owns
// none. A kernel that includes this (after shared/contact.wgsl) declares
// `tile_offsets: array<u32>` and `pairs` with the pair list in `pairs.list`.

struct DirectedPair {
    k: u32,
    pair: BodyPair,
    // The source body and the target body of direction k.
    a: u32,
    b: u32,
    // The workgroup's index among direction k's workgroups.
    group: u32,
}

// Workgroup w's direction among the first d; the caller has checked d > 0 and
// w < tile_offsets[d]. The last k with tile_offsets[k] <= w, by bisection.
fn directed_pair(w: u32, d: u32) -> DirectedPair {
    var lo = 0u;
    var hi = d;
    while hi - lo > 1u {
        let mid = (lo + hi) / 2u;
        if tile_offsets[mid] <= w {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let pair = pairs.list[lo / 2u];
    var a = pair.a;
    var b = pair.b;
    if (lo & 1u) == 1u {
        a = pair.b;
        b = pair.a;
    }
    return DirectedPair(lo, pair, a, b, w - tile_offsets[lo]);
}
