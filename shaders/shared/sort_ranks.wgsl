// The ranks of a tile's elements within their digit, shared by `radix_scatter` and
// `radix_tiles`: the (digit, invocation) count matrix, two 16-bit counts to a word (word
// (d / 2) * columns + t holds invocation t's count of digit d in its low half when d is even,
// in its high half when d is odd; `columns`: the invocations that have elements), and its
// exclusive scan. A tile has at most TILE < 2^16 elements (asserted in `layout`), so no half
// ever carries into the other, and the scan adds both halves at once. Needs shared/sort.wgsl.

const COUNT_WORDS: u32 = RADIX_MATRIX / 2u;

// counts[(digit / 2) * columns + invocation], two digits to a word
var<workgroup> counts: array<u32, COUNT_WORDS>;

// The 16-bit half of `word` that holds digit d.
fn half_of(word: u32, d: u32) -> u32 {
    return (word >> ((d & 1u) * 16u)) & 0xffffu;
}

// Zeroes invocation `lid`'s column of the matrix (`rows` words: RADIX_BUCKETS / 2, or 0 past
// the columns).
fn clear_column(lid: u32, columns: u32, rows: u32) {
    for (var w = 0u; w < rows; w += 1u) {
        counts[w * columns + lid] = 0u;
    }
}

// One more element of digit `d` in invocation `lid`'s column.
fn count_digit(lid: u32, columns: u32, d: u32) {
    counts[(d / 2u) * columns + lid] += 1u << ((d & 1u) * 16u);
}

// After the scan: the matrix rank of the first element of digit `d` (invocation 0's word).
fn first_rank(columns: u32, d: u32) -> u32 {
    return half_of(counts[(d / 2u) * columns], d);
}

// After the scan, while scattering: the matrix rank of invocation `lid`'s next element of digit
// `d`, counted up for the one after (its own word: no other invocation touches it then).
fn next_rank(lid: u32, columns: u32, d: u32) -> u32 {
    let at = (d / 2u) * columns + lid;
    let word = counts[at];
    counts[at] = word + (1u << ((d & 1u) * 16u));
    return half_of(word, d);
}

// Exclusive scan of the flattened matrix (RADIX_BUCKETS / 2 rows of `columns` words), both
// halves at once: invocation t < columns (`rows` RADIX_BUCKETS / 2, 0 for the others) scans the
// words from t * RADIX_BUCKETS / 2 on. Every invocation must call it, after a barrier that
// follows the counting; a barrier follows it.
fn scan_counts(lid: u32, rows: u32) {
    let words = RADIX_BUCKETS / 2u;
    var total = 0u;
    for (var j = 0u; j < rows; j += 1u) {
        total += counts[lid * words + j];
    }
    let prefix = workgroup_exclusive_scan(lid, total);
    var running = prefix.x;
    for (var j = 0u; j < rows; j += 1u) {
        let c = counts[lid * words + j];
        counts[lid * words + j] = running;
        running += c;
    }
    workgroupBarrier();
}
