//! The peer: parry3d doing the narrow phase's work on any number of bodies, its BVHs rebuilt
//! every frame, casting the same rays with the same two validity tests as raycontact.

use parry3d::bounding_volume::Aabb;
use parry3d::partitioning::{Bvh, BvhBuildStrategy};
use parry3d::query::{Ray, RayCast};
use parry3d::shape::Triangle;
use rayon::prelude::*;

use glam::Vec3;

use crate::scenes::Instance;

/// A contact as the suite compares them: (source body, source vertex, target body).
pub type Key = (u32, u32, u32);

/// A body's topology, built once (as raycontact builds it when a body is added).
struct Topology {
    triangles: Vec<[u32; 3]>,
    flat: Vec<u32>,
    offsets: Vec<u32>,
    incident: Vec<u32>,
}

impl Topology {
    fn new(triangles: &[[u32; 3]], vertices: usize) -> Self {
        let flat: Vec<u32> = triangles.iter().flatten().copied().collect();
        let mut offsets = vec![0u32; vertices + 1];
        for tri in triangles {
            for &v in tri {
                offsets[v as usize + 1] += 1;
            }
        }
        for i in 0..vertices {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut incident = vec![0u32; flat.len()];
        for (ti, tri) in triangles.iter().enumerate() {
            for &v in tri {
                incident[fill[v as usize] as usize] = ti as u32;
                fill[v as usize] += 1;
            }
        }
        Topology { triangles: triangles.to_vec(), flat, offsets, incident }
    }
}

/// One body's per-frame data on the parry side.
struct Prepared {
    normals: Vec<Vec3>,
    bvh: Bvh,
    bounds: Aabb,
}

/// What one parry frame found.
pub struct ParryFrame {
    /// The contacts, sorted.
    pub keys: Vec<Key>,
    /// Rays cast: one inward ray per source vertex in the pair's box overlap, plus the own-body
    /// check for those that hit a back face.
    pub rays: u64,
}

/// parry3d set up for an instance, on its own rayon pool.
pub struct Parry {
    bodies: Vec<Topology>,
    pairs: Option<Vec<(usize, usize)>>,
    pool: rayon::ThreadPool,
}

impl Parry {
    /// parry3d for the bodies of `inst`, on `threads` threads (`None`: one per core).
    pub fn new(inst: &Instance, threads: Option<usize>) -> Self {
        let mut b = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("parry-{i}"));
        if let Some(t) = threads {
            b = b.num_threads(t);
        }
        Parry {
            bodies: inst
                .bodies
                .iter()
                .map(|b| Topology::new(&b.mesh.triangles, b.mesh.positions.len()))
                .collect(),
            pairs: inst.pairs.clone(),
            pool: b.build().expect("rayon pool"),
        }
    }

    /// Worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// One frame: normals (raycontact's CPU twin), every BVH rebuilt from the triangle boxes
    /// (binned SAH), the overlapping pairs (or the given ones), then the rays of every directed
    /// pair with parry's ray-triangle test.
    pub fn frame(&self, positions: &[&[Vec3]]) -> ParryFrame {
        self.pool.install(|| self.frame_inner(positions))
    }

    fn frame_inner(&self, positions: &[&[Vec3]]) -> ParryFrame {
        let prep: Vec<Prepared> = self
            .bodies
            .par_iter()
            .zip(positions.par_iter())
            .map(|(topo, p)| {
                let mut normals = vec![Vec3::ZERO; p.len()];
                raycontact::cpu::vertex_normals(p, &topo.flat, &topo.offsets, &topo.incident, &mut normals);
                let boxes: Vec<Aabb> = topo
                    .triangles
                    .iter()
                    .map(|tri| {
                        let [x, y, z] = tri.map(|v| p[v as usize]);
                        Aabb::new(x.min(y).min(z), x.max(y).max(z))
                    })
                    .collect();
                let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &boxes);
                let bounds = boxes.iter().fold(Aabb::new_invalid(), |acc, b| {
                    Aabb::new(acc.mins.min(b.mins), acc.maxs.max(b.maxs))
                });
                Prepared { normals, bvh, bounds }
            })
            .collect();
        let pairs: Vec<(usize, usize)> = match &self.pairs {
            Some(p) => p.clone(),
            None => {
                let n = prep.len();
                (0..n)
                    .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                    .filter(|&(i, j)| {
                        let (a, b) = (&prep[i].bounds, &prep[j].bounds);
                        a.mins.cmple(b.maxs).all() && b.mins.cmple(a.maxs).all()
                    })
                    .collect()
            }
        };
        let cast = |body: usize, ray: &Ray, max: f32, ignore: u32| -> Option<(u32, f32)> {
            let (p, t) = (positions[body], &self.bodies[body].triangles);
            prep[body].bvh.cast_ray(ray, max, |leaf, best| {
                let tri = t[leaf as usize];
                if tri.contains(&ignore) {
                    return None;
                }
                let [x, y, z] = tri.map(|v| p[v as usize]);
                Triangle::new(x, y, z).cast_local_ray(ray, best, false)
            })
        };
        let directed: Vec<(usize, usize)> = pairs.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
        let (rays, mut keys) = directed
            .par_iter()
            .map(|&(src, dst)| {
                let lo = prep[src].bounds.mins.max(prep[dst].bounds.mins);
                let hi = prep[src].bounds.maxs.min(prep[dst].bounds.maxs);
                (0..positions[src].len() as u32)
                    .into_par_iter()
                    .with_min_len(256)
                    .fold(
                        || (0u64, Vec::new()),
                        |(mut rays, mut keys), v| {
                            let o = positions[src][v as usize];
                            let n = prep[src].normals[v as usize];
                            if o.cmplt(lo).any() || o.cmpgt(hi).any() || n == Vec3::ZERO {
                                return (rays, keys);
                            }
                            let ray = Ray::new(o, -n);
                            rays += 1;
                            let Some((tri, t2)) = cast(dst, &ray, f32::MAX, u32::MAX) else {
                                return (rays, keys);
                            };
                            let (pd, td) = (positions[dst], &self.bodies[dst].triangles);
                            let [x, y, z] = td[tri as usize].map(|i| pd[i as usize]);
                            if (y - x).cross(z - x).dot(n) >= 0.0 {
                                return (rays, keys);
                            }
                            rays += 1;
                            if cast(src, &ray, t2, v).is_some_and(|(_, t3)| t3 < t2) {
                                return (rays, keys);
                            }
                            keys.push((src as u32, v, dst as u32));
                            (rays, keys)
                        },
                    )
                    .reduce(
                        || (0u64, Vec::new()),
                        |(ra, mut ka), (rb, kb)| {
                            ka.extend(kb);
                            (ra + rb, ka)
                        },
                    )
            })
            .reduce(
                || (0u64, Vec::new()),
                |(ra, mut ka), (rb, kb)| {
                    ka.extend(kb);
                    (ra + rb, ka)
                },
            );
        keys.sort_unstable();
        ParryFrame { keys, rays }
    }
}
