// Bottom-up box fitting, correct by construction under WGSL's memory model (relaxed atomics,
// no ordering between different locations, no fence across workgroups).
// Each box is six independent maxima: per axis the complemented ordered key of the minimum and
// the ordered key of the maximum (float_to_key: exact, order-preserving). One invocation per
// leaf stores the leaf's box and carries its six keys up the parent links. At an internal node,
// for each key it carries, it does atomicMax on the node's word of that key in `fit_keys`
// (zeroed before the dispatch; a finite box's keys are never 0). The node has two children, and
// exactly one carrier per child reaches it with each key, so each word takes exactly two
// read-modify-writes; an atomic read-modify-write reads the value the previous one in that
// word's modification order wrote (WGSL, like Vulkan and C++, orders all atomic operations on one
// location). The first therefore reads 0 and drops that key; the second reads the other child's
// key, so max(it, its own) is the node's final key: it stores that component of the node's box
// (the only write of that word) and carries the key on. Nothing is read that another invocation
// wrote with a plain store in this dispatch, and no ordering between two locations is assumed:
// unlike a counter of arrivals followed by reads of the sibling's box (which needs a release and
// acquire fence between invocations of different workgroups, which WGSL lacks), this holds on
// any conforming implementation. The hierarchy's links, read here, come from the dispatch before.
// A zero of either sign comes out as +0 (float_to_key maps -0 to +0's key).
// ITEMS leaves per invocation of one body (shared/tiles.wgsl).
// CPU twin: `raycontact::internals::cpu::fit`.
//!include shared/common.wgsl
//!include shared/tiles.wgsl

@group(0) @binding(0) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(1) var<storage, read> tile_body: array<u32>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read> tri_boxes: array<TriBox>;
@group(0) @binding(4) var<storage, read> parents: array<u32>;
@group(0) @binding(5) var<storage, read_write> node_words: array<u32>;
@group(0) @binding(6) var<storage, read_write> fit_keys: array<atomic<u32>>;
@group(0) @binding(7) var<uniform> params: FrameParams;

// Word of a Node (8 words) holding key k (0..2: min x y z, 3..5: max x y z); its child link.
fn box_word(k: u32) -> u32 {
    return k + k / 3u;
}
const W_CHILD: u32 = 3u;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = tile_of(wid);
    if tile.index == NONE {
        return;
    }
    let bi = tile.body_index;
    let body = tile.body;
    let n = body_state[bi].leaf_count;
    for (var it = 0u; it < tile_items(tile, lid, n); it += 1u) {
        let j = tile.base + it * WG_SIZE + lid;
        let leaf = body.node_offset + n - 1u + j;
        let tri = node_words[leaf * 8u + W_CHILD] & ~LEAF_BIT;
        let b = tri_boxes[body.tri_offset + tri];
        var key: array<u32, 6>;
        for (var d = 0u; d < 3u; d += 1u) {
            node_words[leaf * 8u + box_word(d)] = bitcast<u32>(b.min[d]);
            node_words[leaf * 8u + box_word(d + 3u)] = bitcast<u32>(b.max[d]);
            key[d] = ~float_to_key(b.min[d]);
            key[d + 3u] = float_to_key(b.max[d]);
        }
        // Bit k: key k is still carried.
        var carried = 0x3fu;
        var p = parents[leaf];
        while p != NONE && carried != 0u {
            // Internal node p (body-local, p < n - 1): its keys are words 6 * (tri_offset + p) ...
            let words = 6u * (body.tri_offset + p);
            let node = body.node_offset + p;
            var still = 0u;
            for (var k = 0u; k < 6u; k += 1u) {
                if (carried & (1u << k)) != 0u {
                    let other = atomicMax(&fit_keys[words + k], key[k]);
                    if other != 0u {
                        key[k] = max(key[k], other);
                        still |= 1u << k;
                        var value = key_to_float(key[k]);
                        if k < 3u {
                            value = key_to_float(~key[k]);
                        }
                        node_words[node * 8u + box_word(k)] = bitcast<u32>(value);
                    }
                }
            }
            carried = still;
            p = parents[node];
        }
    }
}
