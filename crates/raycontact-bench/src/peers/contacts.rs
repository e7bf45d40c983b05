//! The peer of the `contacts` benchmark: parry3d casting the volumetric inward rays of two
//! bodies through its own BVHs, with its own box filter.

use std::collections::BTreeSet;

use glam::Vec3;
use parry3d::bounding_volume::Aabb;
use parry3d::partitioning::{Bvh, BvhBuildStrategy};
use parry3d::query::{Ray, RayCast};
use parry3d::shape::Triangle;
use raycontact::meshes::TriMesh;
use rayon::prelude::*;

/// A contact as the `contacts` benchmark compares them: (source body, source vertex, target
/// body).
pub type VertexKey = (u32, u32, u32);

/// parry3d doing the same work: normals (raycontact's CPU twin, one thread), both BVHs rebuilt
/// from the triangle boxes, the same rays from every source vertex in the box overlap, the same
/// two validity tests, with parry's ray-triangle test. Returns the contacts and the rays cast.
pub fn parry_frame(
    a: &TriMesh,
    pb: &[Vec3],
    b_tris: &[[u32; 3]],
    parallel: bool,
) -> (BTreeSet<VertexKey>, u64) {
    let bodies = [(&a.positions[..], &a.triangles[..]), (pb, b_tris)];
    let prep: Vec<(Vec<Vec3>, Bvh, Aabb)> = bodies
        .iter()
        .map(|(p, t)| {
            let flat: Vec<u32> = t.iter().flatten().copied().collect();
            let mut offsets = vec![0u32; p.len() + 1];
            for tri in t.iter() {
                for &v in tri {
                    offsets[v as usize + 1] += 1;
                }
            }
            for i in 0..p.len() {
                offsets[i + 1] += offsets[i];
            }
            let mut fill = offsets.clone();
            let mut inc = vec![0u32; flat.len()];
            for (ti, tri) in t.iter().enumerate() {
                for &v in tri {
                    inc[fill[v as usize] as usize] = ti as u32;
                    fill[v as usize] += 1;
                }
            }
            let mut normals = vec![Vec3::ZERO; p.len()];
            raycontact::internals::cpu::vertex_normals(p, &flat, &offsets, &inc, &mut normals);
            let boxes: Vec<Aabb> = t
                .iter()
                .map(|tri| {
                    let [x, y, z] = tri.map(|v| p[v as usize]);
                    Aabb::new(x.min(y).min(z), x.max(y).max(z))
                })
                .collect();
            let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &boxes);
            let total = boxes
                .iter()
                .fold(Aabb::new_invalid(), |acc, b| Aabb::new(acc.mins.min(b.mins), acc.maxs.max(b.maxs)));
            (normals, bvh, total)
        })
        .collect();
    let cast = |body: usize, ray: &Ray, max: f32, ignore: u32| -> Option<(u32, f32)> {
        let (p, t) = bodies[body];
        prep[body].1.cast_ray(ray, max, |leaf, best| {
            let tri = t[leaf as usize];
            if tri.contains(&ignore) {
                return None;
            }
            let [x, y, z] = tri.map(|v| p[v as usize]);
            Triangle::new(x, y, z).cast_local_ray(ray, best, false)
        })
    };
    let overlap_lo = prep[0].2.mins.max(prep[1].2.mins);
    let overlap_hi = prep[0].2.maxs.min(prep[1].2.maxs);
    let one = |src: usize, dst: usize, v: u32| -> Option<VertexKey> {
        let (p, _) = bodies[src];
        let o = p[v as usize];
        if o.cmplt(overlap_lo).any() || o.cmpgt(overlap_hi).any() {
            return None;
        }
        let n = prep[src].0[v as usize];
        if n == Vec3::ZERO {
            return None;
        }
        let ray = Ray::new(o, -n);
        let (tri, t2) = cast(dst, &ray, f32::MAX, u32::MAX)?;
        let (pd, td) = bodies[dst];
        let [x, y, z] = td[tri as usize].map(|i| pd[i as usize]);
        if (y - x).cross(z - x).dot(n) >= 0.0 {
            return None;
        }
        if let Some((_, t3)) = cast(src, &ray, t2, v) {
            if t3 < t2 {
                return None;
            }
        }
        Some((src as u32, v, dst as u32))
    };
    let jobs: Vec<(usize, usize, u32)> = [(0usize, 1usize), (1, 0)]
        .iter()
        .flat_map(|&(s, d)| (0..bodies[s].0.len() as u32).map(move |v| (s, d, v)))
        .collect();
    let rays = jobs
        .iter()
        .filter(|(s, _, v)| {
            let o = bodies[*s].0[*v as usize];
            !(o.cmplt(overlap_lo).any() || o.cmpgt(overlap_hi).any())
        })
        .count() as u64;
    let keys = if parallel {
        jobs.par_iter().filter_map(|&(s, d, v)| one(s, d, v)).collect()
    } else {
        jobs.iter().filter_map(|&(s, d, v)| one(s, d, v)).collect()
    };
    (keys, rays)
}
