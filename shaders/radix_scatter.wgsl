// Radix sort, one pass: the stable scatter of one tile by one digit, one dispatch a pass. Its
// digit counts (block `pass` of the counts, complete since the previous dispatch) are scanned
// here, each workgroup over its own segment's counts only, and the next pass's digit counts of
// the scattered keys are gathered on the way: no separate count or scan dispatch.
// 1. Where this tile's run of each digit starts in the segment's output: the exclusive prefix of
//    the segment's counts (digit-major: all tiles' counts of digit 0, then of digit 1, ...) at
//    (digit, this tile). Each invocation sums a chunk of them, one workgroup scan of the sums,
//    then invocation d adds the counts of its chunk before (d, this tile).
// 2. The rank of each element within the tile's run of its digit: invocation t owns the
//    SCATTER_ITEMS consecutive elements t * SCATTER_ITEMS .. of the tile; one exclusive scan
//    of the (digit, invocation) count matrix, flattened digit-major, gives each invocation's
//    first rank per digit. The matrix holds two 16-bit counts per word: word (d / 2) * C + t
//    has invocation t's count of digit d in its low half when d is even, in its high half when
//    d is odd, C being the matrix's columns: the invocations that have elements (all
//    BARRIER_GROUP in a full tile; in a body of 900 triangles 57 of 256, or 8 of 32). The
//    others' counts would be zeros: leaving them out of the matrix spares those invocations
//    the clearing and scanning of their words, a fixed cost of every workgroup that llvmpipe
//    pays in full (each workgroup access of it a loop over the SIMD lanes) in the part-full
//    last tile of every body. A tile has at most TILE < 2^16 elements (asserted in `layout`),
//    so no half ever carries into the other, and the scan adds both halves at once. While
//    scattering, each invocation counts its own words up past the elements it has placed: no
//    per-invocation array of ranks (a private array indexed by data, which a SIMD compiler
//    such as llvmpipe's turns into a scalar loop over the lanes), and no array of digits or
//    keys either (each invocation reads its keys again to scatter them and recomputes the
//    digit).
// 3. With SORT_COUNT_NEXT, the next pass's digit of every scattered key is counted by
//    destination tile. A run holds at most TILE elements, so it spans at most two destination
//    tiles: the counts are kept per (run, which of its two tiles, next digit) in workgroup memory
//    and added to the next block with one atomicAdd per non-zero count. The order of those adds
//    does not matter (integer sums), and the next dispatch reads them.
// With SORT_IDENTITY_VALUES the values are the elements' packed indices (the frame's first
// pass: its values are the triangles), not read from `values_in`.
// The per-element loops of 2. and 3. run to the invocation's own element count (`items`:
// SCATTER_ITEMS, fewer or none past the segment's end) instead of testing each of SCATTER_ITEMS
// slots: a SIMD compiler such as llvmpipe's steps every lane through an `if` with the lanes
// masked off, but leaves a loop once none of its lanes is in it, so the SIMD groups past the end
// of a part-full tile (a body of 900 triangles fills 57 of 256 invocations) skip the
// element work instead of paying it masked. The scan's serial loops (shared/sort.wgsl) do the
// same. On a GPU the loops are the same work as the tests.
// A workgroup has BARRIER_GROUP invocations (`layout::Tuning::barrier_group`: 32 on a software
// adapter, whose coroutine per SIMD slice of the workgroup is switched at each of a pass's
// twelve barriers, WG_SIZE on a GPU), each placing SCATTER_ITEMS = TILE / BARRIER_GROUP elements.
// CPU twin: `raycontact::internals::cpu::radix_sort` (the whole sort).
//!include shared/common.wgsl
//!include shared/sort.wgsl
//!include shared/sort_ranks.wgsl

// The workgroup of shared/sort.wgsl's scan.
const SCAN_GROUP: u32 = BARRIER_GROUP;

@group(0) @binding(0) var<uniform> pass_info: SortPass;
@group(0) @binding(1) var<storage, read> segments: array<SortSegment>;
@group(0) @binding(2) var<storage, read> tile_segment: array<u32>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read> keys_in: array<u32>;
@group(0) @binding(5) var<storage, read> values_in: array<u32>;
@group(0) @binding(6) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(7) var<storage, read_write> values_out: array<u32>;

const NEXT_COUNTS: u32 = RADIX_BUCKETS * 2u * RADIX_BUCKETS;

// Where this tile's run of each digit starts, relative to the segment's first element.
var<workgroup> run_start: array<u32, RADIX_BUCKETS>;
// run_start minus the run's first rank in the scanned count matrix: where the element of matrix
// rank r with that digit goes is run_base[digit] + r.
var<workgroup> run_base: array<u32, RADIX_BUCKETS>;
// next_counts[(digit * 2 + destination tile - the run's first) * RADIX_BUCKETS + next digit]
var<workgroup> next_counts: array<atomic<u32>, NEXT_COUNTS>;

@compute @workgroup_size(BARRIER_GROUP)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = linear_group(wid);
    if tile >= pass_info.tile_count {
        return;
    }
    let seg = segments[tile_segment[tile]];
    // An empty segment: nothing to sort (the GPU scene empties the segment of a body whose
    // keys are kept this frame, `layout::BODY_KEEP`).
    if seg.count == 0u {
        return;
    }
    let local_tile = tile - seg.tile_offset;
    let first = local_tile * TILE + lid * SCATTER_ITEMS;
    let block = pass_block(pass_index(pass_info), pass_info.tile_count) + seg.tile_offset * RADIX_BUCKETS;
    // The count matrix's columns (the invocations that have elements), and the words of this
    // invocation's column: none past the columns (a loop bound, not an `if`: see below).
    let columns = (min(seg.count - local_tile * TILE, TILE) + SCATTER_ITEMS - 1u) / SCATTER_ITEMS;
    let rows = select(0u, RADIX_BUCKETS / 2u, lid < columns);

    clear_column(lid, columns, rows);
    for (var e = lid; e < NEXT_COUNTS; e += BARRIER_GROUP) {
        atomicStore(&next_counts[e], 0u);
    }

    // 1. The runs' starts: a scan of the segment's counts in chunks.
    let n = RADIX_BUCKETS * seg.tile_count;
    let chunk = (n + BARRIER_GROUP - 1u) / BARRIER_GROUP;
    let begin = min(lid * chunk, n);
    let end = min(begin + chunk, n);
    var sum = 0u;
    for (var i = begin; i < end; i += 1u) {
        sum += atomicLoad(&counters[block + i]);
    }
    workgroup_exclusive_scan(lid, sum);
    if lid < RADIX_BUCKETS {
        let at = lid * seg.tile_count + local_tile;
        let owner = at / chunk;
        var start = scanned_prefix(owner);
        for (var i = owner * chunk; i < at; i += 1u) {
            start += atomicLoad(&counters[block + i]);
        }
        run_start[lid] = start;
    }

    // 2. The ranks within the tile. This invocation's elements: first .. first + items.
    let items = min(seg.count, first + SCATTER_ITEMS) - min(seg.count, first);
    for (var k = 0u; k < items; k += 1u) {
        let d = (keys_in[seg.offset + first + k] >> pass_info.shift) & (RADIX_BUCKETS - 1u);
        count_digit(lid, columns, d);
    }
    workgroupBarrier();
    scan_counts(lid, rows);
    if lid < RADIX_BUCKETS {
        run_base[lid] = run_start[lid] - first_rank(columns, lid);
    }
    workgroupBarrier();

    // 3. Scatter, and count the next pass's digits.
    let count_next = (pass_info.flags & SORT_COUNT_NEXT) != 0u;
    let next_shift = min(pass_info.shift + RADIX_BITS, 31u);
    for (var k = 0u; k < items; k += 1u) {
        let i = first + k;
        let key = keys_in[seg.offset + i];
        let d = (key >> pass_info.shift) & (RADIX_BUCKETS - 1u);
        let to = run_base[d] + next_rank(lid, columns, d);
        keys_out[seg.offset + to] = key;
        var value = seg.offset + i;
        if (pass_info.flags & SORT_IDENTITY_VALUES) == 0u {
            value = values_in[seg.offset + i];
        }
        values_out[seg.offset + to] = value;
        if count_next {
            let slot = to / TILE - run_start[d] / TILE;
            let next = (key >> next_shift) & (RADIX_BUCKETS - 1u);
            atomicAdd(&next_counts[(d * 2u + slot) * RADIX_BUCKETS + next], 1u);
        }
    }
    workgroupBarrier();
    if count_next {
        let next_block = pass_block(pass_index(pass_info) + 1u, pass_info.tile_count) + seg.tile_offset * RADIX_BUCKETS;
        for (var e = lid; e < NEXT_COUNTS; e += BARRIER_GROUP) {
            let c = atomicLoad(&next_counts[e]);
            if c > 0u {
                let d = e / (2u * RADIX_BUCKETS);
                let slot = (e / RADIX_BUCKETS) % 2u;
                let next = e % RADIX_BUCKETS;
                let to_tile = run_start[d] / TILE + slot;
                atomicAdd(&counters[next_block + next * seg.tile_count + to_tile], c);
            }
        }
    }
}
