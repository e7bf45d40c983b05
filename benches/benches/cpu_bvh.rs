//! Criterion benchmarks of the CPU backend's BVHs on one thread, on the interpenetrating tori of
//! `stages` (12.8k triangles each) with B's vertices in random order (as a scanned mesh's often
//! are, e.g. the armadillo of CGAL's demo data):
//!
//! - `wide-collapse`: the fitted binary trees collapsed into the 4-wide trees, triangle records
//!   included (`WideBvh::build`), per frame of a rebuild;
//! - `sah-tree`: both bodies' binned-SAH trees built over their LBVHs' leaves (`sah_tree`, what a
//!   body whose tree is kept is collapsed from);
//! - `rays`: the narrow phase's full pass (`cpu::narrow_phase`, every ray of both directions)
//!   through the wide trees (`wide`) and through the binary trees (`binary`, the frame without
//!   its wide trees: `cpu::closest_hit_ordered`), and through the wide trees on every core
//!   (`wide-rayonN`);
//! - `update`: a frame's normals and trees with `BvhUpdate::Rebuild` and `BvhUpdate::Refit`
//!   (`Scene::update` on the CPU backend), both bodies moved (two poses taken in turn);
//! - `frame`: a whole frame, `Scene::detect` alone (`frame-detect`) and after `Scene::update`
//!   (`frame-update-then-detect`: an engine that queries rays between the two; the detection
//!   finds every body still since the update);
//! - `near`: a cloth's self pair's reach question (`cpu::other_near_wide`: a triangle that does
//!   not use the vertex within the reach of it, the narrow phase's `may_reach`) for every vertex
//!   of a folded 64 x 64 sheet, the reach half an edge (on `eight-sheets`, the questions of the
//!   sheets' self pairs are over a quarter of `cpu-1`'s frame).
//!
//! Run with `cargo bench -p raycontact-benches --bench cpu_bvh`.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::{Affine3A, Quat, Vec3};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use raycontact::internals::cpu::{self, FrameData, Narrow};
use raycontact::internals::layout::{BodyPair, SELF_CLOTH};
use raycontact::internals::sah_tree::sah_tree;
use raycontact::internals::wide_bvh::WideBvh;
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, BvhUpdate, Contacts, Pairs, Scene};

/// The pair of `stages`, B's vertices shuffled.
fn tori() -> (TriMesh, TriMesh) {
    let a = meshes::torus(1.0, 0.35, 160, 40);
    let mut b = a.transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        Vec3::new(0.5, 0.0, 0.0),
    ));
    let mut order: Vec<u32> = (0..b.positions.len() as u32).collect();
    order.shuffle(&mut rand_pcg::Pcg64::seed_from_u64(11));
    let mut positions = vec![Vec3::ZERO; b.positions.len()];
    for (old, &new) in order.iter().enumerate() {
        positions[new as usize] = b.positions[old];
    }
    b.positions = positions;
    b.triangles.iter_mut().for_each(|t| *t = t.map(|v| order[v as usize]));
    (a, b)
}

fn one_thread() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a pool")
}

fn cpu_bvh(c: &mut Criterion) {
    let (a, b) = tori();
    let mut scene = Scene::new_cpu(Some(1)).expect("a CPU scene");
    let ida = scene.add_body(&a.positions, &a.triangles, BodyKind::Volumetric).unwrap();
    let idb = scene.add_body(&b.positions, &b.triangles, BodyKind::Volumetric).unwrap();
    scene.update().unwrap();
    let packing = scene.packing().clone();
    let frame = scene.frame_data().unwrap();
    let positions: Vec<Vec3> = a.positions.iter().chain(&b.positions).copied().collect();
    let pool = one_thread();
    let triangles = (a.triangles.len() + b.triangles.len()) as u64;

    let mut group = c.benchmark_group("cpu_bvh");
    group.measurement_time(Duration::from_secs(4)).sample_size(20);
    group.throughput(Throughput::Elements(triangles));
    group.bench_function(BenchmarkId::new("wide-collapse", triangles), |bench| {
        let mut wide = WideBvh::default();
        bench
            .iter(|| pool.install(|| wide.build(&packing, &frame.body_state, &frame.nodes, &positions, &[])));
    });

    group.bench_function(BenchmarkId::new("sah-tree", triangles), |bench| {
        let mut out = Vec::new();
        bench.iter(|| {
            for b in 0..packing.bodies.len() {
                sah_tree(frame.body_nodes(&packing, b), frame.body_state[b].leaf_count, &mut out);
            }
        });
    });

    let pairs: Vec<BodyPair> = cpu::broad_phase(&packing.bodies, &frame.body_state, SELF_CLOTH, 0.0);
    let mut binary: FrameData = frame.clone();
    binary.wide = WideBvh::default();
    let sources = cpu::ray_sources(&packing, &frame.body_state, &positions, &pairs).len() as u64;
    group.throughput(Throughput::Elements(sources));
    let all = rayon::ThreadPoolBuilder::new().build().expect("a pool");
    let rayon_name = format!("wide-rayon{}", all.current_num_threads());
    for (name, f, pool) in
        [("wide", &frame, &pool), ("binary", &binary, &pool), (rayon_name.as_str(), &frame, &all)]
    {
        let cx = Narrow {
            packing: &packing,
            frame: f,
            positions: &positions,
            previous: &positions,
            remember_exit: false,
            inversions: true,
        };
        group.bench_function(BenchmarkId::new(format!("rays-{name}"), sources), |bench| {
            bench.iter(|| pool.install(|| cpu::narrow_phase(&cx, &pairs)));
        });
    }

    group.throughput(Throughput::Elements(triangles));
    // Two poses of the pair, taken in turn, so that every iteration moves both bodies: a scene
    // leaves a body whose positions did not change as it was (the same positions set again
    // would leave the frame nothing to update).
    let shifted = |m: &TriMesh, d: Vec3| m.positions.iter().map(|p| *p + d).collect::<Vec<Vec3>>();
    let poses = [
        (a.positions.clone(), shifted(&b, Vec3::X * 0.001)),
        (shifted(&a, Vec3::Y * -0.001), b.positions.clone()),
    ];
    let mut turn = 0;
    let mut move_both = |scene: &mut Scene| {
        turn ^= 1;
        scene.set_positions(ida, &poses[turn].0).unwrap();
        scene.set_positions(idb, &poses[turn].1).unwrap();
    };
    for (name, policy) in [("rebuild", BvhUpdate::Rebuild), ("refit", BvhUpdate::Refit)] {
        scene.set_bvh_update(policy).unwrap();
        group.bench_function(BenchmarkId::new(format!("update-{name}"), triangles), |bench| {
            bench.iter(|| {
                move_both(&mut scene);
                scene.update().unwrap()
            });
        });
    }

    scene.set_bvh_update(BvhUpdate::Rebuild).unwrap();
    let mut found = Contacts::default();
    for (name, update) in [("detect", false), ("update-then-detect", true)] {
        group.bench_function(BenchmarkId::new(format!("frame-{name}"), triangles), |bench| {
            bench.iter(|| {
                move_both(&mut scene);
                if update {
                    scene.update().unwrap();
                }
                scene.detect_into(Pairs::Overlapping, &mut found).unwrap();
            });
        });
    }
    group.finish();
}

/// `near`: the self pair's reach question for every vertex of a folded sheet.
fn near(c: &mut Criterion) {
    let mut sheet = meshes::grid_sheet(1.0, 1.0, 64, 64);
    for p in &mut sheet.positions {
        // Waves, and the half at x > 0 folded back over the other, 0.02 above it: about a
        // sixth of the vertices have a triangle within the reach.
        let wave = 0.01 * (p.x * 25.0).sin() * (p.y * 19.0).cos();
        *p = if p.x > 0.0 { Vec3::new(-p.x, p.y, 0.02 + wave) } else { Vec3::new(p.x, p.y, wave) };
    }
    let mut scene = Scene::new_cpu(Some(1)).expect("a CPU scene");
    scene.add_body(&sheet.positions, &sheet.triangles, BodyKind::Cloth { half_thickness: 0.0 }).unwrap();
    scene.update().unwrap();
    let frame = scene.frame_data().unwrap();
    let tree = frame.body_wide(0).expect("the sheet's wide tree");
    let reach = 0.5 / 64.0;
    let mut group = c.benchmark_group("near");
    group.measurement_time(Duration::from_secs(4)).sample_size(30);
    group.throughput(Throughput::Elements(sheet.positions.len() as u64));
    group.bench_function(BenchmarkId::new("self", sheet.positions.len()), |bench| {
        bench.iter(|| {
            let vertices = sheet.positions.iter().enumerate();
            vertices.filter(|&(v, &p)| cpu::other_near_wide(tree, p, reach, v as u32)).count()
        });
    });
    group.finish();
}

criterion_group!(benches, cpu_bvh, near);
criterion_main!(benches);
