// Area-weighted vertex normals: the normalised sum of the unnormalised face normals
// (cross(b - a, c - a)) of the triangles incident to each vertex, in CSR order (`face_sum`,
// shared/incidence.wgsl, the incidence in the triangle buffer's regions). And each body's
// box over its non-degenerate triangles, the box the Morton codes need: the box of the vertices
// that belong to at least one non-degenerate triangle (the same set of coordinates as the
// triangles' corners, so the same box), reduced as ordered keys with atomicMax (exact), per
// workgroup first. The per-body reduction is why it lives here: the next kernel (`morton`)
// needs the finished box, and only a dispatch boundary orders its workgroups after every
// workgroup of this one.
// One thread per vertex of all bodies, taken in each body's ray order (`vertex_order`: a Morton
// order of the body's vertices, so that neighbouring invocations read neighbouring triangles
// whatever the mesh's own vertex order): reads the positions region of the vertex buffer, writes
// its normals region (shared/vertices.wgsl). A workgroup's vertices span consecutive bodies:
// those of its first two bodies are reduced in workgroup memory, any others (bodies of fewer
// than WG_SIZE vertices in between) go straight to the body's keys. A body marked BODY_KEEP
// this frame is skipped: its normals and box are last frame's (its keys are not cleared).
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

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let first = linear_group(wid) * WG_SIZE;
    // Slot `first + lid` of the vertex order holds vertex v of the same body.
    let slot = first + lid;
    if lid < 12u {
        atomicStore(&wg_keys[lid], 0u);
    }
    workgroupBarrier();
    // The workgroup's first body (the same for every invocation).
    let b0 = body_of_vertex(min(first, max(params.vertex_count, 1u) - 1u));
    // The vertex's body (the workgroup's first unless the slot lies past its end).
    var body = b0;
    if slot < params.vertex_count && slot >= bodies[b0].vertex_offset + bodies[b0].vertex_count {
        body = body_of_vertex(slot);
    }
    // A body marked BODY_KEEP keeps its normals and box.
    if slot < params.vertex_count && (bodies[body].flags & BODY_KEEP) == 0u {
        let v = vertex_order[slot];
        let sum = face_sum(v, true);
        let n = sum.normal;
        let live = sum.live;
        let o = 3u * (VERTEX_NORMALS * params.vertex_count + v);
        vertices[o] = n.x;
        vertices[o + 1u] = n.y;
        vertices[o + 2u] = n.z;
        if live {
            let p = sum.position;
            let k = body - b0;
            for (var d = 0u; d < 3u; d += 1u) {
                let lo = ~float_to_key(p[d]);
                let hi = float_to_key(p[d]);
                if k < 2u {
                    atomicMax(&wg_keys[k * 6u + d], lo);
                    atomicMax(&wg_keys[k * 6u + 3u + d], hi);
                } else {
                    atomicMax(&body_state[body].min_key[d], lo);
                    atomicMax(&body_state[body].max_key[d], hi);
                }
            }
        }
    }
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
