//! The BVH-rebuild benchmark.

use std::time::Instant;

use glam::Vec3;

use rand::{Rng, SeedableRng};
use raycontact::internals::layout::{NONE, Ray, TriBox};
use raycontact::internals::{FrameData, cpu};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, FrameStats, Scene, Stage};

use crate::fmt::fmt_bytes;
use crate::peers::{BvhBuildStrategy, parry_build};
use crate::sah;
use crate::stats::median;

/// Per-frame BVH rebuild of a deforming torus: GPU, CPU backend (1 thread and rayon) and
/// parry3d side by side.
///
/// Every figure comes from one run on this machine. "frame" is a whole update (vertex normals
/// plus the BVH); "bvh" leaves the normals out, to compare with parry3d, which builds only a BVH
/// (from the triangle boxes, which its time includes). Times are medians over the frames; GPU
/// stage times come from timestamp queries when the adapter has them.
#[derive(clap::Args, Debug, Clone)]
pub struct BvhArgs {
    /// Triangle counts of the deforming torus (rounded to 4 m^2 triangles).
    #[arg(long, value_delimiter = ',', default_values_t = [10_000u32, 100_000, 1_000_000])]
    sizes: Vec<u32>,
    /// Timed frames per size and implementation (at most 4 at a million triangles and above).
    #[arg(long, default_value_t = 8)]
    frames: usize,
    /// Only the CPU backend and parry3d (no GPU adapter needed).
    #[arg(long)]
    cpu: bool,
    /// Pick the first adapter whose name contains this (default: WGPU_ADAPTER_NAME, then the
    /// default adapter).
    #[arg(long)]
    adapter: Option<String>,
    /// Rays cast for the tree-quality figures.
    #[arg(long, default_value_t = 10_000)]
    rays: usize,
}

impl Default for BvhArgs {
    fn default() -> Self {
        BvhArgs {
            sizes: vec![10_000, 100_000, 1_000_000],
            frames: 8,
            cpu: false,
            adapter: None,
            rays: 10_000,
        }
    }
}

/// The deformed positions of each frame: a travelling wave along z.
fn frames(mesh: &TriMesh, count: usize) -> Vec<Vec<Vec3>> {
    (0..count + 2)
        .map(|f| {
            let phase = f as f32 * 0.7;
            mesh.positions
                .iter()
                .map(|p| *p + Vec3::Z * 0.03 * (6.0 * p.x + 4.0 * p.y + phase).sin())
                .collect()
        })
        .collect()
}

#[derive(Default)]
struct Timing {
    frame_ms: Vec<f64>,
    bvh_ms: Vec<f64>,
}

impl Timing {
    fn medians(&self) -> (f64, f64) {
        (median(&self.frame_ms), median(&self.bvh_ms))
    }
}

/// Times `update` on a scene over the frames (the first two warm up). Returns the timings, the
/// last frame's figures and the buffers allocated during the timed frames.
fn run_scene(scene: &mut Scene, positions: &[Vec<Vec3>], gpu: bool) -> (Timing, FrameStats, u64) {
    let id = scene.bodies().next().expect("one body");
    let mut t = Timing::default();
    let mut last = FrameStats::default();
    let mut before = 0;
    for (f, p) in positions.iter().enumerate() {
        if f == 2 {
            before = scene.buffer_allocations();
        }
        let start = Instant::now();
        scene.set_positions(id, p).expect("positions");
        let stats = scene.update().expect("update");
        let wall = start.elapsed().as_secs_f64() * 1e3;
        if f >= 2 {
            let stage_ms = |s: &raycontact::StageStats| {
                if gpu { s.gpu_ns.unwrap_or(f64::NAN) } else { s.cpu_ns.unwrap_or(0.0) }
            };
            let bvh: f64 = [Stage::Bounds, Stage::Morton, Stage::Sort, Stage::Hierarchy, Stage::Fit]
                .iter()
                .filter_map(|s| stats.get(*s))
                .map(stage_ms)
                .sum::<f64>()
                / 1e6;
            t.frame_ms.push(wall);
            t.bvh_ms.push(bvh);
        }
        last = stats;
    }
    (t, last, scene.buffer_allocations() - before)
}

/// Rays from a sphere around the mesh towards random points of its box.
fn test_rays(mesh: &TriMesh, n: usize) -> Vec<Ray> {
    let mut r = rand_pcg::Pcg64::seed_from_u64(11);
    let lo = mesh.positions.iter().fold(Vec3::splat(f32::MAX), |a, p| a.min(*p));
    let hi = mesh.positions.iter().fold(Vec3::splat(f32::MIN), |a, p| a.max(*p));
    let (c, radius) = ((lo + hi) * 0.5, (hi - lo).length());
    (0..n)
        .map(|_| {
            let dir = loop {
                let v = Vec3::new(
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                );
                if v.length_squared() > 1e-3 && v.length_squared() <= 1.0 {
                    break v.normalize();
                }
            };
            let o = c + dir * radius;
            let target = lo + (hi - lo) * Vec3::new(r.random(), r.random(), r.random());
            Ray::new(o, target - o)
        })
        .collect()
}

struct Quality {
    sah_ratio: f64,
    nodes_lbvh: f64,
    nodes_sah: f64,
    tris_lbvh: f64,
    tris_sah: f64,
}

fn tree_quality(mesh: &TriMesh, positions: &[Vec3], rays: usize) -> Quality {
    let mut scene = Scene::new_cpu(None).expect("CPU scene");
    let id = scene.add_body(positions, &mesh.triangles, BodyKind::Volumetric).expect("body");
    scene.update().expect("update");
    let data: FrameData = scene.frame_data().expect("frame");
    let packing = scene.packing().clone();
    let lbvh = data.body_nodes(&packing, 0).to_vec();
    let boxes: Vec<TriBox> = data.tri_boxes.clone();
    let reference = sah::build(&boxes);
    let rays = test_rays(mesh, rays);
    let body = packing.bodies[0];
    let walk = |nodes: &[raycontact::internals::layout::Node]| {
        let (mut n, mut t) = (0u64, 0u64);
        let mut hits = Vec::with_capacity(rays.len());
        for r in &rays {
            let h = cpu::raycast_one(&body, nodes, positions_flat(positions), &packing.triangles, r);
            n += h.nodes_visited as u64;
            t += h.triangles_tested as u64;
            hits.push((h.triangle, h.t));
        }
        (n as f64 / rays.len() as f64, t as f64 / rays.len() as f64, hits)
    };
    let (nodes_lbvh, tris_lbvh, h1) = walk(&lbvh);
    let (nodes_sah, tris_sah, h2) = walk(&reference);
    assert_eq!(h1, h2, "both trees give the same closest hits");
    assert!(h1.iter().any(|h| h.0 != NONE));
    let _ = id;
    Quality {
        sah_ratio: sah::sah_cost(&lbvh) / sah::sah_cost(&reference),
        nodes_lbvh,
        nodes_sah,
        tris_lbvh,
        tris_sah,
    }
}

fn positions_flat(p: &[Vec3]) -> &[Vec3] {
    p
}

/// Runs the BVH benchmark and prints its table.
pub fn run(args: BvhArgs) {
    let ctx = crate::gpu_context(args.cpu, args.adapter.clone(), None);
    let threads = rayon::current_num_threads();
    println!("raycontact-bench: per-frame BVH rebuild of a deforming torus");
    match &ctx {
        Some(c) => println!(
            "GPU adapter: {} ({:?}, {:?}{}), timestamps: {}",
            c.adapter_name(),
            c.adapter_info().device_type,
            c.adapter_info().backend,
            if c.is_software() { ", software" } else { "" },
            c.has_timestamps()
        ),
        None => println!("GPU: not used (--cpu)"),
    }
    println!(
        "CPU backend: raycontact's CPU twins, 1 thread and rayon with {threads} threads; peer: parry3d 0.31"
    );
    println!();

    for &size in &args.sizes {
        let m = ((size as f64 / 4.0).sqrt().round() as u32).max(2);
        let mesh = meshes::torus(1.0, 0.35, 2 * m, m);
        let n = mesh.triangles.len();
        let frames_n = if n >= 1_000_000 { args.frames.min(4) } else { args.frames };
        let positions = frames(&mesh, frames_n);
        println!("== {n} triangles, {} vertices, {frames_n} timed frames ==", mesh.positions.len());
        let mut rows: Vec<(String, Timing)> = Vec::new();
        let mut gpu_stats = None;
        if let Some(c) = &ctx {
            let mut scene = Scene::new(c);
            scene.add_body(&positions[0], &mesh.triangles, BodyKind::Volumetric).expect("body");
            let (t, stats, allocated) = run_scene(&mut scene, &positions, true);
            rows.push((format!("GPU ({})", c.adapter_name()), t));
            gpu_stats = Some((stats, allocated));
        }
        let mut cpu_stats = None;
        for (label, threads) in
            [("CPU backend, 1 thread".to_string(), Some(1)), (format!("CPU backend, rayon {threads}"), None)]
        {
            let mut scene = Scene::new_cpu(threads).expect("CPU scene");
            scene.add_body(&positions[0], &mesh.triangles, BodyKind::Volumetric).expect("body");
            let (t, stats, _) = run_scene(&mut scene, &positions, false);
            rows.push((label, t));
            cpu_stats = Some(stats);
        }
        for (label, strategy) in [
            ("parry3d Bvh (binned SAH)", BvhBuildStrategy::Binned),
            ("parry3d Bvh (PLOC)", BvhBuildStrategy::Ploc),
        ] {
            let ms = parry_build(&mesh, &positions, strategy);
            rows.push((label.into(), Timing { frame_ms: ms.clone(), bvh_ms: ms }));
        }

        let medians: Vec<(String, f64, f64)> = rows
            .iter()
            .map(|(l, t)| {
                let (f, b) = t.medians();
                (l.clone(), f, b)
            })
            .collect();
        let parry_bvh = medians.iter().find(|r| r.0.contains("binned")).map(|r| r.2).unwrap_or(f64::NAN);
        let rayon_bvh = medians.iter().find(|r| r.0.contains("rayon")).map(|r| r.2).unwrap_or(f64::NAN);
        println!(
            "{:<40} {:>10} {:>10} {:>12} {:>11} {:>11}",
            "implementation", "frame ms", "bvh ms", "bvh Mtri/s", "vs parry", "vs rayon"
        );
        for (label, frame, bvh) in &medians {
            println!(
                "{label:<40} {frame:>10.2} {bvh:>10.2} {:>12.2} {:>10.2}x {:>10.2}x",
                n as f64 / bvh / 1e3,
                parry_bvh / bvh,
                rayon_bvh / bvh
            );
        }
        if let Some((stats, allocated)) = gpu_stats {
            println!(
                "GPU frame: {} dispatches, {} bound for reading, {} for writing, {} GPU buffers allocated over the timed frames",
                stats.dispatches(),
                fmt_bytes(stats.bytes_read() as f64),
                fmt_bytes(stats.bytes_written() as f64),
                allocated
            );
            for (s, st) in &stats.stages {
                if st.dispatches + st.copies == 0 {
                    continue;
                }
                let cpu_ms =
                    cpu_stats.as_ref().and_then(|c| c.get(*s)).and_then(|c| c.cpu_ns).map(|ns| ns / 1e6);
                println!(
                    "  {:<10} {:>3} dispatches {:>2} copies  read {:>10}  written {:>10}  GPU {:>8} ms  CPU rayon {:>7} ms",
                    s.name(),
                    st.dispatches,
                    st.copies,
                    fmt_bytes(st.bytes_read as f64),
                    fmt_bytes(st.bytes_written as f64),
                    st.gpu_ns.map_or("-".into(), |ns| format!("{:.2}", ns / 1e6)),
                    cpu_ms.map_or("-".into(), |ms| format!("{ms:.2}"))
                );
            }
        }
        let q = tree_quality(&mesh, &positions[positions.len() - 1], args.rays);
        println!(
            "tree quality: SAH cost LBVH / binned SAH = {:.3}; per ray ({} rays): nodes visited {:.1} (binned SAH {:.1}), triangles tested {:.1} ({:.1})",
            q.sah_ratio, args.rays, q.nodes_lbvh, q.nodes_sah, q.tris_lbvh, q.tris_sah
        );
        println!();
    }
}
