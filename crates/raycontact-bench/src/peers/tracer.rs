//! [`ParryTracer`]: raycontact's classification tracing through parry3d.

use glam::Vec3;
use parry3d::bounding_volume::Aabb;
use parry3d::partitioning::Bvh;
use parry3d::query::RayCast;
use parry3d::shape::Triangle;
use raycontact::internals::cpu::{Narrow, Traced, Tracer, other_triangle_within};
use raycontact::internals::layout::{NONE, Ray, RayHit, WalkCounts};

/// Barycentric weights (of `b`, of `c`) of point `p` in triangle `(a, b, c)`.
fn barycentric(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> (f32, f32) {
    let (e0, e1, e2) = (b - a, c - a, p - a);
    let (d00, d01, d11) = (e0.dot(e0), e0.dot(e1), e1.dot(e1));
    let (d20, d21) = (e2.dot(e0), e2.dot(e1));
    let denom = d00 * d11 - d01 * d01;
    if denom == 0.0 {
        return (0.0, 0.0);
    }
    ((d11 * d20 - d01 * d21) / denom, (d00 * d21 - d01 * d20) / denom)
}

/// raycontact's [`Tracer`] casting through parry3d: the closest hit on body `b` through its
/// parry3d BVH (`Bvh::cast_ray`, best first) with parry3d's ray–triangle test, skipping the
/// triangles of the ignored vertex and hits before `tmin`; `u`, `v` are computed from the hit
/// point. Every trace counts one ray in [`WalkCounts::fallback_casts`] (a cast through a BVH)
/// and its hits in `fallback_hits`: the classification returns them per source vertex.
pub struct ParryTracer<'a> {
    /// One parry3d BVH per packed body, leaf = body-local triangle.
    pub bvhs: &'a [&'a Bvh],
}

impl Tracer for ParryTracer<'_> {
    fn trace(
        &self,
        cx: &Narrow<'_>,
        b: usize,
        ray: &Ray,
        ignore: u32,
        _hint: u32,
        counts: &mut WalkCounts,
    ) -> Traced {
        counts.fallback_casts += 1;
        let body = &cx.packing.bodies[b];
        let tris = &cx.packing.triangles;
        let pr = parry3d::query::Ray::new(ray.origin, ray.dir);
        let corners = |leaf: u32| -> Option<[Vec3; 3]> {
            let g = 3 * (body.tri_offset + leaf) as usize;
            let idx = [tris[g], tris[g + 1], tris[g + 2]];
            (!idx.contains(&ignore)).then(|| idx.map(|i| cx.positions[i as usize]))
        };
        let found = self.bvhs[b].cast_ray(&pr, ray.tmax.min(f32::MAX), |leaf, best| {
            let [x, y, z] = corners(leaf)?;
            Triangle::new(x, y, z).cast_local_ray(&pr, best, false).filter(|&t| t >= ray.tmin)
        });
        let hit = match found {
            Some((leaf, t)) => {
                counts.fallback_hits += 1;
                let [x, y, z] = corners(leaf).expect("a hit triangle is not ignored");
                let (u, v) = barycentric(ray.origin + t * ray.dir, x, y, z);
                RayHit { t, triangle: leaf, u, v, ..RayHit::MISS }
            }
            None => RayHit::MISS,
        };
        Traced::cast(hit, None)
    }

    /// The same rays as raycontact's are not cast: those that cannot reach body `b`, here where
    /// no leaf box of its parry3d BVH meets the cube of half-side `r` around `p` (the same test
    /// as raycontact's: a leaf box grown by `r` holds `p`); for a self pair (a vertex to
    /// ignore), where none of those leaves' triangles without that vertex comes within `r` of
    /// `p` (raycontact's test of a leaf, `cpu::other_triangle_within`).
    fn may_reach(&self, cx: &Narrow<'_>, b: usize, p: Vec3, r: f32, ignore: u32) -> bool {
        let cube = Aabb::new(p - Vec3::splat(r), p + Vec3::splat(r));
        let mut leaves = self.bvhs[b].intersect_aabb(&cube);
        if ignore == NONE {
            return leaves.next().is_some();
        }
        let (body, tris) = (&cx.packing.bodies[b], &cx.packing.triangles);
        leaves.any(|leaf| other_triangle_within(body, cx.positions, tris, leaf, p, r, ignore))
    }
}
