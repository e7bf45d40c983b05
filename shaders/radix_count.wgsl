// Radix sort, the first pass's digit histogram of each tile, for a sort whose keys come from
// the host (`GpuRadixSort`; the frame's first counts come from `morton`, and each pass's scatter
// counts the next pass's digits). One workgroup per tile.
// CPU twin: `raycontact::internals::cpu::radix_sort` (the whole sort).
//!include shared/common.wgsl
//!include shared/sort.wgsl

// The workgroup of shared/sort.wgsl's scan.
const SCAN_GROUP: u32 = WG_SIZE;

@group(0) @binding(0) var<uniform> pass_info: SortPass;
@group(0) @binding(1) var<storage, read> segments: array<SortSegment>;
@group(0) @binding(2) var<storage, read> tile_segment: array<u32>;
@group(0) @binding(3) var<storage, read> keys: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<u32>;

var<workgroup> histogram: array<atomic<u32>, RADIX_BUCKETS>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = linear_group(wid);
    if tile >= pass_info.tile_count {
        return;
    }
    let seg = segments[tile_segment[tile]];
    let local_tile = tile - seg.tile_offset;
    let base = local_tile * TILE;
    if lid < RADIX_BUCKETS {
        atomicStore(&histogram[lid], 0u);
    }
    workgroupBarrier();
    for (var k = 0u; k < SORT_ITEMS; k += 1u) {
        let i = base + k * WG_SIZE + lid;
        if i < seg.count {
            let digit = (keys[seg.offset + i] >> pass_info.shift) & (RADIX_BUCKETS - 1u);
            atomicAdd(&histogram[digit], 1u);
        }
    }
    workgroupBarrier();
    if lid < RADIX_BUCKETS {
        let block = pass_block(pass_index(pass_info), pass_info.tile_count);
        counters[block + counter_index(seg, lid, local_tile)] = atomicLoad(&histogram[lid]);
    }
}
