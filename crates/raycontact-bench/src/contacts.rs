//! The narrow-phase benchmark: full detection frames (normals, BVH rebuild, rays both ways,
//! compaction, readback) on the GPU, on the CPU backend (1 thread and rayon), and parry3d casting
//! the same rays on its own BVHs rebuilt each frame, with the contact sets compared.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Instant;

use glam::{Affine3A, Quat, Vec3};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, FrameStats, Pairs, Scene};

use crate::peers::{VertexKey as Key, parry_frame};
use crate::stats::{SetDiff, median};

/// Full detection frames between two interpenetrating bodies: the two 1600-triangle tori of
/// Hermann et al. 2008 (Figure 10) and two real scans (`scripts/fetch-scans` puts them in
/// target/scans; `--scan-a` / `--scan-b` name others), one of them turning a little every frame.
#[derive(clap::Args, Debug, Clone)]
pub struct ContactsArgs {
    /// Timed frames per scene and implementation.
    #[arg(long, default_value_t = 10)]
    frames: usize,
    /// First scan, OBJ, OFF, PLY or STL (default: the first mesh file in target/scans).
    #[arg(long)]
    scan_a: Option<PathBuf>,
    /// Second scan (default: the second mesh file in target/scans, or the first again).
    #[arg(long)]
    scan_b: Option<PathBuf>,
    /// Pick the first adapter whose name contains this.
    #[arg(long)]
    adapter: Option<String>,
    /// Only the CPU backend and parry3d.
    #[arg(long)]
    cpu: bool,
}

/// One scene: two meshes and the per-frame positions of the second.
struct SceneDef {
    name: String,
    a: TriMesh,
    b: TriMesh,
    frames_b: Vec<Vec<Vec3>>,
}

fn scene_def(name: &str, a: TriMesh, b: TriMesh, frames: usize) -> SceneDef {
    let centre = b.positions.iter().fold(Vec3::ZERO, |s, p| s + *p) / b.positions.len() as f32;
    let frames_b = (0..frames + 1)
        .map(|f| {
            let m = Affine3A::from_translation(centre)
                * Affine3A::from_quat(Quat::from_rotation_y(0.01 * f as f32))
                * Affine3A::from_translation(-centre);
            b.positions.iter().map(|p| m.transform_point3(*p)).collect()
        })
        .collect();
    SceneDef { name: name.into(), a, b, frames_b }
}

/// Scales a mesh into the unit box around the origin.
fn normalised(m: TriMesh) -> TriMesh {
    let lo = m.positions.iter().fold(Vec3::splat(f32::MAX), |a, p| a.min(*p));
    let hi = m.positions.iter().fold(Vec3::splat(f32::MIN), |a, p| a.max(*p));
    let s = 2.0 / (hi - lo).max_element();
    m.transformed(Affine3A::from_scale(Vec3::splat(s)) * Affine3A::from_translation(-(lo + hi) * 0.5))
}

fn scans(args: &ContactsArgs, frames: usize) -> Option<SceneDef> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("target/scans")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    let extension = p.extension().and_then(|x| x.to_str()).map(str::to_ascii_lowercase);
                    extension.is_some_and(|x| meshes::MESH_EXTENSIONS.contains(&x.as_str()))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    let pa = args.scan_a.clone().or_else(|| found.first().cloned())?;
    let pb = args.scan_b.clone().or_else(|| found.get(1).cloned()).unwrap_or_else(|| pa.clone());
    let load = |p: &PathBuf| match meshes::load_mesh(p) {
        Ok(m) => Some(normalised(m.weld(0.0).0)),
        Err(e) => {
            eprintln!("contacts: {e}");
            None
        }
    };
    let a = load(&pa)?;
    let b = load(&pb)?.transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
        Vec3::new(0.35, 0.1, 0.0),
    ));
    let name = format!(
        "scans {} + {}",
        pa.file_stem().unwrap_or_default().to_string_lossy(),
        pb.file_stem().unwrap_or_default().to_string_lossy()
    );
    Some(scene_def(&name, a, b, frames))
}

struct Run {
    frame_ms: Vec<f64>,
    keys: BTreeSet<Key>,
    stats: FrameStats,
}

fn run_scene(scene: &mut Scene, def: &SceneDef) -> Run {
    let ids: Vec<_> = scene.bodies().collect();
    let pairs = [(ids[0], ids[1])];
    let mut run = Run { frame_ms: Vec::new(), keys: BTreeSet::new(), stats: FrameStats::default() };
    for (f, pos) in def.frames_b.iter().enumerate() {
        let start = Instant::now();
        scene.set_positions(ids[1], pos).expect("positions");
        let found = scene.detect(Pairs::List(&pairs)).expect("detect");
        let ms = start.elapsed().as_secs_f64() * 1e3;
        if f > 0 {
            run.frame_ms.push(ms);
        }
        run.keys = found
            .contacts
            .iter()
            .map(|c| (c.source_body.index(), c.source_vertex, c.target_body.index()))
            .collect();
        run.stats = found.stats;
    }
    run
}

/// Mean BVH nodes visited per inward ray (to the other body) over the source vertices in the
/// box overlap, with raycontact's traversal on the CPU backend's trees.
fn nodes_per_ray(def: &SceneDef) -> (f64, u64) {
    let mut s = Scene::new_cpu(None).expect("CPU scene");
    s.add_body(&def.a.positions, &def.a.triangles, BodyKind::Volumetric).expect("body");
    s.add_body(&def.frames_b[def.frames_b.len() - 1], &def.b.triangles, BodyKind::Volumetric).expect("body");
    s.update().expect("update");
    let frame = s.frame_data().expect("frame");
    let p = s.packing().clone();
    let positions: Vec<Vec3> =
        def.a.positions.iter().chain(def.frames_b.last().expect("frames").iter()).copied().collect();
    let (la, ha) = frame.body_state[0].bounds().expect("box");
    let (lb, hb) = frame.body_state[1].bounds().expect("box");
    let (lo, hi) = (la.max(lb), ha.min(hb));
    let (mut nodes, mut rays) = (0u64, 0u64);
    for (src, dst) in [(0usize, 1usize), (1, 0)] {
        let body = p.bodies[src];
        for v in body.vertex_offset..body.vertex_offset + body.vertex_count {
            let o = positions[v as usize];
            let n = frame.normals[v as usize];
            if o.cmplt(lo).any() || o.cmpgt(hi).any() || n == Vec3::ZERO {
                continue;
            }
            let ray = raycontact::Ray::new(o, -n);
            let h = raycontact::internals::cpu::closest_hit(
                &p.bodies[dst],
                frame.body_nodes(&p, dst),
                &positions,
                &p.triangles,
                &ray,
                raycontact::internals::layout::NONE,
                &[],
            );
            nodes += h.nodes_visited as u64;
            rays += 1;
        }
    }
    (nodes as f64 / rays.max(1) as f64, rays)
}

/// Contacts of one set and not of the other.
fn differ(a: &BTreeSet<Key>, b: &BTreeSet<Key>) -> usize {
    SetDiff::of(a.iter().map(|k| (k, ())), b.iter().map(|k| (k, ()))).symmetric()
}

/// Runs the narrow-phase benchmark and prints its table.
pub fn run(args: ContactsArgs) {
    let ctx = crate::gpu_context(args.cpu, args.adapter.clone(), None);
    let torus = meshes::torus(1.0, 0.35, 40, 20);
    let tori_b = torus.transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        Vec3::new(0.5, 0.0, 0.0),
    ));
    let mut defs = vec![scene_def("hermann tori (2 x 1600 triangles)", torus, tori_b, args.frames)];
    match scans(&args, args.frames) {
        Some(d) => defs.push(d),
        None => println!("(no scans: run scripts/fetch-scans, or give --scan-a/--scan-b)\n"),
    }
    let threads = rayon::current_num_threads();
    for def in &defs {
        let (npr, rays) = nodes_per_ray(def);
        println!(
            "== {}: {} + {} triangles, {} + {} vertices, {} timed frames ==",
            def.name,
            def.a.triangles.len(),
            def.b.triangles.len(),
            def.a.positions.len(),
            def.b.positions.len(),
            args.frames
        );
        let mut rows: Vec<(String, f64, BTreeSet<Key>)> = Vec::new();
        let mut gpu_stats = None;
        let make = |mut s: Scene| {
            s.add_body(&def.a.positions, &def.a.triangles, BodyKind::Volumetric).expect("body");
            s.add_body(&def.frames_b[0], &def.b.triangles, BodyKind::Volumetric).expect("body");
            let r = run_scene(&mut s, def);
            (median(&r.frame_ms), r.keys, r.stats)
        };
        if let Some(c) = &ctx {
            let (ms, keys, stats) = make(Scene::new(c));
            rows.push((format!("GPU ({})", c.adapter_name()), ms, keys));
            gpu_stats = Some(stats);
        }
        let mut cpu_stats = None;
        for (label, t) in
            [("CPU backend, 1 thread".to_string(), Some(1)), (format!("CPU backend, rayon {threads}"), None)]
        {
            let (ms, keys, stats) = make(Scene::new_cpu(t).expect("CPU scene"));
            rows.push((label, ms, keys));
            cpu_stats = Some(stats);
        }
        for (label, parallel) in
            [("parry3d, 1 thread".to_string(), false), (format!("parry3d, rayon {threads}"), true)]
        {
            let mut times = Vec::new();
            let mut keys = BTreeSet::new();
            for pos in &def.frames_b[1..] {
                let start = Instant::now();
                keys = parry_frame(&def.a, pos, &def.b.triangles, parallel).0;
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
            rows.push((label, median(&times), keys));
        }
        let reference = rows
            .iter()
            .find(|r| r.0.starts_with("CPU backend, rayon"))
            .map(|r| (r.1, r.2.clone()))
            .expect("rayon row");
        let parry1 = rows.iter().find(|r| r.0 == "parry3d, 1 thread").map(|r| r.1).unwrap_or(f64::NAN);
        println!(
            "{:<40} {:>10} {:>12} {:>11} {:>11} {:>9} {:>14}",
            "implementation", "frame ms", "Mrays/s", "vs parry-1", "vs rayon", "contacts", "differ/rayon"
        );
        for (label, ms, keys) in &rows {
            println!(
                "{label:<40} {ms:>10.2} {:>12.2} {:>10.2}x {:>10.2}x {:>9} {:>14}",
                rays as f64 / ms / 1e3,
                parry1 / ms,
                reference.0 / ms,
                keys.len(),
                differ(keys, &reference.1)
            );
        }
        println!(
            "rays per frame (source vertices in the box overlap, both ways): {rays}; BVH nodes visited per ray: {npr:.1}"
        );
        if let Some(stats) = gpu_stats {
            println!(
                "GPU frame: {} dispatches, {:.1} MiB bound for reading, {:.1} MiB for writing, {} bytes read back, {} buffers allocated in the last frame",
                stats.dispatches(),
                stats.bytes_read() as f64 / (1u64 << 20) as f64,
                stats.bytes_written() as f64 / (1u64 << 20) as f64,
                stats.bytes_read_back,
                stats.buffers_allocated
            );
            for (s, st) in &stats.stages {
                if st.dispatches + st.copies == 0 {
                    continue;
                }
                let cpu = cpu_stats.as_ref().and_then(|c| c.get(*s)).and_then(|c| c.cpu_ns);
                println!(
                    "  {:<10} {:>3} dispatches {:>2} copies  GPU {:>8} ms  CPU rayon {:>7} ms",
                    s.name(),
                    st.dispatches,
                    st.copies,
                    st.gpu_ns.map_or("-".into(), |ns| format!("{:.2}", ns / 1e6)),
                    cpu.map_or("-".into(), |ns| format!("{:.2}", ns / 1e6)),
                );
            }
        }
        println!();
    }
}
