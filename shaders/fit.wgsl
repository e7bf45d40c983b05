// Bottom-up box fitting: one invocation per leaf stores the leaf's triangle box, then climbs the
// parent links; at each internal node the first arrival stops and the second (which sees the
// sibling's box) stores the union and goes on. Node words are accessed as atomics so that boxes
// written by one workgroup are seen by another. The right child of an internal node is the escape
// link of its left child. CPU twin: `raycontact::internals::cpu::fit`.
//!include shared/common.wgsl
//!include shared/tiles.wgsl

@group(0) @binding(0) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(1) var<storage, read> tile_body: array<u32>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read> tri_boxes: array<TriBox>;
@group(0) @binding(4) var<storage, read> parents: array<u32>;
@group(0) @binding(5) var<storage, read_write> node_words: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> visits: array<atomic<u32>>;
@group(0) @binding(7) var<uniform> params: FrameParams;

// Word offsets inside a Node (8 words).
const W_MIN: u32 = 0u;
const W_CHILD: u32 = 3u;
const W_MAX: u32 = 4u;
const W_ESCAPE: u32 = 7u;

fn store_box(node: u32, lo: vec3<f32>, hi: vec3<f32>) {
    let w = node * 8u;
    atomicStore(&node_words[w + W_MIN], bitcast<u32>(lo.x));
    atomicStore(&node_words[w + W_MIN + 1u], bitcast<u32>(lo.y));
    atomicStore(&node_words[w + W_MIN + 2u], bitcast<u32>(lo.z));
    atomicStore(&node_words[w + W_MAX], bitcast<u32>(hi.x));
    atomicStore(&node_words[w + W_MAX + 1u], bitcast<u32>(hi.y));
    atomicStore(&node_words[w + W_MAX + 2u], bitcast<u32>(hi.z));
}

fn load_min(node: u32) -> vec3<f32> {
    let w = node * 8u + W_MIN;
    return vec3<f32>(
        bitcast<f32>(atomicLoad(&node_words[w])),
        bitcast<f32>(atomicLoad(&node_words[w + 1u])),
        bitcast<f32>(atomicLoad(&node_words[w + 2u])),
    );
}

fn load_max(node: u32) -> vec3<f32> {
    let w = node * 8u + W_MAX;
    return vec3<f32>(
        bitcast<f32>(atomicLoad(&node_words[w])),
        bitcast<f32>(atomicLoad(&node_words[w + 1u])),
        bitcast<f32>(atomicLoad(&node_words[w + 2u])),
    );
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
    let base = tile.base;
    for (var k = 0u; k < ITEMS; k += 1u) {
        let j = base + k * WG_SIZE + lid;
        if j >= n {
            continue;
        }
        let leaf = body.node_offset + n - 1u + j;
        let tri = atomicLoad(&node_words[leaf * 8u + W_CHILD]) & ~LEAF_BIT;
        let b = tri_boxes[body.tri_offset + tri];
        store_box(leaf, b.min, b.max);
        var p = parents[leaf];
        while p != NONE {
            let node = body.node_offset + p;
            if atomicAdd(&visits[node], 1u) == 0u {
                break;
            }
            let left = atomicLoad(&node_words[node * 8u + W_CHILD]);
            let right = atomicLoad(&node_words[(body.node_offset + left) * 8u + W_ESCAPE]);
            let l = body.node_offset + left;
            let r = body.node_offset + right;
            store_box(node, min(load_min(l), load_min(r)), max(load_max(l), load_max(r)));
            p = parents[node];
        }
    }
}
