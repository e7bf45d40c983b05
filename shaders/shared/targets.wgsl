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

// One step of the stackless depth-first walk (the escape links of `layout::Node`): the node
// after `node` once its box was tested (`entered`: the ray segment enters it) and, for a leaf,
// its triangle tested. Internal nodes that the ray enters lead to their first child; every
// other node to its escape link, NONE at the end of the walk.
fn next_node(nd: Node, entered: bool) -> u32 {
    if entered && (nd.child & LEAF_BIT) == 0u {
        return nd.child;
    }
    return nd.escape;
}
