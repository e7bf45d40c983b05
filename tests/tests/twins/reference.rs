//! Independent references for the CPU twins, written without reading them: a Möller–Trumbore
//! ray–triangle test in f64, a brute-force closest hit that reports how clear its answer is,
//! a bit-by-bit Morton interleave, and a packed CPU scene to run the twins on.

use glam::{DVec3, Vec3};
use raycontact::internals::FrameData;
use raycontact::internals::Packing;
use raycontact::internals::cpu::Narrow;
use raycontact::internals::layout::Ray;
use raycontact::meshes::TriMesh;
use raycontact::{BodyKind, Scene};

/// A ray against a triangle in f64 (Möller–Trumbore): the ray parameter `t` (in units of the
/// ray's direction, as `Ray` counts it), the barycentric weights `(u, v)` of the second and
/// third corners, and how clear the answer is.
#[derive(Clone, Copy, Debug)]
pub struct Crossing {
    /// Where the ray's line meets the triangle's plane.
    pub t: f64,
    /// Barycentric weight of the second corner.
    pub u: f64,
    /// Barycentric weight of the third corner.
    pub v: f64,
    /// The smallest of the three barycentric weights: > 0 inside, < 0 outside; its absolute
    /// value is the distance from the nearest edge line in barycentric units.
    pub margin: f64,
    /// `|cos|` of the angle between the ray and the triangle's normal (0: grazing).
    pub cosine: f64,
}

/// The line of `o + t d` against the plane of (a, b, c); `None` when parallel or degenerate.
pub fn crossing(o: Vec3, d: Vec3, a: Vec3, b: Vec3, c: Vec3) -> Option<Crossing> {
    let (o, d, a, b, c) = (o.as_dvec3(), d.as_dvec3(), a.as_dvec3(), b.as_dvec3(), c.as_dvec3());
    let (e1, e2) = (b - a, c - a);
    let p = d.cross(e2);
    let det = e1.dot(p);
    let n = e1.cross(e2);
    if n.length() == 0.0 || d.length() == 0.0 || det == 0.0 {
        return None;
    }
    let inv = 1.0 / det;
    let s = o - a;
    let u = s.dot(p) * inv;
    let q = s.cross(e1);
    let v = d.dot(q) * inv;
    let t = e2.dot(q) * inv;
    let cosine = (d.dot(n) / (d.length() * n.length())).abs();
    Some(Crossing { t, u, v, margin: u.min(v).min(1.0 - u - v), cosine })
}

/// The closest hit of a brute force over every triangle, with the clearance of the answer.
#[derive(Clone, Copy, Debug)]
pub struct BruteHit {
    /// The closest triangle hit (mesh index), or `None`.
    pub triangle: Option<u32>,
    /// Its `t`.
    pub t: f64,
    /// Its barycentric weights.
    pub uv: (f64, f64),
    /// Whether the answer is clear: no triangle's crossing within `eps` (barycentric) of its
    /// edges, none grazing, no second hit within a relative `eps` of the first, none within
    /// `eps` of the ray's ends.
    pub clear: bool,
}

/// Brute-force closest hit of `ray` on `tris` (skipping those that use vertex `ignore`),
/// in f64.
pub fn brute_closest(positions: &[Vec3], tris: &[[u32; 3]], ray: &Ray, ignore: Option<u32>) -> BruteHit {
    const EPS: f64 = 1e-4;
    let (tmin, tmax) = (ray.tmin as f64, ray.tmax as f64);
    let mut hits: Vec<(f64, u32, f64, f64)> = Vec::new();
    let mut clear = true;
    for (i, t) in tris.iter().enumerate() {
        if ignore.is_some_and(|v| t.contains(&v)) {
            continue;
        }
        let [a, b, c] = t.map(|k| positions[k as usize]);
        let Some(x) = crossing(ray.origin, ray.dir, a, b, c) else { continue };
        let scale = x.t.abs().max(1e-3);
        let in_range = x.t >= tmin - EPS * scale && x.t <= tmax + EPS * scale;
        let near_edge = x.margin.abs() < EPS;
        let grazing = x.margin > 0.0 && x.cosine < 1e-3;
        if in_range && (near_edge || grazing) {
            // Too close to an edge or too grazing to say which way f32 goes.
            clear = false;
        }
        if x.margin < 0.0 {
            continue;
        }
        if (x.t - tmin).abs() < EPS * scale || (x.t - tmax).abs() < EPS * scale {
            clear = false;
        }
        if x.t >= tmin && x.t <= tmax {
            hits.push((x.t, i as u32, x.u, x.v));
        }
    }
    hits.sort_by(|p, q| p.0.total_cmp(&q.0));
    if hits.len() >= 2 && hits[1].0 - hits[0].0 < EPS * hits[0].0.abs().max(1e-3) {
        clear = false;
    }
    match hits.first() {
        Some(&(t, tri, u, v)) => BruteHit { triangle: Some(tri), t, uv: (u, v), clear },
        None => BruteHit { triangle: None, t: f64::INFINITY, uv: (0.0, 0.0), clear },
    }
}

/// Interleaves the low 10 bits of x, y, z one bit at a time, x the highest of each triple.
pub fn interleave(x: u32, y: u32, z: u32) -> u32 {
    let mut code = 0;
    for bit in 0..10 {
        code |= ((x >> bit) & 1) << (3 * bit + 2);
        code |= ((y >> bit) & 1) << (3 * bit + 1);
        code |= ((z >> bit) & 1) << (3 * bit);
    }
    code
}

/// Meshes packed as a CPU scene packs them: the packing, the packed positions, and the frame
/// every per-frame twin builds from them (`FrameData::build`).
pub struct Packed {
    /// The packing (bodies in the order given).
    pub packing: Packing,
    /// All bodies' positions, packed.
    pub positions: Vec<Vec3>,
    /// The frame the twins build.
    pub frame: FrameData,
}

impl Packed {
    /// Packs `bodies` through a CPU scene and builds the frame with the twins.
    pub fn new(bodies: &[(&TriMesh, BodyKind)]) -> Self {
        let mut scene = Scene::new_cpu(Some(1)).unwrap();
        for (m, k) in bodies {
            scene.add_body(&m.positions, &m.triangles, *k).unwrap();
        }
        scene.update().unwrap();
        let packing = scene.packing().clone();
        assert_eq!(packing.ids.len(), bodies.len());
        let positions: Vec<Vec3> = bodies.iter().flat_map(|(m, _)| m.positions.iter().copied()).collect();
        let frame = FrameData::build(&packing, &positions);
        Packed { packing, positions, frame }
    }

    /// The triangles of packed body `b`, body-local.
    pub fn triangles(&self, b: usize) -> Vec<[u32; 3]> {
        let body = &self.packing.bodies[b];
        (body.tri_offset..body.tri_offset + body.tri_count)
            .map(|t| {
                let g = 3 * t as usize;
                let tri = &self.packing.triangles[g..g + 3];
                [0, 1, 2].map(|i| tri[i] - body.vertex_offset)
            })
            .collect()
    }

    /// The narrow phase's context on this frame (the previous positions the current ones; exits
    /// not remembered; inversions handled).
    pub fn narrow(&self) -> Narrow<'_> {
        Narrow {
            packing: &self.packing,
            frame: &self.frame,
            positions: &self.positions,
            previous: &self.positions,
            remember_exit: false,
            inversions: true,
        }
    }

    /// The positions of packed body `b`.
    pub fn positions(&self, b: usize) -> &[Vec3] {
        let body = &self.packing.bodies[b];
        &self.positions[body.vertex_offset as usize..(body.vertex_offset + body.vertex_count) as usize]
    }
}

/// Axis-aligned box of points, in f64.
pub fn bounds(points: impl IntoIterator<Item = Vec3>) -> Option<(DVec3, DVec3)> {
    points.into_iter().fold(None, |acc, p| {
        let p = p.as_dvec3();
        Some(match acc {
            None => (p, p),
            Some((lo, hi)) => (lo.min(p), hi.max(p)),
        })
    })
}
