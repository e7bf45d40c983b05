// Radix sort, pass step 3: stable scatter. One workgroup per tile; invocation t owns the ITEMS
// consecutive elements t * ITEMS .. t * ITEMS + ITEMS of the tile. The ranks come from one
// exclusive scan of the (digit, invocation) count matrix, flattened digit-major.
// The matrix holds two 16-bit counts per word: word (d / 2) * WG_SIZE + t has invocation t's
// count of digit d in its low half when d is even, in its high half when d is odd. A tile has
// at most TILE < 2^16 elements (asserted in `layout`), so no half ever carries into the other,
// and the scan adds both halves at once: half the workgroup memory (8 KiB of counts) and half
// the scan of a 32-bit matrix.
// CPU twin: `raycontact::internals::cpu::radix_sort` (the whole sort).
//!include shared/common.wgsl
//!include shared/sort.wgsl

@group(0) @binding(0) var<uniform> pass_info: SortPass;
@group(0) @binding(1) var<storage, read> segments: array<SortSegment>;
@group(0) @binding(2) var<storage, read> tile_segment: array<u32>;
@group(0) @binding(3) var<storage, read> counters: array<u32>;
@group(0) @binding(4) var<storage, read> keys_in: array<u32>;
@group(0) @binding(5) var<storage, read> values_in: array<u32>;
@group(0) @binding(6) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(7) var<storage, read_write> values_out: array<u32>;

const COUNT_WORDS: u32 = RADIX_MATRIX / 2u;

// counts[(digit / 2) * WG_SIZE + invocation], two digits to a word (see above)
var<workgroup> counts: array<u32, COUNT_WORDS>;

// The 16-bit half of `word` that holds digit d.
fn half_of(word: u32, d: u32) -> u32 {
    return (word >> ((d & 1u) * 16u)) & 0xffffu;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = linear_group(wid);
    if tile >= pass_info.tile_count {
        return;
    }
    let seg = segments[tile_segment[tile]];
    let local_tile = tile - seg.tile_offset;
    let first = local_tile * TILE + lid * ITEMS;

    for (var w = 0u; w < RADIX_BUCKETS / 2u; w += 1u) {
        counts[w * WG_SIZE + lid] = 0u;
    }
    var key: array<u32, ITEMS>;
    var digit: array<u32, ITEMS>;
    for (var k = 0u; k < ITEMS; k += 1u) {
        let i = first + k;
        if i < seg.count {
            key[k] = keys_in[seg.offset + i];
            digit[k] = (key[k] >> pass_info.shift) & (RADIX_BUCKETS - 1u);
            counts[(digit[k] / 2u) * WG_SIZE + lid] += 1u << ((digit[k] & 1u) * 16u);
        }
    }
    workgroupBarrier();

    // Exclusive scan of the flattened matrix, both halves at once: invocation t scans words
    // t*CHUNK .. t*CHUNK+CHUNK.
    let chunk = COUNT_WORDS / WG_SIZE;
    var sum = 0u;
    for (var j = 0u; j < chunk; j += 1u) {
        sum += counts[lid * chunk + j];
    }
    let prefix = workgroup_exclusive_scan(lid, sum);
    var running = prefix.x;
    for (var j = 0u; j < chunk; j += 1u) {
        let c = counts[lid * chunk + j];
        counts[lid * chunk + j] = running;
        running += c;
    }
    workgroupBarrier();

    var seen = array<u32, RADIX_BUCKETS>();
    for (var k = 0u; k < ITEMS; k += 1u) {
        let i = first + k;
        if i < seg.count {
            let d = digit[k];
            let row = (d / 2u) * WG_SIZE;
            let tile_start = half_of(counts[row], d);
            let rank = half_of(counts[row + lid], d) - tile_start + seen[d];
            seen[d] += 1u;
            let dst = counters[counter_index(seg, d, local_tile)] + rank;
            keys_out[dst] = key[k];
            values_out[dst] = values_in[seg.offset + i];
        }
    }
}
