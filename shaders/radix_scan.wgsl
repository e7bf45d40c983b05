// Radix sort, pass step 2: exclusive prefix sum, in place, of all RADIX_BUCKETS * tile_count
// counters by a single workgroup (each invocation scans a contiguous chunk serially).
// CPU twin: `raycontact::internals::cpu::radix_sort` (the whole sort).
//!include shared/common.wgsl
//!include shared/sort.wgsl

@group(0) @binding(0) var<uniform> pass_info: SortPass;
@group(0) @binding(1) var<storage, read_write> counters: array<u32>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
    let n = pass_info.tile_count * RADIX_BUCKETS;
    let chunk = (n + WG_SIZE - 1u) / WG_SIZE;
    let begin = min(lid * chunk, n);
    let end = min(begin + chunk, n);
    var sum = 0u;
    for (var i = begin; i < end; i += 1u) {
        sum += counters[i];
    }
    let prefix = workgroup_exclusive_scan(lid, sum);
    var running = prefix.x;
    for (var i = begin; i < end; i += 1u) {
        let c = counters[i];
        counters[i] = running;
        running += c;
    }
}
