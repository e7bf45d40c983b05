// Which body a packed vertex belongs to. A kernel that includes this declares
// `bodies: array<BodyGpu>` and `params` with the body count in `params.body_count`.

// The packed body of packed vertex v: the last body whose vertices start at or before v.
fn body_of_vertex(v: u32) -> u32 {
    var lo = 0u;
    var hi = params.body_count;
    while hi - lo > 1u {
        let mid = (lo + hi) / 2u;
        if bodies[mid].vertex_offset <= v {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}
