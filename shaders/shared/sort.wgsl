// Declarations shared by the radix sort kernels: a stable LSD radix sort of (key, value) pairs,
// RADIX_BITS bits a pass, within contiguous segments (one per body). Segments must be packed in
// order from element 0 with no gaps; tiles of TILE elements never straddle a segment. The digit
// counts of every pass live in one buffer, block after block (`pass_block`), each block
// segment-major, then digit, then tile (`counter_index`).

// Mirrors `layout::SortSegment`.
struct SortSegment {
    offset: u32,
    count: u32,
    tile_offset: u32,
    tile_count: u32,
}

// Mirrors `layout::SortPass`, one per pass at a 256-byte dynamic offset: the digit's shift (the
// pass's index times RADIX_BITS: `pass_index`), the tiles of all segments, the passes of the
// whole sort (SORT_PASSES, or SHORT_SORT_PASSES where every segment holds short keys: see
// `layout::sort_passes`) and the flags SORT_IDENTITY_VALUES, SORT_COUNT_NEXT.
struct SortPass {
    shift: u32,
    tile_count: u32,
    passes: u32,
    flags: u32,
}

// The index of pass `p` (its digit counts are that block of the counts).
fn pass_index(p: SortPass) -> u32 {
    return p.shift / RADIX_BITS;
}

// First counter of the block of the pass of index `index`, over `tile_count` tiles in all.
fn pass_block(index: u32, tile_count: u32) -> u32 {
    return index * RADIX_BUCKETS * tile_count;
}

// Index, within a pass's block, of the counter of (segment, digit, tile of the segment):
// segment-major, then digit, then tile, so that the exclusive prefix of a segment's counters at
// (digit, tile) is where that tile's run of that digit starts in the segment's output.
fn counter_index(seg: SortSegment, digit: u32, local_tile: u32) -> u32 {
    return seg.tile_offset * RADIX_BUCKETS + digit * seg.tile_count + local_tile;
}

// The scan's workgroup: every kernel that includes this file declares `SCAN_GROUP`, its own
// workgroup size (WG_SIZE, or BARRIER_GROUP for the scatter), a multiple of 16 up to 256.
var<workgroup> scan_tmp: array<u32, SCAN_GROUP>;
var<workgroup> scan_blocks: array<u32, SCAN_GROUP / 16u + 1u>;

// Exclusive prefix sum of `value` over the workgroup of SCAN_GROUP invocations; every
// invocation must call it. Returns (exclusive prefix, workgroup total). Three levels of 16-wide
// serial scans with four barriers: a software rasteriser such as lavapipe pays dearly for each
// barrier, and a GPU loses little against a log-depth scan at this width.
fn workgroup_exclusive_scan(lid: u32, value: u32) -> vec2<u32> {
    scan_tmp[lid] = value;
    workgroupBarrier();
    // The serial scans' bounds, not an `if` around them, keep the other invocations out: a SIMD
    // compiler such as llvmpipe's runs an `if` with its lanes masked off (every invocation
    // would step through the loop), but leaves a loop once none of its lanes is in it.
    let block_steps = select(0u, 16u, lid < SCAN_GROUP / 16u);
    var running = 0u;
    for (var j = 0u; j < block_steps; j += 1u) {
        let v = scan_tmp[lid * 16u + j];
        scan_tmp[lid * 16u + j] = running;
        running += v;
    }
    if lid < SCAN_GROUP / 16u {
        scan_blocks[lid] = running;
    }
    workgroupBarrier();
    let top_steps = select(0u, SCAN_GROUP / 16u, lid == 0u);
    running = 0u;
    for (var j = 0u; j < top_steps; j += 1u) {
        let v = scan_blocks[j];
        scan_blocks[j] = running;
        running += v;
    }
    if lid == 0u {
        scan_blocks[SCAN_GROUP / 16u] = running;
    }
    workgroupBarrier();
    let result = vec2<u32>(scan_tmp[lid] + scan_blocks[lid / 16u], scan_blocks[SCAN_GROUP / 16u]);
    workgroupBarrier();
    return result;
}

// The exclusive prefix that the last `workgroup_exclusive_scan` returned to invocation `i` (valid
// until the next call: the scan leaves its workgroup memory as it was).
fn scanned_prefix(i: u32) -> u32 {
    return scan_tmp[i] + scan_blocks[i / 16u];
}

// The workgroup total that the last `workgroup_exclusive_scan` returned (valid until the next
// call, as `scanned_prefix`).
fn scanned_total() -> u32 {
    return scan_blocks[SCAN_GROUP / 16u];
}
