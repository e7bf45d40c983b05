//! The peer: parry3d casting the same rays as raycontact, classified by the same rules.
//!
//! Every frame the peer computes the vertex normals and body boxes with raycontact's CPU twins
//! (`cpu::vertex_normals`, `cpu::triangle_bounds`), rebuilds every body's parry3d BVH from the
//! triangle boxes (binned SAH), takes the same pairs (`cpu::broad_phase`, self pairs of every
//! cloth included, or the scene's list) and runs raycontact's classification
//! (`cpu::classify`, every case of Lehericey et al. 2015: inward and outward rays, predictions,
//! inversions) with a [`ParryTracer`]: each trace is a closest-hit cast through parry3d's BVH
//! with parry3d's ray–triangle test. Only the ray casts differ from the CPU reference.

use glam::Vec3;
use parry3d::bounding_volume::Aabb;
use parry3d::partitioning::{Bvh, BvhBuildStrategy};
use parry3d::query::RayCast;
use parry3d::shape::Triangle;
use raycontact::Scene;
use raycontact::internals::Packing;
use raycontact::internals::layout::{
    BodyPair, BodyState, ContactGpu, NONE, Ray, RayHit, SELF_CLOTH, WalkCounts,
};
use raycontact::internals::{
    FrameData,
    cpu::{self, Narrow, Rays, Traced, Tracer},
};
use rayon::prelude::*;

use crate::scenes::Instance;

/// A contact as the suite compares them: (source body, source vertex, target body, outward ray).
pub type Key = (u32, u32, u32, bool);

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
    pub bvhs: &'a [Bvh],
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
        Traced { hit, walked: false, steps: 0, outcome: NONE }
    }
}

/// What one parry frame found.
pub struct ParryFrame {
    /// The contacts, as raycontact's classification wrote them (packed body = instance body).
    pub contacts: Vec<ContactGpu>,
    /// Rays cast (traces on the target and on the source's own body, every case).
    pub rays: u64,
}

/// parry3d set up for an instance, on its own rayon pool.
pub struct Parry {
    packing: Packing,
    pairs: Option<Vec<(usize, usize)>>,
    prediction: f32,
    pool: rayon::ThreadPool,
    frame: FrameData,
    current: Vec<Vec3>,
    previous: Vec<Vec3>,
}

impl Parry {
    /// parry3d for the bodies of `inst`, on `threads` threads (`None`: one per core). The packed
    /// layout (topology, adjacency, kinds, half-thicknesses) is taken from a raycontact CPU
    /// scene holding the same bodies, so packed body `i` is the instance's body `i`.
    pub fn new(inst: &Instance, threads: Option<usize>) -> Result<Self, String> {
        let mut b = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("parry-{i}"));
        if let Some(t) = threads {
            b = b.num_threads(t);
        }
        let mut scene = Scene::new_cpu(Some(1)).map_err(|e| e.to_string())?;
        for (i, body) in inst.bodies.iter().enumerate() {
            scene
                .add_body(inst.positions_at(0, i), &body.mesh.triangles, body.kind)
                .map_err(|e| e.to_string())?;
        }
        scene.update().map_err(|e| e.to_string())?;
        Ok(Parry {
            packing: scene.packing().clone(),
            pairs: inst.pairs.clone(),
            prediction: inst.prediction,
            pool: b.build().map_err(|e| e.to_string())?,
            frame: FrameData::default(),
            current: Vec::new(),
            previous: Vec::new(),
        })
    }

    /// Worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// One frame: normals and boxes (raycontact's CPU twins), every parry3d BVH rebuilt from the
    /// triangle boxes (binned SAH), the pairs, then raycontact's classification of every source
    /// vertex of every directed pair with a [`ParryTracer`].
    pub fn frame(&mut self, positions: &[&[Vec3]]) -> ParryFrame {
        std::mem::swap(&mut self.previous, &mut self.current);
        self.current.clear();
        for p in positions {
            self.current.extend_from_slice(p);
        }
        if self.previous.len() != self.current.len() {
            self.previous.clone_from(&self.current);
        }
        let pool = &self.pool;
        pool.install(|| {
            let (packing, current, frame) = (&self.packing, &self.current, &mut self.frame);
            frame.normals.resize(current.len(), Vec3::ZERO);
            frame.tri_boxes.resize(packing.params.tri_count as usize, Default::default());
            frame.body_state.clear();
            frame.body_state.resize(packing.bodies.len(), BodyState::default());
            cpu::vertex_normals(
                current,
                &packing.triangles,
                &packing.vertex_tri_offsets,
                &packing.vertex_tris,
                &mut frame.normals,
            );
            cpu::triangle_bounds(packing, current, &mut frame.tri_boxes, &mut frame.body_state);
            // The broad phase reads a body's box only when it has leaves (the Morton stage
            // counts them in raycontact): its non-degenerate triangles.
            for (b, state) in packing.bodies.iter().zip(frame.body_state.iter_mut()) {
                let range = b.tri_offset as usize..(b.tri_offset + b.tri_count) as usize;
                state.leaf_count = frame.tri_boxes[range].iter().filter(|t| t.flags & 1 == 0).count() as u32;
                state.degenerate_count = b.tri_count - state.leaf_count;
            }
            let bvhs: Vec<Bvh> = packing
                .bodies
                .par_iter()
                .map(|b| {
                    let range = b.tri_offset as usize..(b.tri_offset + b.tri_count) as usize;
                    let boxes: Vec<Aabb> =
                        frame.tri_boxes[range].iter().map(|t| Aabb::new(t.min, t.max)).collect();
                    Bvh::from_leaves(BvhBuildStrategy::Binned, &boxes)
                })
                .collect();
            let pairs: Vec<BodyPair> = match &self.pairs {
                Some(p) => p
                    .iter()
                    .map(|&(a, b)| BodyPair { a: a as u32, b: b as u32, prediction: self.prediction, pad: 0 })
                    .collect(),
                None => cpu::broad_phase(&packing.bodies, &frame.body_state, SELF_CLOTH, self.prediction),
            };
            let cx =
                Narrow { packing, frame, positions: current, previous: &self.previous, remember_exit: false };
            classify_pairs(&cx, &ParryTracer { bvhs: &bvhs }, &pairs)
        })
    }
}

/// Every directed pair of `pairs` (a self pair once, as `cpu::narrow_phase` numbers them)
/// classified with `tracer`: the contacts, and the rays counted in `fallback_casts`.
fn classify_pairs<T: Tracer>(cx: &Narrow<'_>, tracer: &T, pairs: &[BodyPair]) -> ParryFrame {
    // The same source vertices as raycontact's narrow phase (within reach of the other box).
    let sources = cpu::ray_sources(cx.packing, &cx.frame.body_state, cx.positions, pairs);
    let join = |(mut x, rx): (Vec<ContactGpu>, u64), (mut y, ry): (Vec<ContactGpu>, u64)| {
        x.append(&mut y);
        (x, rx + ry)
    };
    let (contacts, rays) = sources
        .par_chunks(256)
        .map(|chunk| {
            let mut acc = Vec::new();
            let mut rays = 0u64;
            for &[k, v] in chunk {
                let p = &pairs[(k / 2) as usize];
                let (a, b) = if k % 2 == 0 { (p.a, p.b) } else { (p.b, p.a) };
                let c = cpu::classify(
                    cx,
                    tracer,
                    (a as usize, v, b as usize, k),
                    p.prediction,
                    Rays::BOTH,
                    &mut acc,
                );
                rays += c.fallback_casts as u64;
            }
            (acc, rays)
        })
        .reduce(|| (Vec::new(), 0), join);
    ParryFrame { contacts, rays }
}
