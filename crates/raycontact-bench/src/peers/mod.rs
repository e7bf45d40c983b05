//! The peer: parry3d, the only module that uses it.
//!
//! In the suite, parry3d casts the same rays as raycontact, classified by the same rules.
//! Every frame the peer computes the vertex normals and body boxes with raycontact's CPU twins
//! (`cpu::vertex_normals`, `cpu::triangle_bounds`), brings every body's parry3d BVH up to date
//! ([`ParryMode`]: rebuilt from the triangle boxes, binned SAH; or parry3d's deformable
//! `TriMesh` refitted by `set_vertices`), takes the same pairs (`cpu::broad_phase`, self pairs of every
//! cloth included, or the scene's list) and runs raycontact's classification
//! (`cpu::classify`, every case of Lehericey et al. 2015: inward and outward rays, predictions,
//! inversions) with a [`ParryTracer`]: each trace is a closest-hit cast through parry3d's BVH
//! with parry3d's ray–triangle test. A trace asked again by another pair (a volumetric body's
//! own-body trace, in each of its cloth pairs, or in a later frame while its body does not move)
//! is answered from a `TraceMemo`, as on raycontact's CPU backend. Only the ray casts differ from
//! the CPU reference: parry3d's ray–triangle test (`Triangle::cast_local_ray`) is not watertight,
//! so a ray through an edge that two triangles share can miss both where raycontact's watertight
//! test hits one of them, and the peer's contacts then differ from the reference's (by one
//! contact in a frame of `resting-pile` and one of `cloth-layers`: an own-body ray, then a
//! cloth's outward ray, each through a shared edge, both triangles missed by parry3d).
//!
//! [`suite`] runs an instance on it ([`ParryRun`]); [`bvh`] and [`contacts`] are the peers of the older
//! single-purpose benchmarks (`bvh`: the BVH build alone; `contacts`: volumetric inward rays
//! with parry3d's own box filter).

mod bvh;
mod contacts;
mod suite;
mod tracer;

pub use bvh::{BvhBuildStrategy, parry_build};
pub use contacts::{VertexKey, parry_frame};
pub use suite::ParryRun;
pub use tracer::ParryTracer;

use std::sync::Arc;

use glam::Vec3;
use parry3d::bounding_volume::Aabb;
use parry3d::partitioning::{Bvh, BvhBuildStrategy as Strategy};
use parry3d::shape::{TriMesh, TriMeshFlags};
use raycontact::Scene;
use raycontact::internals::Packing;
use raycontact::internals::layout::{BodyGpu, BodyPair, BodyState, ContactGpu, SELF_CLOTH};
use raycontact::internals::trace_memo::TraceMemo;
use raycontact::internals::{
    FrameData,
    cpu::{self, Narrow, Rays, Tracer},
};
use rayon::prelude::*;

use crate::scenes::Instance;

/// What one parry frame found.
pub struct ParryFrame {
    /// The contacts, as raycontact's classification wrote them (packed body = instance body).
    pub contacts: Vec<ContactGpu>,
    /// Rays cast (traces on the target and on the source's own body, every case; not those the
    /// memo answered).
    pub rays: u64,
}

/// How the peer's BVHs follow the bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParryMode {
    /// Every body's `Bvh` rebuilt from its triangle boxes every frame (`Bvh::from_leaves`,
    /// binned SAH).
    Rebuild,
    /// One `TriMesh` per body with `TriMeshFlags::DEFORMABLE`, built once, its vertices set every
    /// frame (`TriMesh::set_vertices`, which refits its BVH: parry3d's deformable path), the
    /// bodies in parallel.
    Refit,
}

/// parry3d set up for an instance, on its own rayon pool.
pub struct Parry {
    mode: ParryMode,
    /// The deformable meshes of [`ParryMode::Refit`], one per body.
    meshes: Vec<TriMesh>,
    /// The BVHs of [`ParryMode::Rebuild`], one per body, kept for the bodies that do not move.
    bvhs: Vec<Bvh>,
    /// Per body, whether its positions changed since the last frame (all at the first).
    moved: Vec<bool>,
    packing: Packing,
    pairs: Option<Vec<(usize, usize)>>,
    prediction: f32,
    pool: Arc<rayon::ThreadPool>,
    frame: FrameData,
    current: Vec<Vec3>,
    previous: Vec<Vec3>,
    /// The traces that skip a vertex, each cast once while its body does not move (as
    /// raycontact's CPU backend).
    memo: TraceMemo,
}

impl Parry {
    /// parry3d for the bodies of `inst`, on `pool`. The packed layout (topology, adjacency,
    /// kinds, half-thicknesses) is taken from a raycontact CPU scene holding the same bodies, so
    /// packed body `i` is the instance's body `i`.
    pub fn new(inst: &Instance, pool: Arc<rayon::ThreadPool>, mode: ParryMode) -> Result<Self, String> {
        // The scene only packs the bodies: on `pool`, so that it starts no thread of its own.
        let mut scene = Scene::new_cpu_on_pool(pool.clone());
        for (i, body) in inst.bodies.iter().enumerate() {
            let id = scene
                .add_body(inst.positions_at(0, i), &body.mesh.triangles, body.kind)
                .map_err(|e| e.to_string())?;
            // The same pairs as raycontact's: none between two static bodies.
            scene.set_static(id, !body.moving).map_err(|e| e.to_string())?;
        }
        scene.update().map_err(|e| e.to_string())?;
        let meshes = match mode {
            ParryMode::Rebuild => Vec::new(),
            ParryMode::Refit => inst
                .bodies
                .iter()
                .enumerate()
                .map(|(i, body)| {
                    let (p, t) = (inst.positions_at(0, i).to_vec(), body.mesh.triangles.clone());
                    TriMesh::with_flags(p, t, TriMeshFlags::DEFORMABLE)
                        .map_err(|e| format!("parry3d TriMesh: {e:?}"))
                })
                .collect::<Result<_, _>>()?,
        };
        Ok(Parry {
            mode,
            meshes,
            bvhs: Vec::new(),
            moved: Vec::new(),
            packing: scene.packing().clone(),
            pairs: inst.pairs.clone(),
            prediction: inst.prediction,
            pool,
            frame: FrameData::default(),
            current: Vec::new(),
            previous: Vec::new(),
            memo: TraceMemo::default(),
        })
    }

    /// Worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// One frame: normals and boxes (raycontact's CPU twins), the parry3d BVH of every body that
    /// moved rebuilt from the triangle boxes (binned SAH) or refitted ([`ParryMode`]), the
    /// pairs, then raycontact's classification of every source vertex of every directed pair
    /// with a [`ParryTracer`] (a trace asked again by another pair answered by a [`TraceMemo`],
    /// as on raycontact's CPU backend). A body whose positions are last frame's keeps its
    /// normals, boxes and BVH, as raycontact's CPU backend keeps them.
    pub fn frame(&mut self, positions: &[&[Vec3]]) -> ParryFrame {
        std::mem::swap(&mut self.previous, &mut self.current);
        self.current.clear();
        for p in positions {
            self.current.extend_from_slice(p);
        }
        let first = self.previous.len() != self.current.len();
        if first {
            self.previous.clone_from(&self.current);
        }
        let (bodies, current, previous) = (&self.packing.bodies, &self.current, &self.previous);
        self.moved.clear();
        self.moved.extend(bodies.iter().map(|b| first || current[vertices(b)] != previous[vertices(b)]));
        let pool = &self.pool;
        let (mode, meshes, kept, moved) = (self.mode, &mut self.meshes, &mut self.bvhs, &self.moved);
        let memo = &mut self.memo;
        pool.install(|| {
            let (packing, current, frame) = (&self.packing, &self.current, &mut self.frame);
            frame.normals.resize(current.len(), Vec3::ZERO);
            frame.tri_boxes.resize(packing.params.tri_count as usize, Default::default());
            if frame.body_state.len() != packing.bodies.len() {
                frame.body_state.clear();
                frame.body_state.resize(packing.bodies.len(), BodyState::default());
            }
            let (tris, offsets, incident) =
                (&packing.triangles, &packing.vertex_tri_offsets, &packing.vertex_tris);
            for body in packing.bodies.iter().zip(moved).filter(|(_, m)| **m).map(|(b, _)| b) {
                let range = vertices(body);
                frame.normals[range.clone()].par_iter_mut().enumerate().with_min_len(1024).for_each(
                    |(i, n)| {
                        *n = cpu::vertex_normal(current, tris, offsets, incident, range.start + i);
                    },
                );
            }
            cpu::triangle_bounds(packing, current, &mut frame.tri_boxes, &mut frame.body_state, moved);
            // The broad phase reads a body's box only when it has leaves (the Morton stage
            // counts them in raycontact): its non-degenerate triangles.
            for (b, state) in packing.bodies.iter().zip(frame.body_state.iter_mut()) {
                let range = b.tri_offset as usize..(b.tri_offset + b.tri_count) as usize;
                state.leaf_count = frame.tri_boxes[range].iter().filter(|t| t.flags & 1 == 0).count() as u32;
                state.degenerate_count = b.tri_count - state.leaf_count;
            }
            match mode {
                ParryMode::Rebuild => {
                    kept.resize_with(packing.bodies.len(), Bvh::default);
                    kept.par_iter_mut().zip(&packing.bodies).zip(moved).filter(|(_, m)| **m).for_each(
                        |((bvh, b), _)| {
                            let range = b.tri_offset as usize..(b.tri_offset + b.tri_count) as usize;
                            let boxes: Vec<Aabb> =
                                frame.tri_boxes[range].iter().map(|t| Aabb::new(t.min, t.max)).collect();
                            *bvh = Bvh::from_leaves(Strategy::Binned, &boxes);
                        },
                    );
                }
                ParryMode::Refit => {
                    meshes
                        .par_iter_mut()
                        .zip(positions)
                        .zip(moved)
                        .filter(|(_, m)| **m)
                        .for_each(|((m, p), _)| m.set_vertices(p));
                }
            };
            let bvhs: Vec<&Bvh> = match mode {
                ParryMode::Rebuild => kept.iter().collect(),
                ParryMode::Refit => meshes.iter().map(|m| m.bvh()).collect(),
            };
            let pairs: Vec<BodyPair> = match &self.pairs {
                Some(p) => p
                    .iter()
                    .map(|&(a, b)| BodyPair { a: a as u32, b: b as u32, prediction: self.prediction, pad: 0 })
                    .collect(),
                None => cpu::broad_phase(&packing.bodies, &frame.body_state, SELF_CLOTH, self.prediction),
            };
            let cx = Narrow {
                packing,
                frame,
                positions: current,
                previous: &self.previous,
                remember_exit: false,
                inversions: true,
            };
            // The memo where it pays, as on raycontact's CPU backend.
            let tracer = ParryTracer { bvhs: &bvhs };
            match memo.for_pass(bodies, &pairs, moved) {
                Some(m) => classify_pairs(&cx, &m.tracer(&tracer), &pairs),
                None => classify_pairs(&cx, &tracer, &pairs),
            }
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
                rays += c.walk.fallback_casts as u64;
            }
            (acc, rays)
        })
        .reduce(|| (Vec::new(), 0), join);
    ParryFrame { contacts, rays }
}

/// The packed vertex range of a body.
fn vertices(b: &BodyGpu) -> std::ops::Range<usize> {
    b.vertex_offset as usize..(b.vertex_offset + b.vertex_count) as usize
}
