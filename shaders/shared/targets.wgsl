// The bodies a ray query tests, and the stackless walk of one body's BVH that the any-hit and
// all-hits queries share. A kernel that includes this declares `targets: array<QueryTarget>`,
// `body_state: array<BodyStateRead>` and `nodes: array<Node>`, and includes shared/common.wgsl,
// shared/ray.wgsl and shared/bvh.wgsl.

// A body of the query: a copy of its BodyGpu record and its packed index (for its
// BodyStateRead). Mirrors `layout::QueryTarget`.
struct QueryTarget {
    body: BodyGpu,
    index: u32,
    pad: u32,
}

// Leaves of target k's BVH this frame (0: it has nothing to hit).
fn target_leaves(k: u32) -> u32 {
    return body_state[targets[k].index].leaf_count;
}
