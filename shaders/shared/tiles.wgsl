// The part of a tile a workgroup handles, for the per-triangle kernels. A tile of TILE elements
// of one body (tiles never straddle bodies) is handled by TILE_SPLIT workgroups of WG_SIZE
// invocations, ITEMS elements each (`layout::Tuning`: one workgroup of 16 elements per invocation
// on a software adapter, 16 workgroups of one element per invocation on a GPU). Element k of
// invocation `lid` is the body-local element `base + k * WG_SIZE + lid`. A kernel that includes
// this declares `bodies: array<BodyGpu>`, `tile_body: array<u32>` and `params: FrameParams`.

struct Tile {
    // NONE for a workgroup past the last tile (the dispatch is rounded up), and for one of a
    // body whose frame data this frame keeps (BODY_KEEP): the kernel has nothing to do.
    index: u32,
    body_index: u32,
    body: BodyGpu,
    // Body-local index of the workgroup's first element.
    base: u32,
}

// How many of invocation `lid`'s ITEMS elements are below `count` (the body's elements): the
// bound of its element loop. A loop bounded so, rather than ITEMS iterations each guarded by an
// `if`, lets a SIMD group leave it once none of its lanes has an element left (llvmpipe runs a
// guarded iteration with every lane masked off rather than skip it), which matters in the part-
// full last tile of a body, e.g. a body of 900 triangles in a tile of 4,096.
fn tile_items(tile: Tile, lid: u32, count: u32) -> u32 {
    let first = tile.base + lid;
    if first >= count {
        return 0u;
    }
    return min(ITEMS, (count - first + WG_SIZE - 1u) / WG_SIZE);
}

fn tile_of(wid: vec3<u32>) -> Tile {
    let group = linear_group(wid);
    let index = group / TILE_SPLIT;
    let none = Tile(NONE, 0u, BodyGpu(0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0.0, 0.0, 0u, 0u), 0u);
    if index >= params.tile_count {
        return none;
    }
    let bi = tile_body[index];
    let body = bodies[bi];
    if (body.flags & BODY_KEEP) != 0u {
        return none;
    }
    let part = group % TILE_SPLIT;
    return Tile(index, bi, body, (index - body.tile_offset) * TILE + part * (WG_SIZE * ITEMS));
}
