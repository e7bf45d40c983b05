// The layout of a pair-tiled kernel's workgroups over the directed pairs (`pair_tiles` for
// `ray_sources`, `edge_tiles` for `edge_sources`; see shared/directed_pair.wgsl). A kernel that
// includes this (after shared/sort.wgsl) declares `tile_offsets: array<u32>` and defines
// `directed_tiles(k) -> u32`, the workgroups of direction k.

// Run by all WG_SIZE invocations of one workgroup: tile_offsets[k] = the workgroups of the
// directions before k, for k in 0..=d (tile_offsets[d] is the total, which it returns to every
// invocation). Each invocation sums a contiguous chunk of directions; one workgroup scan joins them.
fn scan_tile_offsets(lid: u32, d: u32) -> u32 {
    let chunk = (d + WG_SIZE - 1u) / WG_SIZE;
    let begin = min(lid * chunk, d);
    let end = min(begin + chunk, d);
    var sum = 0u;
    for (var k = begin; k < end; k += 1u) {
        sum += directed_tiles(k);
    }
    let prefix = workgroup_exclusive_scan(lid, sum);
    var running = prefix.x;
    for (var k = begin; k < end; k += 1u) {
        tile_offsets[k] = running;
        running += directed_tiles(k);
    }
    if lid == 0u {
        tile_offsets[d] = prefix.y;
    }
    return prefix.y;
}
