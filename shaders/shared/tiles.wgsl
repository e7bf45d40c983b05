// The tile a workgroup handles, for the tiled per-triangle kernels. A kernel that includes this
// declares `bodies: array<BodyGpu>`, `tile_body: array<u32>` and `params: FrameParams`.

struct Tile {
    // NONE for a workgroup past the last tile (the dispatch is rounded up).
    index: u32,
    body_index: u32,
    body: BodyGpu,
    // Body-local index of the tile's first element.
    base: u32,
}

fn tile_of(wid: vec3<u32>) -> Tile {
    let index = linear_group(wid);
    if index >= params.tile_count {
        return Tile(NONE, 0u, BodyGpu(0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0.0, 0.0, 0u, 0u), 0u);
    }
    let bi = tile_body[index];
    let body = bodies[bi];
    return Tile(index, bi, body, (index - body.tile_offset) * TILE);
}
