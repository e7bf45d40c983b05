//! Twin of `shaders/shared/ray.wgsl`: the watertight ray–triangle test and the widened slab
//! test of a box, with the same float operations in the same order as the GPU.

use glam::{Vec2, Vec3};

/// `edge_t` of `ray.wgsl`: the ray parameter where the ray crosses edge (p, q), from the edge
/// alone, with the ends in canonical (lexicographic) order. Each end is its corner relative to
/// the origin (`p3`), that corner's component along the ray's dominant axis (`pz`, the kernel's
/// `p3[kz]`) and its sheared position (`pxy`).
fn edge_t((p3, pz, pxy): (Vec3, f32, Vec2), (q3, qz, qxy): (Vec3, f32, Vec2), dz: f32) -> f32 {
    let less = |a: Vec3, b: Vec3| {
        if a.x != b.x {
            a.x < b.x
        } else if a.y != b.y {
            a.y < b.y
        } else {
            a.z < b.z
        }
    };
    let ((az, axy), (bz, bxy)) = if less(q3, p3) { ((qz, qxy), (pz, pxy)) } else { ((pz, pxy), (qz, qxy)) };
    let e = bxy - axy;
    let s = (-axy.dot(e) / e.dot(e)).clamp(0.0, 1.0);
    (az + s * (bz - az)) / dz
}

/// `ordered_sum` of `ray.wgsl`: `x + y + z` added in ascending magnitude (then value), so that
/// the same three values give the same sum bit for bit in any order, and their negations its
/// negation: a triangle listed from another corner or in the other orientation computes the
/// same determinant and `t` as the original, and coincident triangles tie exactly.
#[inline(always)]
fn ordered_sum(x: f32, y: f32, z: f32) -> f32 {
    let (x, y, z) = (magnitude_key(x), magnitude_key(y), magnitude_key(z));
    let (lo, hi) = (x.min(y), x.max(y));
    let (mid, top) = (hi.min(z), hi.max(z));
    let (low, mid) = (lo.min(mid), lo.max(mid));
    (key_value(low) + key_value(mid)) + key_value(top)
}

/// `magnitude_key` of `ray.wgsl`: a key whose order is `ordered_sum`'s, by magnitude, then
/// negative before positive: the magnitude's bits, then the sign bit inverted.
#[inline(always)]
fn magnitude_key(x: f32) -> u32 {
    let bits = x.to_bits();
    ((bits & 0x7fff_ffff) << 1) | (1 - (bits >> 31))
}

/// The value of a [`magnitude_key`].
#[inline(always)]
fn key_value(key: u32) -> f32 {
    f32::from_bits((key >> 1) | ((1 - (key & 1)) << 31))
}

/// A triangle seen from a ray (`Sheared` in `shaders/shared/ray.wgsl`): the corners relative to
/// the origin, their sheared 2D coordinates (scaled by `dir[kz]`) and the edge functions
/// `(U, V, W)`.
#[derive(Clone, Copy, Debug)]
pub struct Sheared {
    /// `a - o`, `b - o`, `c - o`.
    pub p: [Vec3; 3],
    /// The sheared 2D coordinates of the three corners.
    pub xy: [Vec2; 3],
    /// The edge functions: the barycentric weights of `a`, `b`, `c` times `U + V + W`.
    pub uvw: [f32; 3],
    /// The corners' components along the ray's dominant axis (`p[i][kz]`), and the
    /// direction's (`dir[kz]`): the twin's own (the kernel reads them from `p` where it needs
    /// them).
    pub z: [f32; 4],
}

/// `v`'s components in the order `k` ([`ray_axes`]), read by index from an array, not chosen by
/// branches on `k`: the compiler turned each `v[k[i]]` into a chain of compares and jumps, taken
/// differently from ray to ray (the dominant axis changes). `cpu-1`'s ray stage on the armadillo
/// pair, 3 runs alternated (`raycontact-bench --cpu --no-parry --scene files --implementations
/// cpu-1`): 41.9–42.2 -> 38.7–40.7 ms; `cloth-layers` unchanged (73.3–75.2 against 73.8–74.6).
/// The same floats, so the same bits.
#[inline(always)]
fn permuted(v: Vec3, k: [usize; 3]) -> Vec3 {
    let c = v.extend(0.0).to_array();
    Vec3::new(c[k[0] & 3], c[k[1] & 3], c[k[2] & 3])
}

/// The first half of [`intersect_triangle`] (`shear` in `ray.wgsl`), also the walk's edge choice.
#[inline(always)]
pub fn shear(o: Vec3, d: Vec3, k: [usize; 3], a: Vec3, b: Vec3, c: Vec3) -> Sheared {
    let (pa, pb, pc) = (a - o, b - o, c - o);
    let (qa, qb, qc, e) = (permuted(pa, k), permuted(pb, k), permuted(pc, k), permuted(d, k));
    let (dx, dy, dz) = (e.x, e.y, e.z);
    let ax = qa.x * dz - dx * qa.z;
    let ay = qa.y * dz - dy * qa.z;
    let bx = qb.x * dz - dx * qb.z;
    let by = qb.y * dz - dy * qb.z;
    let cx = qc.x * dz - dx * qc.z;
    let cy = qc.y * dz - dy * qc.z;
    Sheared {
        p: [pa, pb, pc],
        xy: [Vec2::new(ax, ay), Vec2::new(bx, by), Vec2::new(cx, cy)],
        uvw: [cx * by - cy * bx, ax * cy - ay * cx, bx * ay - by * ax],
        z: [qa.z, qb.z, qc.z, dz],
    }
}

/// Watertight ray-triangle test, exactly as `intersect_triangle` in `shaders/shared/ray.wgsl`:
/// `Some((t, u, v))` with `P = (1-u-v) a + u b + v c`. A ray through a shared edge or vertex
/// hits every incident triangle with the same `t`, computed from the edge or vertex alone.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
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
    hit_sheared(&shear(o, d, k, a, b, c), tmin, tmax)
}

/// The second half of [`intersect_triangle`] (`hit_sheared` in `ray.wgsl`), on the triangle
/// already seen from the ray (the walk has sheared it to choose its edge). Inlined, so that
/// [`intersect_triangle`] compiles to one function as before it was split.
#[inline(always)]
pub fn hit_sheared(s: &Sheared, tmin: f32, tmax: f32) -> Option<(f32, f32, f32)> {
    let ([pa, pb, pc], [axy, bxy, cxy], [u, v, w]) = (s.p, s.xy, s.uvw);
    let [za, zb, zc, dz] = s.z;
    if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
        return None;
    }
    let det = ordered_sum(u, v, w);
    if det == 0.0 {
        return None;
    }
    let t = match (u == 0.0, v == 0.0, w == 0.0) {
        (true, true, _) => zc / dz,
        (true, _, true) => zb / dz,
        (_, true, true) => za / dz,
        (true, _, _) => edge_t((pb, zb, bxy), (pc, zc, cxy), dz),
        (_, true, _) => edge_t((pc, zc, cxy), (pa, za, axy), dz),
        (_, _, true) => edge_t((pa, za, axy), (pb, zb, bxy), dz),
        _ => ordered_sum(u * za, v * zb, w * zc) / (det * dz),
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

/// Entry distance of the ray into a box (the widened slab test of [`hit_box`], `box_entry` in
/// `ray.wgsl`), or `None`.
#[inline(always)]
pub(crate) fn box_entry(
    o: Vec3,
    d: Vec3,
    inv: Vec3,
    tmin: f32,
    tmax: f32,
    lo: Vec3,
    hi: Vec3,
) -> Option<f32> {
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

/// `hit_box` of `ray.wgsl`: the slab test, widened by a relative 2e-6, with axes the ray is
/// parallel to decided by whether the origin is inside the slab.
pub fn hit_box(o: Vec3, d: Vec3, inv: Vec3, tmin: f32, tmax: f32, lo: Vec3, hi: Vec3) -> bool {
    box_entry(o, d, inv, tmin, tmax, lo, hi).is_some()
}
