// Area-weighted vertex normals: the normalised sum of the unnormalised face normals
// (cross(b - a, c - a)) of the triangles incident to each vertex, in CSR order (`face_sum`,
// shared/incidence.wgsl, the incidence in the triangle buffer's regions). And each body's
// box over its non-degenerate triangles, the box the Morton codes need: the box of the vertices
// that belong to at least one non-degenerate triangle (the same set of coordinates as the
// triangles' corners, so the same box), reduced as ordered keys with atomicMax (exact), per
// workgroup first. The per-body reduction is why it lives here: the next kernel (`morton`)
// needs the finished box, and only a dispatch boundary orders its workgroups after every
// workgroup of this one.
// ITEMS vertices per invocation (`Tuning::items`: 16 on a software adapter, 1 on a GPU), of all
// bodies, taken in each body's ray order (`vertex_order`: a Morton order of the body's vertices,
// so that neighbouring invocations read neighbouring triangles whatever the mesh's own vertex
// order): element k of invocation `lid` is slot `first + k * WG_SIZE + lid` of the workgroup's
// WG_SIZE * ITEMS. Reads the positions region of the vertex buffer, writes its normals region
// (shared/vertices.wgsl). A workgroup's vertices span consecutive bodies. An invocation keeps
// the keys of its vertices of one body in registers and adds them when its next vertex is of
// another body, and at its end: to the workgroup's keys for the workgroup's first two bodies, to
// the body's own for any others (bodies of fewer vertices than the workgroup has in between).
// So a software adapter, which runs every atomic operation lane by lane, runs about one set of
// six per invocation instead of one per vertex: the normals stage took 3.4-3.5 -> 3.0 ms on
// resting-pile, 3.9 -> 3.1 on cloth-layers and 10.3-10.6 -> 7.9-8.2 on mesh-scaling's 159k
// triangles (lavapipe, `raycontact-bench --implementations gpu --no-parry`, 3 runs
// alternated). A body marked BODY_KEEP this frame is skipped: its normals and box are last
// frame's (its keys are not cleared).
// CPU twin: `raycontact::internals::cpu::vertex_normals` (normals) and
// `raycontact::internals::cpu::body_boxes` (boxes).
//!include shared/common.wgsl
//!include shared/bodies.wgsl
//!include shared/vertices.wgsl
//!include shared/triangles.wgsl
//!include shared/incidence.wgsl

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<storage, read_write> vertices: array<f32>;
@group(0) @binding(2) var<storage, read> triangles: array<u32>;
@group(0) @binding(3) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(4) var<storage, read_write> body_state: array<BodyState>;
@group(0) @binding(5) var<storage, read> vertex_order: array<u32>;

fn triangle_count() -> u32 {
    return params.tri_count;
}

// Keys of the workgroup's first two bodies: [slot * 6 + axis] the complemented minimum key,
// [slot * 6 + 3 + axis] the maximum key; 0 = nothing yet.
var<workgroup> wg_keys: array<atomic<u32>, 12>;

// Adds the keys an invocation gathered for body `body` (`k`: its index from the workgroup's
// first body) to the workgroup's keys (its first two bodies) or the body's. Nothing when it
// gathered none (a live vertex sets all six keys, none of them 0).
fn flush(body: u32, k: u32, lo: vec3<u32>, hi: vec3<u32>) {
    if hi.x == 0u {
        return;
    }
    for (var d = 0u; d < 3u; d += 1u) {
        if k < 2u {
            atomicMax(&wg_keys[k * 6u + d], lo[d]);
            atomicMax(&wg_keys[k * 6u + 3u + d], hi[d]);
        } else {
            atomicMax(&body_state[body].min_key[d], lo[d]);
            atomicMax(&body_state[body].max_key[d], hi[d]);
        }
    }
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let first = linear_group(wid) * WG_SIZE * ITEMS;
    if lid < 12u {
        atomicStore(&wg_keys[lid], 0u);
    }
    workgroupBarrier();
    // The workgroup's first body (the same for every invocation).
    let b0 = body_of_vertex(min(first, max(params.vertex_count, 1u) - 1u));
    // The keys gathered for body `body`, not yet added.
    var body = b0;
    var lo = vec3<u32>(0u);
    var hi = vec3<u32>(0u);
    for (var it = 0u; it < ITEMS; it += 1u) {
        // Slot `slot` of the vertex order holds vertex v of the same body.
        let slot = first + it * WG_SIZE + lid;
        if slot >= params.vertex_count {
            break;
        }
        if slot >= bodies[body].vertex_offset + bodies[body].vertex_count {
            flush(body, body - b0, lo, hi);
            lo = vec3<u32>(0u);
            hi = vec3<u32>(0u);
            body = body_of_vertex(slot);
        }
        // A body marked BODY_KEEP keeps its normals and box.
        if (bodies[body].flags & BODY_KEEP) != 0u {
            continue;
        }
        let v = vertex_order[slot];
        let sum = face_sum(v, true);
        let n = sum.normal;
        let o = 3u * (VERTEX_NORMALS * params.vertex_count + v);
        vertices[o] = n.x;
        vertices[o + 1u] = n.y;
        vertices[o + 2u] = n.z;
        if sum.live {
            let p = sum.position;
            for (var d = 0u; d < 3u; d += 1u) {
                lo[d] = max(lo[d], ~float_to_key(p[d]));
                hi[d] = max(hi[d], float_to_key(p[d]));
            }
        }
    }
    flush(body, body - b0, lo, hi);
    workgroupBarrier();
    if lid < 12u {
        let key = atomicLoad(&wg_keys[lid]);
        let body = b0 + lid / 6u;
        let d = lid % 3u;
        if key != 0u && body < params.body_count {
            if lid % 6u < 3u {
                atomicMax(&body_state[body].min_key[d], key);
            } else {
                atomicMax(&body_state[body].max_key[d], key);
            }
        }
    }
}
