// Ray queries shared by every kernel that casts rays. Pure functions of their arguments.

// Mirrors `layout::Ray`.
struct Ray {
    origin: vec3<f32>,
    tmin: f32,
    dir: vec3<f32>,
    tmax: f32,
}

// Mirrors `layout::RayHit`. triangle == NONE: no hit (t = +inf).
struct RayHit {
    t: f32,
    triangle: u32,
    u: f32,
    v: f32,
    nodes_visited: u32,
    triangles_tested: u32,
    // 1 when the short stack overflowed and the query finished with a stackless walk.
    fallback: u32,
    // The body hit: its position in the query's list of bodies (ray queries; NONE on a miss).
    body: u32,
}

// Axis permutation of a ray for the watertight test: kz = the dominant axis of dir.
fn ray_axes(dir: vec3<f32>) -> vec3<u32> {
    let a = abs(dir);
    var kz = 2u;
    if a.x > a.y {
        if a.x > a.z {
            kz = 0u;
        }
    } else if a.y > a.z {
        kz = 1u;
    }
    let kx = (kz + 1u) % 3u;
    let ky = (kx + 1u) % 3u;
    return vec3<u32>(kx, ky, kz);
}

// Ray parameter of the point where the ray crosses edge (p, q), from the edge alone: p and q
// are relative to the ray origin, (px, py) their sheared coordinates (scaled by dz). The edge's
// ends are put in a canonical order first, so that both triangles sharing the edge compute the
// same t bit for bit and the tie between them goes to the lower triangle index.
fn edge_t(p3: vec3<f32>, pxy: vec2<f32>, q3: vec3<f32>, qxy: vec2<f32>, kz: u32, dz: f32) -> f32 {
    var a3 = p3;
    var axy = pxy;
    var b3 = q3;
    var bxy = qxy;
    if vec_less(q3, p3) {
        a3 = q3;
        axy = qxy;
        b3 = p3;
        bxy = pxy;
    }
    let e = bxy - axy;
    let s = clamp(-dot(axy, e) / dot(e, e), 0.0, 1.0);
    return (a3[kz] + s * (b3[kz] - a3[kz])) / dz;
}

// x + y + z added in an order that depends on the three values alone (ascending magnitude, then
// value), so that the same values give the same sum bit for bit whichever corner each belongs to:
// a triangle listed from another corner, or in the other orientation (every term negated: the
// same order, the sum negated exactly), computes the same determinant and t, so that coincident
// triangles tie exactly and the caller's rule (smallest t, then lowest index) picks the same one
// on every device. The products are rounded before they are ordered, so no device fuses them
// into the additions.
fn ordered_sum(x: f32, y: f32, z: f32) -> f32 {
    let key_x = magnitude_key(x);
    let key_y = magnitude_key(y);
    let key_z = magnitude_key(z);
    let lo = min(key_x, key_y);
    let hi = max(key_x, key_y);
    let mid = min(hi, key_z);
    let top = max(hi, key_z);
    return (key_value(min(lo, mid)) + key_value(max(lo, mid))) + key_value(top);
}

// The order of `ordered_sum` as a key: by magnitude, then negative before positive (the
// magnitude's bits, then the sign bit inverted); `key_value` gives the value back.
fn magnitude_key(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    return ((bits & 0x7fffffffu) << 1u) | (1u - (bits >> 31u));
}

// The value of a `magnitude_key`.
fn key_value(key: u32) -> f32 {
    return bitcast<f32>((key >> 1u) | ((1u - (key & 1u)) << 31u));
}

// Lexicographic order of points, for canonical edge ends.
fn vec_less(a: vec3<f32>, b: vec3<f32>) -> bool {
    if a.x != b.x {
        return a.x < b.x;
    }
    if a.y != b.y {
        return a.y < b.y;
    }
    return a.z < b.z;
}

// The triangle seen from the ray (the first half of `intersect_triangle`, also the walk's edge
// choice): the corners relative to the origin, their sheared 2D coordinates (scaled by dir[kz])
// and the edge functions (U, V, W), the barycentric weights of a, b, c scaled by U + V + W.
struct Sheared {
    pa: vec3<f32>,
    pb: vec3<f32>,
    pc: vec3<f32>,
    a2: vec2<f32>,
    b2: vec2<f32>,
    c2: vec2<f32>,
    uvw: vec3<f32>,
}

fn shear(o: vec3<f32>, d: vec3<f32>, k: vec3<u32>, a: vec3<f32>, b: vec3<f32>, c: vec3<f32>) -> Sheared {
    let pa = a - o;
    let pb = b - o;
    let pc = c - o;
    let dx = d[k.x];
    let dy = d[k.y];
    let dz = d[k.z];
    let ax = pa[k.x] * dz - dx * pa[k.z];
    let ay = pa[k.y] * dz - dy * pa[k.z];
    let bx = pb[k.x] * dz - dx * pb[k.z];
    let by = pb[k.y] * dz - dy * pb[k.z];
    let cx = pc[k.x] * dz - dx * pc[k.z];
    let cy = pc[k.y] * dz - dy * pc[k.z];
    let uvw = vec3<f32>(cx * by - cy * bx, ax * cy - ay * cx, bx * ay - by * ax);
    return Sheared(pa, pb, pc, vec2<f32>(ax, ay), vec2<f32>(bx, by), vec2<f32>(cx, cy), uvw);
}

// Watertight ray-triangle test (Woop, Benthin, Wald 2013) without divisions before the decision:
// the sheared coordinates are scaled by dir[kz], so the edge functions U, V, W are products and
// differences of the same rounded values for a shared edge in both triangles (exactly opposite),
// and no ray slips between two triangles. Both faces hit; an edge function of zero counts as
// inside, so a ray through a shared edge or vertex hits every incident triangle. There t is
// computed from the shared edge or vertex alone, so the incident triangles tie exactly and the
// caller's rule (smallest t, then lowest triangle index) picks the same one on every device.
// Returns (t, u, v, hit) with P = (1-u-v) a + u b + v c.
fn intersect_triangle(o: vec3<f32>, d: vec3<f32>, k: vec3<u32>, tmin: f32, tmax: f32,
                      a: vec3<f32>, b: vec3<f32>, c: vec3<f32>) -> vec4<f32> {
    return hit_sheared(shear(o, d, k, a, b, c), d, k, tmin, tmax);
}

// The second half of `intersect_triangle`, on the triangle already seen from the ray (the walk
// has sheared it to choose its edge).
fn hit_sheared(s: Sheared, d: vec3<f32>, k: vec3<u32>, tmin: f32, tmax: f32) -> vec4<f32> {
    let pa = s.pa;
    let pb = s.pb;
    let pc = s.pc;
    let dz = d[k.z];
    let u = s.uvw.x;
    let v = s.uvw.y;
    let w = s.uvw.z;
    let miss = vec4<f32>(0.0, 0.0, 0.0, 0.0);
    if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
        return miss;
    }
    let det = ordered_sum(u, v, w);
    if det == 0.0 {
        return miss;
    }
    var t: f32;
    if u == 0.0 && v == 0.0 {
        t = pc[k.z] / dz;
    } else if u == 0.0 && w == 0.0 {
        t = pb[k.z] / dz;
    } else if v == 0.0 && w == 0.0 {
        t = pa[k.z] / dz;
    } else if u == 0.0 {
        t = edge_t(pb, s.b2, pc, s.c2, k.z, dz);
    } else if v == 0.0 {
        t = edge_t(pc, s.c2, pa, s.a2, k.z, dz);
    } else if w == 0.0 {
        t = edge_t(pa, s.a2, pb, s.b2, k.z, dz);
    } else {
        t = ordered_sum(u * pa[k.z], v * pb[k.z], w * pc[k.z]) / (det * dz);
    }
    if !(t >= tmin && t <= tmax) {
        return miss;
    }
    return vec4<f32>(t, v / det, w / det, 1.0);
}

// Reciprocal of a direction with zero components replaced by a tiny positive value, so that the
// slab test never computes 0 * inf.
fn safe_inverse(d: vec3<f32>) -> vec3<f32> {
    return 1.0 / select(d, vec3<f32>(1.0e-30), abs(d) < vec3<f32>(1.0e-30));
}

// Slab test of a box against the ray segment [tmin, tmax], widened by a relative 2e-6 so that a
// box is never missed through rounding (the triangle test decides). On an axis the ray is
// parallel to (|d| < 1e-30), the ray is in the slab for every t when its origin is (bounds
// included) and never otherwise. Returns (entry distance, 1) on a hit, (0, 0) on a miss.
fn box_entry(o: vec3<f32>, d: vec3<f32>, inv: vec3<f32>, tmin: f32, tmax: f32, lo: vec3<f32>, hi: vec3<f32>) -> vec2<f32> {
    let parallel = abs(d) < vec3<f32>(1.0e-30);
    let inside = (o >= lo) & (o <= hi);
    if any(parallel & !inside) {
        return vec2<f32>(0.0, 0.0);
    }
    let t0 = (lo - o) * inv;
    let t1 = (hi - o) * inv;
    let near = select(min(t0, t1), vec3<f32>(-3.0e38), parallel);
    let far = select(max(t0, t1), vec3<f32>(3.0e38), parallel);
    let tn = max(max(near.x, near.y), near.z);
    let tf = min(min(far.x, far.y), far.z);
    let enter = max(tn - abs(tn) * 2.0e-6, tmin);
    if enter <= min(tf + abs(tf) * 2.0e-6, tmax) {
        return vec2<f32>(enter, 1.0);
    }
    return vec2<f32>(0.0, 0.0);
}

fn hit_box(o: vec3<f32>, d: vec3<f32>, inv: vec3<f32>, tmin: f32, tmax: f32, lo: vec3<f32>, hi: vec3<f32>) -> bool {
    return box_entry(o, d, inv, tmin, tmax, lo, hi).y != 0.0;
}
