//! CPU twins of the kernels: each function computes what the kernel of the same name computes,
//! over the same packed layout, in plain Rust (rayon where the work is parallel). They are the
//! references of the GPU tests and, through [`Scene::new_cpu`](crate::Scene::new_cpu), the CPU
//! backend.
//!
//! Exactness: integer stages (Morton codes, sort, hierarchy) and box fitting (min/max) equal the
//! GPU bit for bit; normals agree within 1e-5; ray hits agree on the triangle and within 1e-5
//! relative on `t` (the GPU divides with up to 2.5 ulp error).

use glam::{UVec3, Vec3};
use rayon::prelude::*;

use crate::layout::MAX_WALK_STEPS;
use crate::layout::{
    BODY_CLOTH, BodyGpu, BodyPair, BodyState, ContactGpu, DEGENERATE_KEY, DEGENERATE_SIN2, LEAF_BIT, NONE,
    Node, ONE_THIRD, Ray, RayHit, SELF_CLOTH, SELF_HIT_GAP, SELF_VOLUMETRIC, SHORT_STACK, SortSegment,
    TriBox, WALK_FALLBACK_BVH, WALK_HIT, WALK_LOOP, WALK_NO_START, WALK_RANGE, WalkCounts, contact_flags,
    float_to_key,
};
use crate::packing::Packing;

pub use crate::frame::{FrameData, used_nodes};

fn tri_vertices(positions: &[Vec3], triangles: &[u32], t: usize) -> (Vec3, Vec3, Vec3) {
    (
        positions[triangles[3 * t] as usize],
        positions[triangles[3 * t + 1] as usize],
        positions[triangles[3 * t + 2] as usize],
    )
}

/// Twin of `vertex_normals.wgsl`: normalised sum of `cross(b - a, c - a)` over the incident
/// triangles in CSR order.
pub fn vertex_normals(
    positions: &[Vec3],
    triangles: &[u32],
    vertex_tri_offsets: &[u32],
    vertex_tris: &[u32],
    normals: &mut [Vec3],
) {
    normals.par_iter_mut().enumerate().with_min_len(1024).for_each(|(v, out)| {
        let mut n = Vec3::ZERO;
        for &t in &vertex_tris[vertex_tri_offsets[v] as usize..vertex_tri_offsets[v + 1] as usize] {
            let (a, b, c) = tri_vertices(positions, triangles, t as usize);
            n += (b - a).cross(c - a);
        }
        let len = n.length();
        *out = if len > 0.0 { n / len } else { n };
    });
}

/// Box of a triangle and whether it is degenerate (as `triangle_bounds.wgsl` decides).
pub fn triangle_box(a: Vec3, b: Vec3, c: Vec3) -> TriBox {
    let min = a.min(b).min(c);
    let max = a.max(b).max(c);
    let e1 = b - a;
    let e2 = c - a;
    let n = e1.cross(e2);
    let n2 = n.dot(n);
    let l2 = e1.dot(e1) * e2.dot(e2);
    let finite = min.is_finite() && max.is_finite();
    // Not `n2 <= ...`: a NaN must count as degenerate.
    let degenerate = n2.partial_cmp(&(DEGENERATE_SIN2 * l2)) != Some(std::cmp::Ordering::Greater) || !finite;
    TriBox { min, flags: degenerate as u32, max, pad: 0 }
}

/// Twin of `triangle_bounds.wgsl`: triangle boxes, degenerate flags and body boxes (over the
/// non-degenerate triangles, as ordered keys).
pub fn triangle_bounds(
    packing: &Packing,
    positions: &[Vec3],
    tri_boxes: &mut [TriBox],
    body_state: &mut [BodyState],
) {
    tri_boxes.par_iter_mut().enumerate().with_min_len(1024).for_each(|(t, out)| {
        let (a, b, c) = tri_vertices(positions, &packing.triangles, t);
        *out = triangle_box(a, b, c);
    });
    for (body, state) in packing.bodies.iter().zip(body_state.iter_mut()) {
        let range = body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize;
        let (lo, hi) = tri_boxes[range]
            .par_iter()
            .filter(|b| b.flags & 1 == 0)
            .map(|b| (b.min.to_array().map(|x| !float_to_key(x)), b.max.to_array().map(float_to_key)))
            .reduce(
                || ([0; 3], [0; 3]),
                |(l0, h0), (l1, h1)| {
                    (std::array::from_fn(|d| l0[d].max(l1[d])), std::array::from_fn(|d| h0[d].max(h1[d])))
                },
            );
        state.min_key = lo;
        state.max_key = hi;
    }
}

/// Spreads the low 10 bits of `v` two bits apart.
pub fn expand_bits(v: u32) -> u32 {
    let mut x = v & 0x3ff;
    x = (x | (x << 16)) & 0x0300_00ff;
    x = (x | (x << 8)) & 0x0300_f00f;
    x = (x | (x << 4)) & 0x030c_30c3;
    x = (x | (x << 2)) & 0x0924_9249;
    x
}

/// `1024 / s / 3` where `s` is the smallest power of two at or above `extent`.
pub fn quantisation_scale(extent: f32) -> f32 {
    let bits = extent.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32;
    if bits & 0x7f_ffff != 0 {
        e += 1;
    }
    let se = (264 - e).clamp(1, 254);
    f32::from_bits((se as u32) << 23) * ONE_THIRD
}

/// Morton code of a triangle in a body box (lower corner `lo`, scale from
/// [`quantisation_scale`]), exactly as `morton.wgsl` computes it.
pub fn morton_code(a: Vec3, b: Vec3, c: Vec3, lo: Vec3, scale: f32) -> u32 {
    let rel = ((a - lo) + (b - lo)) + (c - lo);
    let q = (rel * scale).min(Vec3::splat(1023.0)).max(Vec3::ZERO);
    let qi = UVec3::new(q.x as u32, q.y as u32, q.z as u32);
    (expand_bits(qi.x) << 2) | (expand_bits(qi.y) << 1) | expand_bits(qi.z)
}

/// Twin of `morton.wgsl`: keys (Morton code, or [`DEGENERATE_KEY`]) and values (packed
/// triangle index) in packed triangle order, and each body's leaf and degenerate counts.
pub fn morton(
    packing: &Packing,
    positions: &[Vec3],
    tri_boxes: &[TriBox],
    body_state: &mut [BodyState],
    keys: &mut [u32],
    values: &mut [u32],
) {
    for (body, state) in packing.bodies.iter().zip(body_state.iter_mut()) {
        let range = body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize;
        let (lo, hi) = state.bounds_keys();
        let scale = quantisation_scale((hi - lo).max_element());
        let leaves = keys[range.clone()]
            .par_iter_mut()
            .zip(values[range.clone()].par_iter_mut())
            .enumerate()
            .with_min_len(1024)
            .map(|(i, (key, value))| {
                let t = range.start + i;
                *value = t as u32;
                if tri_boxes[t].flags & 1 != 0 {
                    *key = DEGENERATE_KEY;
                    0u32
                } else {
                    let (a, b, c) = tri_vertices(positions, &packing.triangles, t);
                    *key = morton_code(a, b, c, lo, scale);
                    1
                }
            })
            .sum::<u32>();
        state.leaf_count = leaves;
        state.degenerate_count = body.tri_count - leaves;
    }
}

impl BodyState {
    /// The box as decoded from the keys, whether or not the body has leaves (the Morton kernel
    /// reads it so).
    pub(crate) fn bounds_keys(&self) -> (Vec3, Vec3) {
        use crate::layout::key_to_float;
        (
            Vec3::from_array(self.min_key.map(|k| key_to_float(!k))),
            Vec3::from_array(self.max_key.map(key_to_float)),
        )
    }
}

/// Twin of the radix sort (`radix_count`, `radix_scan`, `radix_scatter`): a stable sort of
/// (key, value) pairs by key within each segment, by LSD radix sort (8 bits a pass on the CPU;
/// any stable sort gives the same result). Segments are sorted in parallel.
pub fn radix_sort(segments: &[SortSegment], keys: &mut [u32], values: &mut [u32]) {
    let mut parts = Vec::with_capacity(segments.len());
    let (mut k_rest, mut v_rest) = (keys, values);
    let mut at = 0usize;
    for s in segments {
        let (_, k) = std::mem::take(&mut k_rest).split_at_mut(s.offset as usize - at);
        let (_, v) = std::mem::take(&mut v_rest).split_at_mut(s.offset as usize - at);
        let (k_seg, k_tail) = k.split_at_mut(s.count as usize);
        let (v_seg, v_tail) = v.split_at_mut(s.count as usize);
        parts.push((k_seg, v_seg));
        k_rest = k_tail;
        v_rest = v_tail;
        at = (s.offset + s.count) as usize;
    }
    parts.into_par_iter().for_each(|(k, v)| radix_sort_segment(k, v));
}

/// Stable LSD radix sort of one segment, 8 bits a pass, skipping passes whose digit is the same
/// for every key.
pub fn radix_sort_segment(keys: &mut [u32], values: &mut [u32]) {
    let n = keys.len();
    if n < 2 {
        return;
    }
    let mut counts = [[0usize; 256]; 4];
    for &k in keys.iter() {
        for (p, c) in counts.iter_mut().enumerate() {
            c[((k >> (8 * p)) & 0xff) as usize] += 1;
        }
    }
    let mut kb = vec![0u32; n];
    let mut vb = vec![0u32; n];
    let (mut src_k, mut src_v, mut dst_k, mut dst_v) = (keys, values, kb.as_mut_slice(), vb.as_mut_slice());
    let mut swapped = false;
    for (p, c) in counts.iter().enumerate() {
        if c.contains(&n) {
            continue;
        }
        let mut offs = [0usize; 256];
        let mut sum = 0;
        for d in 0..256 {
            offs[d] = sum;
            sum += c[d];
        }
        for i in 0..n {
            let k = src_k[i];
            let d = ((k >> (8 * p)) & 0xff) as usize;
            dst_k[offs[d]] = k;
            dst_v[offs[d]] = src_v[i];
            offs[d] += 1;
        }
        std::mem::swap(&mut src_k, &mut dst_k);
        std::mem::swap(&mut src_v, &mut dst_v);
        swapped = !swapped;
    }
    if swapped {
        // The sorted data is in the scratch buffers: copy it back.
        dst_k.copy_from_slice(src_k);
        dst_v.copy_from_slice(src_v);
    }
}

/// Length of the common prefix of sorted keys `i` and `j` (ties broken by index), -1 when `j`
/// is out of range; as in `hierarchy.wgsl`.
fn delta(keys: &[u32], n: i32, i: i32, j: i32) -> i32 {
    if j < 0 || j >= n {
        return -1;
    }
    let (ki, kj) = (keys[i as usize], keys[j as usize]);
    if ki == kj {
        32 + (i as u32 ^ j as u32).leading_zeros() as i32
    } else {
        (ki ^ kj).leading_zeros() as i32
    }
}

fn direction(keys: &[u32], n: i32, k: i32) -> i32 {
    if delta(keys, n, k, k + 1) > delta(keys, n, k, k - 1) { 1 } else { -1 }
}

fn escape_after(keys: &[u32], n: i32, last: i32) -> u32 {
    if last >= n - 1 {
        return NONE;
    }
    let k = last + 1;
    if k <= n - 2 && direction(keys, n, k) == 1 { k as u32 } else { (n - 1 + k) as u32 }
}

/// Internal node `i` of a Karras tree over `n` sorted keys: (first child, escape, last leaf).
fn internal_node(keys: &[u32], n: i32, i: i32) -> (u32, u32, u32, u32) {
    let d = direction(keys, n, i);
    let dmin = delta(keys, n, i, i - d);
    let mut lmax = 2;
    while delta(keys, n, i, i + lmax * d) > dmin {
        lmax *= 2;
    }
    let mut l = 0;
    let mut t = lmax / 2;
    while t >= 1 {
        if delta(keys, n, i, i + (l + t) * d) > dmin {
            l += t;
        }
        t /= 2;
    }
    let j = i + l * d;
    let dnode = delta(keys, n, i, j);
    let mut s = 0;
    let mut t = l;
    loop {
        t = (t + 1) / 2;
        if delta(keys, n, i, i + (s + t) * d) > dnode {
            s += t;
        }
        if t <= 1 {
            break;
        }
    }
    let g = i + s * d + d.min(0);
    let (first, last) = (i.min(j), i.max(j));
    let left = if first == g { (n - 1 + g) as u32 } else { g as u32 };
    let right = if last == g + 1 { (n + g) as u32 } else { (g + 1) as u32 };
    (left, right, escape_after(keys, n, last), last as u32)
}

/// Twin of `hierarchy.wgsl`: child and escape links and parents of every body's BVH (boxes are
/// left to [`fit`]).
pub fn hierarchy(
    packing: &Packing,
    body_state: &[BodyState],
    keys: &[u32],
    values: &[u32],
    nodes: &mut [Node],
    parents: &mut [u32],
) {
    for (body, state) in packing.bodies.iter().zip(body_state) {
        let n = state.leaf_count as i32;
        if n == 0 {
            continue;
        }
        let k = &keys[body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize];
        let v = &values[body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize];
        let off = body.node_offset as usize;
        let used = used_nodes(n as u32);
        let (internal, leaves) = nodes[off..off + used].split_at_mut(n as usize - 1);
        let links: Vec<(u32, u32)> = internal
            .par_iter_mut()
            .enumerate()
            .with_min_len(1024)
            .map(|(i, node)| {
                let (left, right, escape, _) = internal_node(k, n, i as i32);
                node.child = left;
                node.escape = escape;
                (left, right)
            })
            .collect();
        leaves.par_iter_mut().enumerate().with_min_len(1024).for_each(|(j, node)| {
            node.child = LEAF_BIT | (v[j] - body.tri_offset);
            node.escape = escape_after(k, n, j as i32);
        });
        let par = &mut parents[off..off + used];
        par[0] = NONE;
        for (i, (l, r)) in links.into_iter().enumerate() {
            par[l as usize] = i as u32;
            par[r as usize] = i as u32;
        }
    }
}

/// Twin of `fit.wgsl`: the box of every node, bottom-up (a leaf's box is its triangle's box; an
/// internal node's is the union of its children's). Exact, so equal to the GPU's.
pub fn fit(packing: &Packing, body_state: &[BodyState], tri_boxes: &[TriBox], nodes: &mut [Node]) {
    for (body, state) in packing.bodies.iter().zip(body_state) {
        let n = state.leaf_count;
        if n == 0 {
            continue;
        }
        let off = body.node_offset as usize;
        let tree = &mut nodes[off..off + used_nodes(n)];
        let boxes = &tri_boxes[body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize];
        let (internal, leaves) = tree.split_at_mut(n as usize - 1);
        leaves.par_iter_mut().with_min_len(1024).for_each(|leaf| {
            let b = boxes[(leaf.child & !LEAF_BIT) as usize];
            leaf.min = b.min;
            leaf.max = b.max;
        });
        if n > 1 {
            fit_node(internal, 0, 0, leaves, 0);
        }
    }
}

/// Fits internal node `node` and its subtree; returns its box. `window` holds the internal nodes
/// `base..` of the node's leaf range `[f, l]` (in a Karras tree the internal nodes of a subtree
/// have indices within its leaf range, so the two children's windows `[f, g]` and `[g + 1, l]`
/// are disjoint and are fitted in parallel near the root).
fn fit_node(window: &mut [Node], base: usize, node: usize, leaves: &[Node], depth: u32) -> (Vec3, Vec3) {
    let n_internal = leaves.len() - 1;
    let left = window[node - base].child as usize;
    let right = if left >= n_internal { leaves[left - n_internal].escape } else { window[left - base].escape }
        as usize;
    // First leaf of the right child (g + 1): an internal right child has index g + 1.
    let split = if right >= n_internal { right - n_internal } else { right };
    let (lw, rw) = window.split_at_mut(split - base);
    let sub = |w: &mut [Node], b: usize, c: usize| -> (Vec3, Vec3) {
        if c >= n_internal {
            let l = &leaves[c - n_internal];
            (l.min, l.max)
        } else {
            fit_node(w, b, c, leaves, depth + 1)
        }
    };
    let (lb, rb) = if depth < 8 {
        rayon::join(|| sub(lw, base, left), || sub(rw, split, right))
    } else {
        (sub(lw, base, left), sub(rw, split, right))
    };
    let (lo, hi) = (lb.0.min(rb.0), lb.1.max(rb.1));
    window[node - base].min = lo;
    window[node - base].max = hi;
    (lo, hi)
}

/// `edge_t` of `ray.wgsl`: the ray parameter where the ray crosses edge (p, q), from the edge
/// alone, with the ends in canonical (lexicographic) order.
fn edge_t(p3: Vec3, pxy: glam::Vec2, q3: Vec3, qxy: glam::Vec2, kz: usize, dz: f32) -> f32 {
    let less = |a: Vec3, b: Vec3| {
        if a.x != b.x {
            a.x < b.x
        } else if a.y != b.y {
            a.y < b.y
        } else {
            a.z < b.z
        }
    };
    let ((a3, axy), (b3, bxy)) = if less(q3, p3) { ((q3, qxy), (p3, pxy)) } else { ((p3, pxy), (q3, qxy)) };
    let e = bxy - axy;
    let s = (-axy.dot(e) / e.dot(e)).clamp(0.0, 1.0);
    (a3[kz] + s * (b3[kz] - a3[kz])) / dz
}

/// A triangle seen from a ray (`Sheared` in `shaders/shared/ray.wgsl`): the corners relative to
/// the origin, their sheared 2D coordinates (scaled by `dir[kz]`) and the edge functions
/// `(U, V, W)`.
#[derive(Clone, Copy, Debug)]
pub struct Sheared {
    /// `a - o`, `b - o`, `c - o`.
    pub p: [Vec3; 3],
    /// The sheared 2D coordinates of the three corners.
    pub xy: [glam::Vec2; 3],
    /// The edge functions: the barycentric weights of `a`, `b`, `c` times `U + V + W`.
    pub uvw: [f32; 3],
}

/// The first half of [`intersect_triangle`] (`shear` in `ray.wgsl`), also the walk's edge choice.
pub fn shear(o: Vec3, d: Vec3, k: [usize; 3], a: Vec3, b: Vec3, c: Vec3) -> Sheared {
    use glam::Vec2;
    let (pa, pb, pc) = (a - o, b - o, c - o);
    let (dx, dy, dz) = (d[k[0]], d[k[1]], d[k[2]]);
    let ax = pa[k[0]] * dz - dx * pa[k[2]];
    let ay = pa[k[1]] * dz - dy * pa[k[2]];
    let bx = pb[k[0]] * dz - dx * pb[k[2]];
    let by = pb[k[1]] * dz - dy * pb[k[2]];
    let cx = pc[k[0]] * dz - dx * pc[k[2]];
    let cy = pc[k[1]] * dz - dy * pc[k[2]];
    Sheared {
        p: [pa, pb, pc],
        xy: [Vec2::new(ax, ay), Vec2::new(bx, by), Vec2::new(cx, cy)],
        uvw: [cx * by - cy * bx, ax * cy - ay * cx, bx * ay - by * ax],
    }
}

/// Watertight ray-triangle test, exactly as `intersect_triangle` in `shaders/shared/ray.wgsl`:
/// `Some((t, u, v))` with `P = (1-u-v) a + u b + v c`. A ray through a shared edge or vertex
/// hits every incident triangle with the same `t`, computed from the edge or vertex alone.
#[allow(clippy::too_many_arguments)]
pub fn intersect_triangle(
    o: Vec3,
    d: Vec3,
    k: [usize; 3],
    tmin: f32,
    tmax: f32,
    a: Vec3,
    b: Vec3,
    c: Vec3,
) -> Option<(f32, f32, f32)> {
    let s = shear(o, d, k, a, b, c);
    let ([pa, pb, pc], [axy, bxy, cxy], [u, v, w]) = (s.p, s.xy, s.uvw);
    let dz = d[k[2]];
    if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
        return None;
    }
    let det = u + v + w;
    if det == 0.0 {
        return None;
    }
    let t = match (u == 0.0, v == 0.0, w == 0.0) {
        (true, true, _) => pc[k[2]] / dz,
        (true, _, true) => pb[k[2]] / dz,
        (_, true, true) => pa[k[2]] / dz,
        (true, _, _) => edge_t(pb, bxy, pc, cxy, k[2], dz),
        (_, true, _) => edge_t(pc, cxy, pa, axy, k[2], dz),
        (_, _, true) => edge_t(pa, axy, pb, bxy, k[2], dz),
        _ => (u * pa[k[2]] + v * pb[k[2]] + w * pc[k[2]]) / (det * dz),
    };
    if !(t >= tmin && t <= tmax) {
        return None;
    }
    Some((t, v / det, w / det))
}

/// Axis permutation of a ray (`ray_axes` in `ray.wgsl`): `kz` is the dominant axis.
pub fn ray_axes(d: Vec3) -> [usize; 3] {
    let a = d.abs();
    let kz = if a.x > a.y {
        if a.x > a.z { 0 } else { 2 }
    } else if a.y > a.z {
        1
    } else {
        2
    };
    let kx = (kz + 1) % 3;
    [kx, (kx + 1) % 3, kz]
}

/// `safe_inverse` of `ray.wgsl`.
pub fn safe_inverse(d: Vec3) -> Vec3 {
    let s = Vec3::select(d.abs().cmplt(Vec3::splat(1.0e-30)), Vec3::splat(1.0e-30), d);
    Vec3::ONE / s
}

/// `hit_box` of `ray.wgsl`: the slab test, widened by a relative 2e-6, with axes the ray is
/// parallel to decided by whether the origin is inside the slab.
pub fn hit_box(o: Vec3, d: Vec3, inv: Vec3, tmin: f32, tmax: f32, lo: Vec3, hi: Vec3) -> bool {
    box_entry(o, d, inv, tmin, tmax, lo, hi).is_some()
}

/// Twin of `raycast.wgsl` for one ray: closest hit through the stackless BVH of a body (its used
/// nodes `nodes`, body-local), counting nodes visited and triangles tested.
pub fn raycast_one(
    body: &BodyGpu,
    nodes: &[Node],
    positions: &[Vec3],
    triangles: &[u32],
    ray: &Ray,
) -> RayHit {
    closest_hit(body, nodes, positions, triangles, ray, NONE)
}

/// The CPU backend's ray casts: [`raycast`]'s results through [`closest_hit_ordered`].
pub fn raycast_ordered(
    packing: &Packing,
    frame: &FrameData,
    positions: &[Vec3],
    b: usize,
    rays: &[Ray],
) -> Vec<RayHit> {
    let body = &packing.bodies[b];
    let nodes = frame.body_nodes(packing, b);
    rays.par_iter()
        .with_min_len(64)
        .map(|r| closest_hit_ordered(body, nodes, positions, &packing.triangles, r, NONE))
        .collect()
}

/// Twin of `raycast.wgsl`: closest hits of a batch of rays against packed body `b`.
pub fn raycast(
    packing: &Packing,
    frame: &FrameData,
    positions: &[Vec3],
    b: usize,
    rays: &[Ray],
) -> Vec<RayHit> {
    let body = &packing.bodies[b];
    let nodes = frame.body_nodes(packing, b);
    rays.par_iter()
        .with_min_len(64)
        .map(|r| raycast_one(body, nodes, positions, &packing.triangles, r))
        .collect()
}

/// Brute-force closest hit of a ray against triangles `first..first + count` of the packed
/// triangles (body-local indices in the result): the reference for the BVH.
pub fn raycast_brute_force(
    positions: &[Vec3],
    triangles: &[u32],
    first: u32,
    count: u32,
    ray: &Ray,
) -> RayHit {
    let mut best = RayHit::MISS;
    let axes = ray_axes(ray.dir);
    for tri in 0..count {
        let (a, b, c) = tri_vertices(positions, triangles, (first + tri) as usize);
        best.triangles_tested += 1;
        if let Some((t, u, v)) = intersect_triangle(ray.origin, ray.dir, axes, ray.tmin, ray.tmax, a, b, c) {
            if t < best.t || (t == best.t && tri < best.triangle) {
                best = RayHit { t, triangle: tri, u, v, ..best };
            }
        }
    }
    best
}

/// Twin of `broad_phase.wgsl`: every pair (i, j), i < j, of packed bodies with leaves whose
/// boxes, grown by the pair's reach `max(prediction, e_i + e_j)`, overlap, and the self pairs
/// (i, i) of the kinds in `self_collision` ([`crate::layout::SELF_CLOTH`],
/// [`crate::layout::SELF_VOLUMETRIC`]), in (i, j) order (the GPU appends them in any order); all
/// with the prediction distance `prediction`.
pub fn broad_phase(
    bodies: &[BodyGpu],
    body_state: &[BodyState],
    self_collision: u32,
    prediction: f32,
) -> Vec<BodyPair> {
    let boxes: Vec<Option<(Vec3, Vec3)>> = body_state.iter().map(|s| s.bounds()).collect();
    let mut pairs = Vec::new();
    for (i, bi) in boxes.iter().enumerate() {
        let Some((li, hi)) = bi else { continue };
        let wanted = if bodies[i].flags & BODY_CLOTH != 0 { SELF_CLOTH } else { SELF_VOLUMETRIC };
        if self_collision & wanted != 0 {
            pairs.push(BodyPair { a: i as u32, b: i as u32, prediction, pad: 0 });
        }
        for (j, bj) in boxes.iter().enumerate().skip(i + 1) {
            let Some((lj, hj)) = bj else { continue };
            let reach = prediction.max(bodies[i].half_thickness + bodies[j].half_thickness);
            if (li - reach).cmple(*hj).all() && (lj - reach).cmple(*hi).all() {
                pairs.push(BodyPair { a: i as u32, b: j as u32, prediction, pad: 0 });
            }
        }
    }
    pairs
}

/// Twin of `pair_tiles.wgsl`: the first workgroup of each directed pair (2k: `a -> b`,
/// 2k + 1: `b -> a`, without workgroups for a self pair) and, last, the total.
pub fn pair_tiles(bodies: &[BodyGpu], pairs: &[BodyPair]) -> Vec<u32> {
    let mut offsets = Vec::with_capacity(2 * pairs.len() + 1);
    let mut total = 0;
    for p in pairs {
        for (dir, src) in [p.a, p.b].into_iter().enumerate() {
            offsets.push(total);
            if dir == 0 || p.a != p.b {
                total += bodies[src as usize].vertex_count.div_ceil(crate::layout::WG_SIZE);
            }
        }
    }
    offsets.push(total);
    offsets
}

/// What a leaf test needs: the body, its geometry and the ray.
struct Leaf<'a> {
    body: &'a BodyGpu,
    positions: &'a [Vec3],
    triangles: &'a [u32],
    ray: &'a Ray,
    axes: [usize; 3],
    ignore_vertex: u32,
}

impl Leaf<'_> {
    /// Tests body-local triangle `tri` (unless it uses the ignored vertex) and keeps the hit
    /// when it is nearer, or as near with a lower index; shrinks `tmax` to it.
    fn test(&self, tri: u32, best: &mut RayHit, tmax: &mut f32) {
        let g = (self.body.tri_offset + tri) as usize;
        let idx = [self.triangles[3 * g], self.triangles[3 * g + 1], self.triangles[3 * g + 2]];
        if idx.contains(&self.ignore_vertex) {
            return;
        }
        best.triangles_tested += 1;
        let [a, b, c] = idx.map(|i| self.positions[i as usize]);
        let r = self.ray;
        if let Some((t, u, v)) = intersect_triangle(r.origin, r.dir, self.axes, r.tmin, *tmax, a, b, c) {
            if t < best.t || (t == best.t && tri < best.triangle) {
                *best = RayHit { t, triangle: tri, u, v, ..*best };
                *tmax = t;
            }
        }
    }
}

/// Twin of `closest_hit` in `shaders/shared/bvh.wgsl`: the closest hit through a body's BVH,
/// skipping the triangles that use packed vertex `ignore_vertex`. Nearer child first with a
/// short stack of [`SHORT_STACK`] entries; when it is full the farther child is dropped and a
/// final stackless depth-first walk (pruned by the hit found) makes up for it, so no depth of
/// tree can make it miss. Visits nodes in the same order as the GPU and counts them alike.
pub fn closest_hit(
    body: &BodyGpu,
    nodes: &[Node],
    positions: &[Vec3],
    triangles: &[u32],
    ray: &Ray,
    ignore_vertex: u32,
) -> RayHit {
    let mut best = RayHit::MISS;
    if nodes.is_empty() {
        return best;
    }
    let axes = ray_axes(ray.dir);
    let inv = safe_inverse(ray.dir);
    let mut tmax = ray.tmax;
    let leaf = Leaf { body, positions, triangles, ray, axes, ignore_vertex };
    let entry = |nd: &Node, tmax: f32| box_entry(ray.origin, ray.dir, inv, ray.tmin, tmax, nd.min, nd.max);
    let mut stack = [0u32; SHORT_STACK as usize];
    let mut sp = 0usize;
    let mut lost = false;
    best.nodes_visited += 1;
    let mut node = if entry(&nodes[0], tmax).is_some() { 0 } else { NONE };
    loop {
        if node == NONE {
            while sp > 0 {
                sp -= 1;
                let c = stack[sp];
                best.nodes_visited += 1;
                if entry(&nodes[c as usize], tmax).is_some() {
                    node = c;
                    break;
                }
            }
            if node == NONE {
                break;
            }
        }
        let nd = &nodes[node as usize];
        if nd.child & LEAF_BIT != 0 {
            leaf.test(nd.child & !LEAF_BIT, &mut best, &mut tmax);
            node = NONE;
            continue;
        }
        let left = nd.child;
        let right = nodes[left as usize].escape;
        best.nodes_visited += 2;
        let el = entry(&nodes[left as usize], tmax);
        let er = entry(&nodes[right as usize], tmax);
        node = match (el, er) {
            (Some(a), Some(b)) => {
                let (near, far) = if b < a { (right, left) } else { (left, right) };
                if sp < stack.len() {
                    stack[sp] = far;
                    sp += 1;
                } else {
                    lost = true;
                }
                near
            }
            (Some(_), None) => left,
            (None, Some(_)) => right,
            (None, None) => NONE,
        };
    }
    if lost {
        best.fallback = 1;
        let mut node = 0u32;
        while node != NONE {
            let nd = &nodes[node as usize];
            best.nodes_visited += 1;
            if entry(nd, tmax).is_some() {
                if nd.child & LEAF_BIT != 0 {
                    leaf.test(nd.child & !LEAF_BIT, &mut best, &mut tmax);
                    node = nd.escape;
                } else {
                    node = nd.child;
                }
            } else {
                node = nd.escape;
            }
        }
    }
    best
}

/// Entry distance of the ray into a box (the widened slab test of [`hit_box`]), or `None`.
fn box_entry(o: Vec3, d: Vec3, inv: Vec3, tmin: f32, tmax: f32, lo: Vec3, hi: Vec3) -> Option<f32> {
    let parallel = d.abs().cmplt(Vec3::splat(1.0e-30));
    let inside = o.cmpge(lo) & o.cmple(hi);
    if (parallel & !inside).any() {
        return None;
    }
    let t0 = (lo - o) * inv;
    let t1 = (hi - o) * inv;
    let near = Vec3::select(parallel, Vec3::splat(-3.0e38), t0.min(t1));
    let far = Vec3::select(parallel, Vec3::splat(3.0e38), t0.max(t1));
    let tn = near.max_element();
    let tf = far.min_element();
    let enter = (tn - tn.abs() * 2.0e-6).max(tmin);
    (enter <= (tf + tf.abs() * 2.0e-6).min(tmax)).then_some(enter)
}

/// [`closest_hit`]'s result, walked the CPU's way: nearer child first with an unbounded stack (64
/// entries inline, then on the heap) that remembers each entry distance, so popped subtrees
/// are pruned without reading their nodes again. The CPU backend's ray queries use it;
/// `nodes_visited` counts its own walk.
pub fn closest_hit_ordered(
    body: &BodyGpu,
    nodes: &[Node],
    positions: &[Vec3],
    triangles: &[u32],
    ray: &Ray,
    ignore_vertex: u32,
) -> RayHit {
    let mut best = RayHit::MISS;
    if nodes.is_empty() {
        return best;
    }
    let axes = ray_axes(ray.dir);
    let inv = safe_inverse(ray.dir);
    let mut tmax = ray.tmax;
    let mut stack = [0u32; 64];
    let mut sp = 0usize;
    let mut spill: Vec<(u32, f32)> = Vec::new();
    let mut stack_t = [0f32; 64];
    best.nodes_visited += 1;
    let root = &nodes[0];
    let mut next = box_entry(ray.origin, ray.dir, inv, ray.tmin, tmax, root.min, root.max).map(|_| 0u32);
    loop {
        let node = match next.take() {
            Some(n) => n,
            None => {
                // Pop the next node still nearer than the best hit.
                let popped = if let Some((n, t)) = spill.pop() {
                    Some((n, t))
                } else if sp > 0 {
                    sp -= 1;
                    Some((stack[sp], stack_t[sp]))
                } else {
                    None
                };
                match popped {
                    Some((n, t)) if t <= tmax + tmax.abs() * 2.0e-6 => n,
                    Some(_) => continue,
                    None => break,
                }
            }
        };
        let nd = &nodes[node as usize];
        if nd.child & LEAF_BIT != 0 {
            let leaf = Leaf { body, positions, triangles, ray, axes, ignore_vertex };
            leaf.test(nd.child & !LEAF_BIT, &mut best, &mut tmax);
            continue;
        }
        let left = nd.child;
        let right = nodes[left as usize].escape;
        best.nodes_visited += 2;
        let (l, r) = (&nodes[left as usize], &nodes[right as usize]);
        let tl = box_entry(ray.origin, ray.dir, inv, ray.tmin, tmax, l.min, l.max);
        let tr = box_entry(ray.origin, ray.dir, inv, ray.tmin, tmax, r.min, r.max);
        let (near, far) = match (tl, tr) {
            (Some(a), Some(b)) if b < a => ((right, b), Some((left, a))),
            (Some(a), Some(b)) => ((left, a), Some((right, b))),
            (Some(a), None) => ((left, a), None),
            (None, Some(b)) => ((right, b), None),
            (None, None) => continue,
        };
        if let Some((f, t)) = far {
            if sp < stack.len() && spill.is_empty() {
                stack[sp] = f;
                stack_t[sp] = t;
                sp += 1;
            } else {
                spill.push((f, t));
            }
        }
        next = Some(near.0);
    }
    best
}

/// A trace's hit, and whether (in how many steps) a walk found it (WGSL `Traced`).
#[derive(Clone, Copy, Debug)]
pub struct Traced {
    /// The closest hit (or a miss).
    pub hit: RayHit,
    /// Found by walking from last frame's triangle.
    pub walked: bool,
    /// Edges the walk crossed.
    pub steps: u32,
    /// How the walk ended ([`NONE`]: the trace did not walk).
    pub outcome: u32,
}

/// How the classification casts its rays (the WGSL kernels' `trace`): through the BVH (the full
/// pass, [`narrow_phase`]) or by walking from last frame's hits ([`walk_contacts`]).
pub trait Tracer: Sync {
    /// The closest hit of `ray` on packed body `b`, skipping the triangles of packed vertex
    /// `ignore`; `hint` is last frame's triangle of the same ray ([`NONE`]: unknown). Walk
    /// outcomes go to `counts`.
    fn trace(
        &self,
        cx: &Narrow<'_>,
        b: usize,
        ray: &Ray,
        ignore: u32,
        hint: u32,
        counts: &mut WalkCounts,
    ) -> Traced;
}

/// The full pass: every trace through the BVH.
#[derive(Clone, Copy, Debug, Default)]
pub struct BvhTracer;

impl Tracer for BvhTracer {
    fn trace(&self, cx: &Narrow<'_>, b: usize, ray: &Ray, ignore: u32, _: u32, _: &mut WalkCounts) -> Traced {
        Traced { hit: cx.bvh_hit(b, ray, ignore), walked: false, steps: 0, outcome: NONE }
    }
}

/// Iterative detection (twin of `trace` in `walk_contacts.wgsl`): walk from the hint, at most
/// `ceil(reach / mean_size)` edges; a walk that does not hit (or ends on a triangle of the
/// ignored vertex, counted as a loop), and a trace without a hint, go through the BVH when
/// `fallback` is [`WALK_FALLBACK_BVH`], else miss.
#[derive(Clone, Copy, Debug)]
pub struct WalkTracer {
    /// [`WALK_FALLBACK_BVH`] or [`WALK_FALLBACK_DROP`](crate::layout::WALK_FALLBACK_DROP).
    pub fallback: u32,
    /// `confidence × displacement threshold`.
    pub reach: f32,
}

impl WalkTracer {
    /// Edges a walk over `body` may cross (Eq. 1 of Lehericey et al. 2013).
    pub fn steps(&self, body: &BodyGpu) -> u32 {
        let steps = (self.reach / body.mean_size).ceil();
        if steps < MAX_WALK_STEPS as f32 { steps as u32 } else { MAX_WALK_STEPS }
    }
}

impl Tracer for WalkTracer {
    fn trace(
        &self,
        cx: &Narrow<'_>,
        b: usize,
        ray: &Ray,
        ignore: u32,
        hint: u32,
        counts: &mut WalkCounts,
    ) -> Traced {
        let body = &cx.packing.bodies[b];
        let mut outcome = WALK_NO_START;
        if hint != NONE {
            let w = walk_ray(
                body,
                &cx.packing.adjacency,
                cx.positions,
                &cx.packing.triangles,
                ray,
                hint,
                self.steps(body),
            );
            let own = w.outcome == WALK_HIT && ignore != NONE && {
                let g = (body.tri_offset + w.triangle) as usize;
                cx.packing.triangles[3 * g..3 * g + 3].contains(&ignore)
            };
            if w.outcome == WALK_HIT && !own {
                counts.outcomes[WALK_HIT as usize] += 1;
                let hit = RayHit {
                    t: w.t,
                    triangle: w.triangle,
                    u: w.u,
                    v: w.v,
                    triangles_tested: w.steps + 1,
                    ..RayHit::MISS
                };
                return Traced { hit, walked: true, steps: w.steps, outcome: WALK_HIT };
            }
            outcome = if own { WALK_LOOP } else { w.outcome };
            counts.outcomes[outcome as usize] += 1;
        } else {
            counts.outcomes[WALK_NO_START as usize] += 1;
        }
        if self.fallback == WALK_FALLBACK_BVH {
            counts.fallback_casts += 1;
            let hit = cx.bvh_hit(b, ray, ignore);
            counts.fallback_hits += u32::from(hit.triangle != NONE);
            return Traced { hit, walked: false, steps: 0, outcome };
        }
        Traced { hit: RayHit::MISS, walked: false, steps: 0, outcome }
    }
}

/// A ray's closest hit on a body with the hit triangle's normal (WGSL `Probe`): `face` its
/// unnormalised normal, `cosine = dir · m` with m the unit normal, `length = t |cosine|` (the
/// ray re-projected onto m).
#[derive(Clone, Copy, Debug)]
struct Probe {
    hit: RayHit,
    face: Vec3,
    cosine: f32,
    length: f32,
    walked: bool,
    steps: u32,
    outcome: u32,
}

impl Probe {
    const NONE: Probe = Probe {
        hit: RayHit::MISS,
        face: Vec3::ZERO,
        cosine: 0.0,
        length: 0.0,
        walked: false,
        steps: 0,
        outcome: NONE,
    };

    fn hits(&self) -> bool {
        self.hit.triangle != NONE
    }
}

/// The narrow phase's view of one frame: the packing, the BVHs and both position sets.
#[derive(Clone, Copy, Debug)]
pub struct Narrow<'a> {
    /// The packed bodies.
    pub packing: &'a Packing,
    /// This frame's normals, boxes and BVHs.
    pub frame: &'a FrameData,
    /// This frame's positions.
    pub positions: &'a [Vec3],
    /// The previous frame's positions.
    pub previous: &'a [Vec3],
    /// Trace each volumetric source body without limit, so that contacts remember where the ray
    /// leaves it ([`crate::layout::DETECT_REMEMBER_EXIT`]).
    pub remember_exit: bool,
}

/// One classification's mutable state: the tracer's counters and the contacts found.
struct Sink<'s, T: Tracer> {
    tracer: &'s T,
    counts: WalkCounts,
    out: &'s mut Vec<ContactGpu>,
}

impl Narrow<'_> {
    fn bvh_hit(&self, b: usize, ray: &Ray, ignore: u32) -> RayHit {
        let body = &self.packing.bodies[b];
        let nodes = self.frame.body_nodes(self.packing, b);
        closest_hit_ordered(body, nodes, self.positions, &self.packing.triangles, ray, ignore)
    }

    #[allow(clippy::too_many_arguments)]
    fn probe<T: Tracer>(
        &self,
        sink: &mut Sink<'_, T>,
        b: usize,
        origin: Vec3,
        dir: Vec3,
        tmin: f32,
        tmax: f32,
        ignore: u32,
        hint: u32,
    ) -> Probe {
        let ray = Ray { origin, tmin, dir, tmax };
        let tr = sink.tracer.trace(self, b, &ray, ignore, hint, &mut sink.counts);
        let mut pr =
            Probe { hit: tr.hit, walked: tr.walked, steps: tr.steps, outcome: tr.outcome, ..Probe::NONE };
        if tr.hit.triangle != NONE {
            let g = (self.packing.bodies[b].tri_offset + tr.hit.triangle) as usize;
            let (ta, tb, tc) = tri_vertices(self.positions, &self.packing.triangles, g);
            pr.face = (tb - ta).cross(tc - ta);
            pr.cosine = dir.dot(pr.face.normalize());
            pr.length = tr.hit.t * pr.cosine.abs();
        }
        pr
    }

    /// Twin of `own_hit`: the source body's own hit along the ray, up to `t` (or without limit
    /// when exits are remembered).
    #[allow(clippy::too_many_arguments)]
    fn own_hit<T: Tracer>(
        &self,
        sink: &mut Sink<'_, T>,
        a: usize,
        origin: Vec3,
        dir: Vec3,
        t: f32,
        v: u32,
        hint: u32,
    ) -> RayHit {
        let tmax = if self.remember_exit { f32::INFINITY } else { t };
        let ray = Ray { origin, tmin: 0.0, dir, tmax };
        sink.tracer.trace(self, a, &ray, v, hint, &mut sink.counts).hit
    }

    /// Whether packed vertex `v` is strictly on the other side of triangle `tri` of body `b`
    /// than at the previous positions.
    fn inverted(&self, v: u32, b: usize, tri: u32) -> bool {
        let g = (self.packing.bodies[b].tri_offset + tri) as usize;
        let side = |pos: &[Vec3]| {
            let (ta, tb, tc) = tri_vertices(pos, &self.packing.triangles, g);
            (pos[v as usize] - ta).dot((tb - ta).cross(tc - ta))
        };
        let (now, before) = (side(self.positions), side(self.previous));
        (now < 0.0 && before > 0.0) || (now > 0.0 && before < 0.0)
    }

    /// Twin of `emit`: the contact of probe `pr` along `dir` from `s`.
    fn contact(&self, s: &Source, pr: &Probe, through: bool, flags: u32, exit: u32) -> ContactGpu {
        let g = (self.packing.bodies[s.b].tri_offset + pr.hit.triangle) as usize;
        let (ta, tb, tc) = tri_vertices(self.positions, &self.packing.triangles, g);
        let m = pr.face.normalize();
        let toward = if pr.cosine < 0.0 { -m } else { m };
        let (normal, depth) =
            if through { (toward, pr.length + s.ea + s.eb) } else { (-toward, s.ea + s.eb - pr.length) };
        let (u, v) = (pr.hit.u, pr.hit.v);
        let q = ta * (1.0 - u - v) + tb * u + tc * v;
        ContactGpu {
            source_body: s.a as u32,
            source_vertex: s.local,
            target_body: s.b as u32,
            target_triangle: pr.hit.triangle,
            source_point: s.p - s.ea * normal,
            u,
            target_point: q + s.eb * normal,
            v,
            normal,
            depth,
            ray_length: pr.hit.t,
            weight: pr.cosine.abs(),
            flags: flags | if pr.walked { contact_flags::WALKED } else { 0 },
            pair: s.k,
            exit_triangle: exit,
            walk_steps: pr.steps,
            pad0: 0,
            pad1: 0,
        }
    }
}

/// Where a contact comes from (WGSL `Source`).
struct Source {
    a: usize,
    local: u32,
    b: usize,
    k: u32,
    p: Vec3,
    ea: f32,
    eb: f32,
}

/// Twin of `class_of` in `shared/classify.wgsl`: collision below `touch`, prediction below
/// `predict`, 0 otherwise.
fn class_of(length: f32, touch: f32, predict: f32) -> u32 {
    if length < touch {
        contact_flags::COLLISION
    } else if length < predict {
        contact_flags::PREDICTION
    } else {
        0
    }
}

/// Which rays of a source vertex to classify, and last frame's triangles of each
/// (`classify`'s `sides`, `hint_in`, `hint_out`, `hint_exit`).
#[derive(Clone, Copy, Debug)]
pub struct Rays {
    /// Bit 0: the inward ray; bit 1: the outward ray.
    pub sides: u32,
    /// Last frame's triangle of the inward ray on the target ([`NONE`]: unknown).
    pub hint_in: u32,
    /// Last frame's triangle of the outward ray on the target.
    pub hint_out: u32,
    /// Last frame's triangle where the ray left the source body.
    pub hint_exit: u32,
}

impl Rays {
    /// Both rays, no hints: the full pass.
    pub const BOTH: Rays = Rays { sides: 3, hint_in: NONE, hint_out: NONE, hint_exit: NONE };
}

/// Twin of `classify` in `shaders/shared/classify.wgsl`: appends to `out` the contacts of
/// source vertex `local` of packed body `a` against packed body `b` (`a` itself for a self pair)
/// of directed pair `k` with prediction distance `predict`, casting `rays` with `tracer`
/// (Hermann et al. 2008; Lehericey et al. 2015: four cases by body kind, re-projection,
/// inversion; the rules are in `narrow_phase.wgsl`'s header). Returns the walk counters of its
/// traces.
#[allow(clippy::too_many_arguments)]
pub fn classify<T: Tracer>(
    cx: &Narrow<'_>,
    tracer: &T,
    (a, local, b, k): (usize, u32, usize, u32),
    predict: f32,
    rays: Rays,
    out: &mut Vec<ContactGpu>,
) -> WalkCounts {
    use contact_flags::{COLLISION, INVERTED, INWARD_RAY, OUTWARD_RAY, PREDICTION};
    let mut sink = Sink { tracer, counts: WalkCounts::default(), out };
    let (body_a, body_b) = (&cx.packing.bodies[a], &cx.packing.bodies[b]);
    let cloth_a = body_a.flags & BODY_CLOTH != 0;
    let cloth_b = body_b.flags & BODY_CLOTH != 0;
    let (ea, eb) = (body_a.half_thickness, body_b.half_thickness);
    let reach = predict.max(ea + eb);
    let self_pair = a == b;
    let v = body_a.vertex_offset + local;
    let p = cx.positions[v as usize];
    let n = cx.frame.normals[v as usize];
    if n == Vec3::ZERO {
        return sink.counts;
    }
    let s = Source { a, local, b, k, p, ea, eb };
    let emit = |sink: &mut Sink<'_, T>, pr: &Probe, through: bool, flags: u32, exit: u32| {
        sink.out.push(cx.contact(&s, pr, through, flags, exit))
    };
    let inf = f32::INFINITY;
    let (use_in, use_out) = (rays.sides & 1 != 0, rays.sides & 2 != 0);
    let (hin, hout, hexit) = (rays.hint_in, rays.hint_out, rays.hint_exit);
    if !cloth_a && self_pair {
        if use_in {
            let first = cx.probe(&mut sink, a, p, -n, 0.0, inf, v, hin);
            if first.hits() && first.cosine > 0.0 {
                let t1 = first.hit.t;
                let second = cx.probe(&mut sink, a, p, -n, t1 + SELF_HIT_GAP * t1, inf, v, NONE);
                if second.hits()
                    && second.hit.t > t1
                    && second.hit.triangle != first.hit.triangle
                    && second.cosine > 0.0
                {
                    emit(&mut sink, &first, true, COLLISION | INWARD_RAY, NONE);
                }
            }
        }
    } else if !cloth_a && !cloth_b {
        if use_in {
            let i = cx.probe(&mut sink, b, p, -n, 0.0, inf, NONE, hin);
            if i.hits() && i.cosine > 0.0 {
                let own = cx.own_hit(&mut sink, a, p, -n, i.hit.t, v, hexit);
                if !(own.triangle != NONE && own.t < i.hit.t) {
                    emit(&mut sink, &i, true, COLLISION | INWARD_RAY, own.triangle);
                }
            }
        }
        if use_out && predict > 0.0 {
            let o = cx.probe(&mut sink, b, p, n, 0.0, reach, NONE, hout);
            if o.hits() && o.cosine < 0.0 && o.length < predict {
                let own = cx.own_hit(&mut sink, a, p, n, o.hit.t, v, hexit);
                if !(own.triangle != NONE && own.t < o.hit.t) {
                    emit(&mut sink, &o, false, PREDICTION | OUTWARD_RAY, own.triangle);
                }
            }
        }
    } else if !cloth_a {
        if use_in {
            let i = cx.probe(&mut sink, b, p, -n, 0.0, inf, NONE, hin);
            if i.hits() {
                let own = cx.own_hit(&mut sink, a, p, -n, 2.0 * i.hit.t, v, hexit);
                if !(own.triangle != NONE && own.t < 2.0 * i.hit.t) {
                    emit(&mut sink, &i, true, COLLISION | INWARD_RAY, own.triangle);
                }
            }
        }
        if use_out && reach > 0.0 {
            let o = cx.probe(&mut sink, b, p, n, 0.0, reach, NONE, hout);
            let class = class_of(o.length, eb, predict);
            if o.hits() && class != 0 {
                let own = cx.own_hit(&mut sink, a, p, n, o.hit.t, v, hexit);
                if !(own.triangle != NONE && own.t < o.hit.t) {
                    emit(&mut sink, &o, false, class | OUTWARD_RAY, own.triangle);
                }
            }
        }
    } else if !cloth_b {
        let i = if use_in { cx.probe(&mut sink, b, p, -n, 0.0, inf, NONE, hin) } else { Probe::NONE };
        let o = if use_out { cx.probe(&mut sink, b, p, n, 0.0, inf, NONE, hout) } else { Probe::NONE };
        let inside_i = i.hits() && i.cosine > 0.0;
        let inside_o = o.hits() && o.cosine > 0.0;
        if inside_o && (!inside_i || o.length < i.length) {
            emit(&mut sink, &o, true, COLLISION | OUTWARD_RAY, NONE);
        } else if inside_i {
            emit(&mut sink, &i, true, COLLISION | INWARD_RAY, NONE);
        } else {
            let ci = class_of(i.length, ea, predict);
            if i.hits() && ci != 0 {
                emit(&mut sink, &i, false, ci | INWARD_RAY, NONE);
            }
            let co = class_of(o.length, ea, predict);
            if o.hits() && co != 0 {
                emit(&mut sink, &o, false, co | OUTWARD_RAY, NONE);
            }
        }
    } else {
        let ignore = if self_pair { v } else { NONE };
        let (mut todo, mut done, mut hints) = (rays.sides, 0u32, [hin, hout]);
        for i in 0..3 {
            let side = i & 1;
            if todo & (1 << side) == 0 || done & (1 << side) != 0 {
                continue;
            }
            done |= 1 << side;
            let (dir, ray) = if side == 1 { (n, OUTWARD_RAY) } else { (-n, INWARD_RAY) };
            let h = cx.probe(&mut sink, b, p, dir, 0.0, reach, ignore, hints[side]);
            let other = 1 - side;
            if h.outcome == WALK_RANGE && todo & (1 << other) == 0 {
                todo |= 1 << other;
                hints[other] = hints[side];
            }
            if h.hits() {
                if cx.inverted(v, b, h.hit.triangle) {
                    emit(&mut sink, &h, true, COLLISION | INVERTED | ray, NONE);
                } else {
                    let class = class_of(h.length, ea + eb, predict);
                    if class != 0 {
                        emit(&mut sink, &h, false, class | ray, NONE);
                    }
                }
            }
        }
    }
    sink.counts
}

/// Twin of `ray_sources.wgsl`: the source vertices of the narrow phase, (directed pair k,
/// body-local vertex), in that order (the GPU appends them in any order): every vertex of the
/// source body of each directed pair (2k: `a -> b`, 2k + 1: `b -> a`, one direction for a self
/// pair) but those outside the target's box grown by the pair's reach `max(prediction, e_a +
/// e_b)` (not tested for a self pair nor for volumetric -> cloth).
pub fn ray_sources(
    packing: &Packing,
    body_state: &[BodyState],
    positions: &[Vec3],
    pairs: &[BodyPair],
) -> Vec<[u32; 2]> {
    let mut directed = Vec::new();
    for (i, p) in pairs.iter().enumerate() {
        directed.push((2 * i as u32, p.a as usize, p.b as usize, p.prediction));
        if p.a != p.b {
            directed.push((2 * i as u32 + 1, p.b as usize, p.a as usize, p.prediction));
        }
    }
    let lists: Vec<Vec<[u32; 2]>> = directed
        .into_par_iter()
        .map(|(k, a, b, prediction)| {
            let (body_a, body_b) = (&packing.bodies[a], &packing.bodies[b]);
            let cloth_a = body_a.flags & BODY_CLOTH != 0;
            let cloth_b = body_b.flags & BODY_CLOTH != 0;
            let reach = prediction.max(body_a.half_thickness + body_b.half_thickness);
            let (lo, hi) = body_state[b].bounds_keys();
            let tested = a != b && (cloth_a || !cloth_b);
            (0..body_a.vertex_count)
                .filter(|&local| {
                    let p = positions[(body_a.vertex_offset + local) as usize];
                    !tested || !(p.cmplt(lo - reach).any() || p.cmpgt(hi + reach).any())
                })
                .map(|local| [k, local])
                .collect()
        })
        .collect();
    lists.concat()
}

/// Twin of `source_args.wgsl`: the narrow phase's dispatch (x, y, z) over `min(count,
/// capacity)` listed source vertices, then that number.
pub fn source_args(source_count: u32, source_capacity: u32) -> [u32; 4] {
    contact_args(source_count, source_capacity)
}

/// Twin of `narrow_phase.wgsl` over a pair list (each pair in both directions, a self pair
/// once): the source vertices of [`ray_sources`], classified in rayon, in (directed pair,
/// vertex, inward before outward) order (the GPU appends them in any order).
pub fn narrow_phase(cx: &Narrow<'_>, pairs: &[BodyPair]) -> Vec<ContactGpu> {
    let sources = ray_sources(cx.packing, &cx.frame.body_state, cx.positions, pairs);
    let found: Vec<Vec<ContactGpu>> = sources
        .par_chunks(256)
        .map(|chunk| {
            let mut acc = Vec::new();
            for &[k, local] in chunk {
                let p = &pairs[(k / 2) as usize];
                let (a, b) = if k % 2 == 0 { (p.a, p.b) } else { (p.b, p.a) };
                classify(
                    cx,
                    &BvhTracer,
                    (a as usize, local, b as usize, k),
                    p.prediction,
                    Rays::BOTH,
                    &mut acc,
                );
            }
            acc
        })
        .collect();
    found.concat()
}

/// Twin of `walk_contacts.wgsl`, in rayon: each of last frame's contacts (`memory`, made over
/// the pair list `pairs`) re-cast along its side by walking from its triangles, classified as
/// the full pass does. Returns the contacts (in memory order) and the walk counters.
pub fn walk_contacts(
    cx: &Narrow<'_>,
    tracer: &WalkTracer,
    pairs: &[BodyPair],
    memory: &[ContactGpu],
) -> (Vec<ContactGpu>, WalkCounts) {
    memory
        .par_iter()
        .with_min_len(256)
        .fold(
            || (Vec::new(), WalkCounts::default()),
            |(mut acc, mut counts), m| {
                let outward = m.flags & contact_flags::OUTWARD_RAY != 0;
                let rays = Rays {
                    sides: if outward { 2 } else { 1 },
                    hint_in: if outward { NONE } else { m.target_triangle },
                    hint_out: if outward { m.target_triangle } else { NONE },
                    hint_exit: m.exit_triangle,
                };
                let prediction = pairs[(m.pair / 2) as usize].prediction;
                let id = (m.source_body as usize, m.source_vertex, m.target_body as usize, m.pair);
                let c = classify(cx, tracer, id, prediction, rays, &mut acc);
                counts.add_counts(&c);
                (acc, counts)
            },
        )
        .reduce(
            || (Vec::new(), WalkCounts::default()),
            |(mut x, mut cx_), (mut y, cy)| {
                x.append(&mut y);
                cx_.add_counts(&cy);
                (x, cx_)
            },
        )
}

/// Twin of `contact_args.wgsl`: the indirect dispatch arguments (x, y, z) over `min(count,
/// capacity)` contacts in workgroups of `WG_SIZE`, then that number.
pub fn contact_args(contact_count: u32, contact_capacity: u32) -> [u32; 4] {
    let stored = contact_count.min(contact_capacity);
    let (x, y) = crate::layout::dispatch_size(stored.div_ceil(crate::layout::WG_SIZE));
    [if stored == 0 { 0 } else { x }, y, 1, stored]
}

mod walk;
pub use walk::{edge_functions, walk, walk_ray};
