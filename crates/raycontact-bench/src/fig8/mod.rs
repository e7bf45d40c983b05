//! `raycontact-bench fig8`: Hermann et al. 2008's Figure 8. A closed cylinder of radius 1 and
//! length 4 along z (n sides; only its two rim rings and a centre vertex per cap) rests 0.3 deep
//! in the top of a box; turned about its axis in 100 steps over one side, the response's net
//! force on it should point straight up. The figure plots the tangential error |F_x| / F_y, worst
//! (8%) at 10 sides: forces along the rays carry the slant of the vertex normals. Along the
//! re-projected normal (Lehericey et al. 2015) they cannot.

use std::f32::consts::TAU;
use std::path::PathBuf;

use glam::{Quat, Vec3};
use raycontact::meshes::TriMesh;
use raycontact::{BodyKind, ForceDirection, GpuContext, Pairs, Response, Scene};
use serde::Serialize;

mod plot;

/// Arguments of `fig8`.
#[derive(clap::Args, Debug)]
pub struct Fig8Args {
    /// Sides of the cylinder (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "10,20,30,50,75,100,150")]
    pub sides: Vec<u32>,
    /// Rotations over one side (θ = k × (2π / n) / rotations, k = 0 .. rotations − 1).
    #[arg(long, default_value_t = 100)]
    pub rotations: u32,
    /// Run on the CPU backend instead of a GPU adapter.
    #[arg(long)]
    pub cpu: bool,
    /// Pick the first GPU adapter whose name contains this.
    #[arg(long)]
    pub adapter: Option<String>,
    /// Write the figures as JSON (schema `raycontact.fig8/1`).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Draw the ratio against n as SVG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// Hermann's cylinder with `n` sides: rim vertex `i` of each end at (sin φᵢ, −cos φᵢ, ±2),
/// φᵢ = 2πi/n, then the two cap centres; each side quad split along the diagonal from (i, z−) to
/// (i+1, z+); outward-oriented.
pub fn cylinder(n: u32) -> TriMesh {
    let mut positions = Vec::with_capacity(2 * n as usize + 2);
    for z in [-2.0f32, 2.0] {
        for i in 0..n {
            let phi = TAU * i as f32 / n as f32;
            positions.push(Vec3::new(phi.sin(), -phi.cos(), z));
        }
    }
    let (bottom, top) = (2 * n, 2 * n + 1);
    positions.push(Vec3::new(0.0, 0.0, -2.0));
    positions.push(Vec3::new(0.0, 0.0, 2.0));
    let mut triangles = Vec::with_capacity(4 * n as usize);
    for i in 0..n {
        let j = (i + 1) % n;
        let (a, b, c, d) = (i, j, n + j, n + i); // (i, z-), (i+1, z-), (i+1, z+), (i, z+)
        triangles.push([a, b, c]);
        triangles.push([a, c, d]);
        triangles.push([bottom, b, a]);
        triangles.push([top, d, c]);
    }
    TriMesh { positions, triangles }
}

/// The box 20 × 10 × 20 whose top face (two triangles) lies at y = −0.7, x and z in [−10, 10].
pub fn slab() -> TriMesh {
    let (lo, hi) = (Vec3::new(-10.0, -10.7, -10.0), Vec3::new(10.0, -0.7, 10.0));
    let positions = (0..8)
        .map(|i| Vec3::new([lo.x, hi.x][i & 1], [lo.y, hi.y][(i >> 1) & 1], [lo.z, hi.z][(i >> 2) & 1]))
        .collect();
    // Corner i has x from bit 0, y from bit 1, z from bit 2; faces counter-clockwise from outside.
    let quads = [[0, 4, 6, 2], [1, 3, 7, 5], [0, 1, 5, 4], [2, 6, 7, 3], [0, 2, 3, 1], [4, 5, 7, 6]];
    let triangles = quads.iter().flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]]).collect();
    TriMesh { positions, triangles }
}

/// The tangential error of one force direction over the rotations.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Ratio {
    /// Mean of 100 |F_x| / F_y, in percent.
    pub mean_percent: f64,
    /// Largest |F_x| / F_y, in percent.
    pub max_percent: f64,
}

/// One cylinder's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Sides.
    pub sides: u32,
    /// Forces along the rays (Hermann et al. 2008).
    pub along_ray: Ratio,
    /// Forces along the re-projected normals (Lehericey et al. 2015).
    pub along_normal: Ratio,
    /// Collision contacts, summed over the rotations.
    pub contacts: u64,
}

/// The document `--json` writes.
#[derive(Debug, Serialize)]
struct Report<'a> {
    schema: &'static str,
    backend: String,
    rotations: u32,
    rows: &'a [Row],
}

/// Ratios of one cylinder, turning it `rotations` times over one side.
pub fn measure(ctx: Option<&GpuContext>, sides: u32, rotations: u32) -> Result<Row, raycontact::Error> {
    let mut scene = match ctx {
        Some(c) => Scene::new(c),
        None => Scene::new_cpu(None)?,
    };
    let cyl = cylinder(sides);
    let box_mesh = slab();
    let c = scene.add_body(&cyl.positions, &cyl.triangles, BodyKind::Volumetric)?;
    scene.add_body(&box_mesh.positions, &box_mesh.triangles, BodyKind::Volumetric)?;
    let mut ratios = [Vec::new(), Vec::new()];
    let mut contacts = 0;
    for k in 0..rotations {
        let theta = k as f32 * (TAU / sides as f32) / rotations as f32;
        let q = Quat::from_rotation_z(theta);
        let turned: Vec<Vec3> = cyl.positions.iter().map(|p| q * *p).collect();
        scene.set_positions(c, &turned)?;
        let found = scene.detect(Pairs::Overlapping)?;
        contacts += found.contacts.iter().filter(|x| x.is_collision()).count() as u64;
        for (slot, direction) in
            [ForceDirection::AlongRay, ForceDirection::AlongNormal].into_iter().enumerate()
        {
            scene.set_response(Response {
                stiffness: 1.0,
                damping: 0.0,
                direction,
                ..Response::default()
            })?;
            let f = scene.contact_forces()?.total(c).unwrap_or_default();
            ratios[slot].push(if f.y > 0.0 { 100.0 * (f.x.abs() / f.y) as f64 } else { f64::NAN });
        }
    }
    let summary = |r: &[f64]| Ratio {
        mean_percent: r.iter().sum::<f64>() / r.len().max(1) as f64,
        max_percent: r.iter().copied().fold(f64::NAN, f64::max),
    };
    Ok(Row { sides, along_ray: summary(&ratios[0]), along_normal: summary(&ratios[1]), contacts })
}

/// Runs `fig8`; returns the exit code.
pub fn run(args: Fig8Args) -> i32 {
    let ctx = crate::gpu_context(args.cpu, args.adapter.clone(), None);
    let backend = match &ctx {
        Some(c) => format!("GPU: {}", c.adapter_name()),
        None => "CPU backend".to_string(),
    };
    println!("Hermann et al. 2008, Figure 8: |F_x| / F_y of the net response force on a cylinder");
    println!("resting 0.3 deep in a box, turned over one side in {} steps ({backend})", args.rotations);
    println!(
        "{:>6}  {:>22}  {:>22}  {:>9}",
        "sides", "along the ray mean/max", "along the normal", "contacts"
    );
    let mut rows = Vec::new();
    for &n in &args.sides {
        if n < 3 {
            eprintln!("raycontact-bench fig8: a cylinder needs at least 3 sides, not {n}");
            return 2;
        }
        match measure(ctx.as_ref(), n, args.rotations.max(1)) {
            Ok(r) => {
                println!(
                    "{:>6}  {:>9.2}% / {:>8.2}%  {:>9.2}% / {:>8.2}%  {:>9}",
                    r.sides,
                    r.along_ray.mean_percent,
                    r.along_ray.max_percent,
                    r.along_normal.mean_percent,
                    r.along_normal.max_percent,
                    r.contacts
                );
                rows.push(r);
            }
            Err(e) => {
                eprintln!("raycontact-bench fig8: {n} sides: {e}");
                return 1;
            }
        }
    }
    println!("(the paper: worst 8% at 10 sides, falling to about 1%)");
    if let Some(path) = &args.json {
        let doc = Report { schema: "raycontact.fig8/1", backend, rotations: args.rotations, rows: &rows };
        let text = serde_json::to_string_pretty(&doc).expect("serialisable");
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("raycontact-bench fig8: writing {}: {e}", path.display());
            return 1;
        }
    }
    if let Some(path) = &args.plot {
        if let Err(e) = plot::draw(&rows, path) {
            eprintln!("raycontact-bench fig8: plotting {}: {e}", path.display());
            return 1;
        }
    }
    0
}
