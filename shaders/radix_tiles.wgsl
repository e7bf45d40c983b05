// Radix sort of segments of one tile each, whole: every pass of `radix_scatter`'s stable LSD
// sort of a segment (a body of at most TILE triangles) in its one workgroup, so that the sort
// is one dispatch instead of one a pass (`gpu/sort.rs`: when no segment has more than one tile,
// and on a software adapter when there are at most `Tuning::whole_sort_tiles` of them).
// A pass is `radix_scatter`'s steps 2 and 3 (see there): the ranks within the tile from the
// (digit, invocation) count matrix, two 16-bit counts to a word, and the scatter. The tile is
// the whole segment, so where each digit's run starts follows from the scanned matrix alone
// (`ranks`): no scan across workgroups, no digit counts in the counts buffer or counted while
// scattering, no atomic operation.
// The passes ping-pong between the two sides, `keys0`/`values0` and `keys1`/`values1`, with a
// storage barrier between them; after the sort's passes (`pass_info.passes`, even: SORT_PASSES,
// or fewer for the short or tiny keys of the frame's bodies of one tile) the keys are back in
// `keys0`, where `radix_scatter`'s passes leave them too. A kernel of its own, not a branch of
// `radix_scatter`: that one would have to bind its inputs writable for every pass (on lavapipe
// its passes ran 6–12 % slower so).
// With SORT_IDENTITY_VALUES the values are the elements' packed indices (`values0` not read).
// CPU twin: `raycontact::internals::cpu::radix_sort` (the whole sort).
//!include shared/common.wgsl
//!include shared/sort.wgsl
//!include shared/sort_ranks.wgsl

// The workgroup of shared/sort.wgsl's scan.
const SCAN_GROUP: u32 = BARRIER_GROUP;

@group(0) @binding(0) var<uniform> pass_info: SortPass;
@group(0) @binding(1) var<storage, read> segments: array<SortSegment>;
@group(0) @binding(2) var<storage, read> tile_segment: array<u32>;
@group(0) @binding(3) var<storage, read_write> keys0: array<u32>;
@group(0) @binding(4) var<storage, read_write> values0: array<u32>;
@group(0) @binding(5) var<storage, read_write> keys1: array<u32>;
@group(0) @binding(6) var<storage, read_write> values1: array<u32>;

// Where the element of matrix rank r with digit d goes: run_base[d] + r (relative to the
// segment's first element).
var<workgroup> run_base: array<u32, RADIX_BUCKETS>;

@compute @workgroup_size(BARRIER_GROUP)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = linear_group(wid);
    if tile >= pass_info.tile_count {
        return;
    }
    let seg = segments[tile_segment[tile]];
    // An empty segment (a body whose keys the frame keeps, `layout::BODY_KEEP`) or one of more
    // tiles (not this kernel's: `gpu/sort.rs` does not dispatch it then).
    if seg.count == 0u || seg.tile_count != 1u {
        return;
    }
    let first = lid * SCATTER_ITEMS;
    let items = min(seg.count, first + SCATTER_ITEMS) - min(seg.count, first);
    // The count matrix's columns (the invocations that have elements), and the words of this
    // invocation's column: loop bounds, not `if`s (see radix_scatter.wgsl).
    let columns = (seg.count + SCATTER_ITEMS - 1u) / SCATTER_ITEMS;
    let rows = select(0u, RADIX_BUCKETS / 2u, lid < columns);
    // The passes two at a time (their count is even), each loop reading and writing its
    // side's buffers by name: keys0 -> keys1, then keys1 -> keys0. Not one loop choosing the
    // side by the pass's parity: llvmpipe ran both sides' loads and stores under a mask for
    // every element (the README's paragraph on the sort has the figures).
    for (var p = 0u; p < pass_info.passes; p += 2u) {
        let shift = p * RADIX_BITS;
        let odd_shift = shift + RADIX_BITS;
        let identity = p == 0u && (pass_info.flags & SORT_IDENTITY_VALUES) != 0u;
        clear_column(lid, columns, rows);
        for (var k = 0u; k < items; k += 1u) {
            count_digit(lid, columns, digit(keys0[seg.offset + first + k], shift));
        }
        ranks(lid, columns, rows);
        for (var k = 0u; k < items; k += 1u) {
            let i = seg.offset + first + k;
            let key = keys0[i];
            let to = seg.offset + destination(lid, columns, digit(key, shift));
            keys1[to] = key;
            var value = i;
            if !identity {
                value = values0[i];
            }
            values1[to] = value;
        }
        // This pass's keys visible to the next.
        storageBarrier();
        clear_column(lid, columns, rows);
        for (var k = 0u; k < items; k += 1u) {
            count_digit(lid, columns, digit(keys1[seg.offset + first + k], odd_shift));
        }
        ranks(lid, columns, rows);
        for (var k = 0u; k < items; k += 1u) {
            let i = seg.offset + first + k;
            let key = keys1[i];
            let to = seg.offset + destination(lid, columns, digit(key, odd_shift));
            keys0[to] = key;
            values0[to] = values1[i];
        }
        storageBarrier();
    }
}

// The digit of `key` at `shift`.
fn digit(key: u32, shift: u32) -> u32 {
    return (key >> shift) & (RADIX_BUCKETS - 1u);
}

// Where invocation `lid`'s next element of digit `d` goes, relative to the segment's first
// element (its rank counted up for the one after).
fn destination(lid: u32, columns: u32, d: u32) -> u32 {
    return run_base[d] + next_rank(lid, columns, d);
}

// After the counting: the ranks within the tile (one exclusive scan of the flattened count
// matrix), and where the element of matrix rank r with digit d goes, `run_base[d] + r`. Its run
// starts after the tile's elements of smaller digits; its first rank counts those of the smaller
// digits of its parity (the low halves of the matrix's words hold the even digits, the high
// halves the odd ones), so `run_base[d]` is the count of the smaller digits of the other parity:
// for an even d the high half of the scan at row d / 2 (the odd digits below d), for an odd d the
// low half at row (d + 1) / 2 (the even digits below d), or of the scan's total past the last row.
fn ranks(lid: u32, columns: u32, rows: u32) {
    workgroupBarrier();
    scan_counts(lid, rows);
    if lid < RADIX_BUCKETS {
        let row = (lid + 1u) / 2u;
        var word = scanned_total();
        if row < RADIX_BUCKETS / 2u {
            word = counts[row * columns];
        }
        run_base[lid] = half_of(word, (lid + 1u) & 1u);
    }
    workgroupBarrier();
}
