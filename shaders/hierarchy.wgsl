// Binary radix tree over the sorted Morton codes of each body (Karras 2012), with the
// escape links of the stackless depth-first traversal (Apetrei 2014's ropes).
// Node numbering, body-local: internal nodes 0 .. n-2 (root = 0), leaves n-1 .. 2n-2 in sorted
// order (leaf j = n - 1 + j); n = the body's leaf count. With n = 1 the root is leaf 0.
// Where the tuning keeps child pairs (`Tuning::child_pairs`), internal node i also gets the
// words of its compact child pair (the node buffer's last third, `layout::Node`): each child's
// index, or LEAF_BIT | triangle for a leaf, the left child's in `child`, the right's in `escape`.
// One workgroup per tile of one body; sorted index i builds leaf i and, when i < n - 1,
// internal node i. Boxes are filled in by `fit`. CPU twin: `raycontact::internals::cpu::hierarchy`.
//!include shared/common.wgsl
//!include shared/tiles.wgsl

@group(0) @binding(0) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(1) var<storage, read> tile_body: array<u32>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read> keys: array<u32>;
@group(0) @binding(4) var<storage, read> values: array<u32>;
@group(0) @binding(5) var<storage, read_write> nodes: array<Node>;
@group(0) @binding(6) var<storage, read_write> parents: array<u32>;
@group(0) @binding(7) var<uniform> params: FrameParams;

var<private> key_base: u32;
var<private> leaf_count: i32;

// Length of the common prefix of sorted keys i and j (ties broken by index); -1 out of range.
// `ki` is key i, read once by the caller for all of its comparisons with i: llvmpipe runs every
// buffer read as a loop over its SIMD lanes, so the reads are most of this kernel's cost there.
fn delta(i: i32, ki: u32, j: i32) -> i32 {
    if j < 0 || j >= leaf_count {
        return -1;
    }
    let kj = key(j);
    if ki == kj {
        return 32 + i32(countLeadingZeros(u32(i) ^ u32(j)));
    }
    return i32(countLeadingZeros(ki ^ kj));
}

// Sorted key k.
fn key(k: i32) -> u32 {
    return keys[key_base + u32(k)];
}

// +1 when internal node k's range starts at k (it is a right child), -1 when it ends at k; `kk`
// is key k.
fn direction(k: i32, kk: u32) -> i32 {
    if delta(k, kk, k + 1) > delta(k, kk, k - 1) {
        return 1;
    }
    return -1;
}

// The word of child `c` (body-local) in its parent's child pair (`layout::Node`: the node
// buffer's last third): an internal child's index, a leaf's LEAF_BIT | triangle, as the leaf's
// own node holds it.
fn child_word(c: u32, tri_offset: u32) -> u32 {
    let internal = u32(leaf_count - 1);
    if c < internal {
        return c;
    }
    return LEAF_BIT | (values[key_base + c - internal] - tri_offset);
}

// The node that follows a subtree whose last leaf is `last` in depth-first order.
fn escape_after(last: i32) -> u32 {
    if last >= leaf_count - 1 {
        return NONE;
    }
    let k = last + 1;
    if k <= leaf_count - 2 && direction(k, key(k)) == 1 {
        return u32(k);
    }
    return u32(leaf_count - 1 + k);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = tile_of(wid);
    if tile.index == NONE {
        return;
    }
    let bi = tile.body_index;
    let body = tile.body;
    key_base = body.tri_offset;
    leaf_count = i32(body_state[bi].leaf_count);
    let n = leaf_count;
    let base = tile.base;
    for (var k = 0u; k < tile_items(tile, lid, u32(n)); k += 1u) {
        let iu = base + k * WG_SIZE + lid;
        let i = i32(iu);
        // Leaf i.
        let leaf = body.node_offset + u32(n - 1 + i);
        nodes[leaf].child = LEAF_BIT | (values[key_base + iu] - body.tri_offset);
        nodes[leaf].escape = escape_after(i);
        if n == 1 {
            parents[leaf] = NONE;
        }
        if i >= n - 1 {
            continue;
        }
        // Internal node i: find its range [min(i, j), max(i, j)] and split g.
        let ki = key(i);
        let d = direction(i, ki);
        let dmin = delta(i, ki, i - d);
        var lmax = 2;
        while delta(i, ki, i + lmax * d) > dmin {
            lmax *= 2;
        }
        var l = 0;
        for (var t = lmax / 2; t >= 1; t /= 2) {
            if delta(i, ki, i + (l + t) * d) > dmin {
                l += t;
            }
        }
        let j = i + l * d;
        let dnode = delta(i, ki, j);
        var s = 0;
        var t = l;
        loop {
            t = (t + 1) / 2;
            if delta(i, ki, i + (s + t) * d) > dnode {
                s += t;
            }
            if t <= 1 {
                break;
            }
        }
        let g = i + s * d + min(d, 0);
        let first = min(i, j);
        let last = max(i, j);
        var left = u32(g);
        if first == g {
            left = u32(n - 1 + g);
        }
        var right = u32(g + 1);
        if last == g + 1 {
            right = u32(n + g);
        }
        let node = body.node_offset + iu;
        nodes[node].child = left;
        nodes[node].escape = escape_after(last);
        // Its child pair's words, where the tuning keeps child pairs (`fit` writes their boxes).
        if CHILD_PAIRS {
            let pair = arrayLength(&nodes) / 3u * 2u + body.tri_offset + iu;
            nodes[pair].child = child_word(left, body.tri_offset);
            nodes[pair].escape = child_word(right, body.tri_offset);
        }
        parents[body.node_offset + left] = iu;
        parents[body.node_offset + right] = iu;
        if i == 0 {
            parents[node] = NONE;
        }
    }
}
