// Declarations shared by the radix sort kernels: a stable LSD radix sort of (key, value) pairs,
// RADIX_BITS bits a pass, within contiguous segments (one per body). Segments must be packed in
// order from element 0 with no gaps; tiles of TILE elements never straddle a segment.

// Mirrors `layout::SortSegment`.
struct SortSegment {
    offset: u32,
    count: u32,
    tile_offset: u32,
    tile_count: u32,
}

// Mirrors `layout::SortPass`, one per pass at a 256-byte dynamic offset.
struct SortPass {
    shift: u32,
    tile_count: u32,
    pad0: u32,
    pad1: u32,
}

// Index of the counter of (segment, digit, tile of the segment): segment-major, then digit, then
// tile, so that one exclusive scan over all counters yields every scatter base at once.
fn counter_index(seg: SortSegment, digit: u32, local_tile: u32) -> u32 {
    return seg.tile_offset * RADIX_BUCKETS + digit * seg.tile_count + local_tile;
}

var<workgroup> scan_tmp: array<u32, WG_SIZE>;

// Exclusive prefix sum of `value` over the workgroup (Hillis-Steele); every invocation must call
// it. Returns (exclusive prefix, workgroup total).
fn workgroup_exclusive_scan(lid: u32, value: u32) -> vec2<u32> {
    scan_tmp[lid] = value;
    workgroupBarrier();
    for (var off = 1u; off < WG_SIZE; off <<= 1u) {
        var add = 0u;
        if lid >= off {
            add = scan_tmp[lid - off];
        }
        workgroupBarrier();
        scan_tmp[lid] += add;
        workgroupBarrier();
    }
    let inclusive = scan_tmp[lid];
    let total = scan_tmp[WG_SIZE - 1u];
    workgroupBarrier();
    return vec2<u32>(inclusive - value, total);
}
