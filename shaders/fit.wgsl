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
// The same second read-modify-write holds both children's values of the word (its own carried
// key and the one it read): where the tuning keeps child pairs (`Tuning::child_pairs`), it also
// writes them into that word of the node's compact child pair (the node buffer's last third,
// `layout::Node`), the only write of it: both values in steps of the body's pair grid
// (`pair_grid` in shared/common.wgsl, from the body's box that `vertex_normals` reduced), a
// minimum rounded down and a maximum up, the left child's (the node's child word, from the
// hierarchy, names it) in the high half. So each step of a walk reads both children's boxes,
// each holding its child's, and both children's words that `hierarchy` wrote, from one 32-byte
// record. The invocation of the body's first leaf stores the grid in the body's last pair node
// (which no pair takes: `stored_pair_grid` in shared/bvh.wgsl).
// Where the tuning passes fans (`Tuning::fan_walks`), the same hand-over gives each internal
// node of a body with BODY_FANS its fan word (`layout::TRIANGLE_WORDS`): the lowest packed vertex
// that every triangle under it uses, NONE where none does (a walk that ignores that vertex may
// pass the node: `passes_fan` in shared/bvh.wgsl). A carrier's seventh key names a set of
// vertices as its leaf's triangle (body-local, plus one, so never 0; in 29 bits: a body with
// BODY_FANS has fewer than `layout::FAN_MAX_TRIANGLES` triangles) and a mask of that
// triangle's corners: the corners every triangle of the subtree it comes from uses. The second
// carrier at a node reads the first's word, keeps the corners of its own mask that the other
// triangle's masked corners hold (the subtree's common vertices: two sets of corners, each
// common to its child's triangles), stores the node's fan word (the only write of it) and
// carries its own leaf with the new mask, empty or not, so that every internal node's word is
// written. The triangles' vertices it reads are the packing's, written before the frame.
// ITEMS leaves per invocation of one body (shared/tiles.wgsl).
// On lavapipe the six atomicMax a node are about half of this stage (the same hand-over with an
// atomic load and store in their place, racy, took `resting-pile`'s fit 3.5 -> 1.8 ms). Fewer of
// them, by fitting each invocation's 16 consecutive leaves' subtrees on their own with plain
// stores (atomics only at the nodes that reach past them), was slower there (`resting-pile`
// 3.1-3.9 -> 5.7-6.6 ms, `mesh-scaling` 159k 14.4-15.5 -> 18.0-21.3, three variants; not
// explained: carrying at the end, all lanes together, did not help). Nor did giving each
// invocation ITEMS consecutive leaves (so that the lanes of a SIMD group climb alike, the
// siblings of a lane's leaves being its own): `resting-pile` 5.0-5.1 -> 6.1 ms, `eight-sheets`
// 10.7-11.2 -> 10.1-10.4, `mesh-scaling` 159k 20.5-20.6 -> 19.5-20.1 (2 runs alternated).
// CPU twin: `raycontact::internals::cpu::fit` (the boxes) and `cpu::fit_fans` (the fan words).
//!include shared/common.wgsl
//!include shared/tiles.wgsl

@group(0) @binding(0) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(1) var<storage, read> tile_body: array<u32>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read> tri_boxes: array<TriBox>;
@group(0) @binding(4) var<storage, read> parents: array<u32>;
@group(0) @binding(5) var<storage, read_write> node_words: array<u32>;
@group(0) @binding(6) var<storage, read_write> fit_keys: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> triangles: array<u32>;
@group(0) @binding(8) var<uniform> params: FrameParams;

// Word of a Node (8 words) holding key k (0..2: min x y z, 3..5: max x y z); its child link.
fn box_word(k: u32) -> u32 {
    return k + k / 3u;
}
const W_CHILD: u32 = 3u;
// Words of `fit_keys` per internal node: the six box keys, then the fan set.
const FIT_WORDS: u32 = 7u;
const FAN_KEY: u32 = 6u;

// The box component that key `k` (0..2: a minimum's complemented key, 3..5: a maximum's) holds.
fn key_value(k: u32, key: u32) -> f32 {
    if k < 3u {
        return key_to_float(~key);
    }
    return key_to_float(key);
}

// The packed vertices of body-local triangle `tri` of a body at `tri_offset`.
fn corners(tri_offset: u32, tri: u32) -> vec3<u32> {
    let g = 3u * (tri_offset + tri);
    return vec3<u32>(triangles[g], triangles[g + 1u], triangles[g + 2u]);
}

// The corners of `mask` of a triangle of vertices `own` that are corners of `omask` of one of
// vertices `other`.
fn common_corners(own: vec3<u32>, mask: u32, other: vec3<u32>, omask: u32) -> u32 {
    var kept = 0u;
    for (var c = 0u; c < 3u; c += 1u) {
        for (var o = 0u; o < 3u; o += 1u) {
            if (omask & (1u << o)) != 0u && other[o] == own[c] {
                kept |= 1u << c;
            }
        }
    }
    return kept & mask;
}

// The lowest of the vertices `own` at the corners `mask`, NONE for an empty mask.
fn lowest_corner(own: vec3<u32>, mask: u32) -> u32 {
    var low = NONE;
    for (var c = 0u; c < 3u; c += 1u) {
        if (mask & (1u << c)) != 0u {
            low = min(low, own[c]);
        }
    }
    return low;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = tile_of(wid);
    if tile.index == NONE {
        return;
    }
    let bi = tile.body_index;
    let body = tile.body;
    let n = body_state[bi].leaf_count;
    // The body's pair grid (`pair_grid`), where the tuning keeps child pairs.
    var grid = ONE_LEAF_GRID;
    if CHILD_PAIRS {
        grid = pair_grid(body_min(body_state[bi]), body_max(body_state[bi]));
    }
    for (var it = 0u; it < tile_items(tile, lid, n); it += 1u) {
        let j = tile.base + it * WG_SIZE + lid;
        let leaf = body.node_offset + n - 1u + j;
        let tri = node_words[leaf * 8u + W_CHILD] & ~LEAF_BIT;
        let b = tri_boxes[body.tri_offset + tri];
        var key: array<u32, 7>;
        for (var d = 0u; d < 3u; d += 1u) {
            node_words[leaf * 8u + box_word(d)] = bitcast<u32>(b.min[d]);
            node_words[leaf * 8u + box_word(d + 3u)] = bitcast<u32>(b.max[d]);
            key[d] = ~float_to_key(b.min[d]);
            key[d + 3u] = float_to_key(b.max[d]);
        }
        // The fan set: this leaf's triangle (plus one) and the mask of its three corners.
        key[FAN_KEY] = ((tri + 1u) << 3u) | 7u;
        // Bit k: key k is still carried (the fan set only for a body with BODY_FANS, where the
        // tuning passes fans: `Tuning::fan_walks`).
        let with_fans = FAN_WALKS && (body.flags & BODY_FANS) != 0u;
        var carried = select(0x3fu, 0x7fu, with_fans);
        var own = vec3<u32>(NONE);
        if with_fans {
            own = corners(body.tri_offset, tri);
        }
        var p = parents[leaf];
        let fans = fan_words(params.tri_count) + body.tri_offset;
        // The node the carrier comes from (body-local), the first word of the child pairs and
        // their grid.
        var came = n - 1u + j;
        let pairs = arrayLength(&node_words) / 24u * 16u + body.tri_offset * 8u;
        // The grid, in the body's last pair node, for the walks (`stored_pair_grid`): by the
        // first leaf's invocation.
        if CHILD_PAIRS && j == 0u {
            let at = pairs + 8u * (body.tri_count - 1u);
            for (var d = 0u; d < 3u; d += 1u) {
                node_words[at + d] = bitcast<u32>(grid.origin[d]);
                node_words[at + 4u + d] = 0u;
            }
            node_words[at + W_CHILD] = bitcast<u32>(grid.step);
            node_words[at + 7u] = NONE;
        }
        while p != NONE && carried != 0u {
            // Internal node p (body-local, p < n - 1): its keys are words 7 * (tri_offset + p) ...
            let words = FIT_WORDS * (body.tri_offset + p);
            let node = body.node_offset + p;
            // p's child pair, and whether the carrier comes from its left child.
            let pair = pairs + 8u * p;
            let from_left = !CHILD_PAIRS || node_words[node * 8u + W_CHILD] == came;
            var still = 0u;
            if FAN_WALKS && (carried & (1u << FAN_KEY)) != 0u {
                let other = atomicMax(&fit_keys[words + FAN_KEY], key[FAN_KEY]);
                if other != 0u {
                    let them = corners(body.tri_offset, (other >> 3u) - 1u);
                    let mask = common_corners(own, key[FAN_KEY] & 7u, them, other & 7u);
                    key[FAN_KEY] = ((tri + 1u) << 3u) | mask;
                    triangles[fans + p] = lowest_corner(own, mask);
                    still |= 1u << FAN_KEY;
                }
            }
            for (var k = 0u; k < 6u; k += 1u) {
                if (carried & (1u << k)) != 0u {
                    let other = atomicMax(&fit_keys[words + k], key[k]);
                    if other != 0u {
                        // Both children's values of this word, into p's child pair, and
                        // their maximum, into p's box.
                        if CHILD_PAIRS {
                            let d = k % 3u;
                            let up = k >= 3u;
                            let own_q = pair_steps(grid, d, key_value(k, key[k]), up);
                            let other_q = pair_steps(grid, d, key_value(k, other), up);
                            node_words[pair + box_word(k)] =
                                select(pair_word(other_q, own_q), pair_word(own_q, other_q), from_left);
                        }
                        key[k] = max(key[k], other);
                        still |= 1u << k;
                        node_words[node * 8u + box_word(k)] = bitcast<u32>(key_value(k, key[k]));
                    }
                }
            }
            carried = still;
            came = p;
            p = parents[node];
        }
    }
}
