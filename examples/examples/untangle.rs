//! Two cloths that start interpenetrating (no untangled previous frame), untangled by global
//! intersection analysis (`IntersectionMode::Full`), or left tangled by inversion handling alone.
//!
//! ```sh
//! scripts/with-gpu cargo run --release -p raycontact-examples --example untangle
//! cargo run --release -p raycontact-examples --example untangle -- --cpu
//! # the same contacts without the analysis's: inversion handling alone (Lehericey et al. 2015)
//! cargo run --release -p raycontact-examples --example untangle -- --cpu --inversion-only
//! ```
//!
//! Sheet A lies flat; sheet B is tilted through it. Every frame prints the crossings, the
//! contour's loops, each sheet's regions and those on the wrong side, and the contacts by kind
//! (the vertex rays' collisions and inversions, edge and untangling contacts). The sheets move by
//! a minimal position-based step of the example's own — each collision contact moves its source
//! vertex half its depth along its normal, then three passes keep every edge at its rest length
//! — so that the effect of the contacts shows; raycontact itself only detects. With
//! `--inversion-only` the analysis still counts the crossings but its contacts are not applied:
//! an inversion needs a previous frame on the right side, which a scene that starts tangled never
//! had, so the sheets stay tangled. Exits with status 1 when the sheets still cross at the end
//! (in the analysis's run).

use glam::{Affine3A, Quat, Vec3};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyId, BodyKind, Contact, ContactFlags, Contacts, IntersectionMode, Pairs, Scene};

const HALF_THICKNESS: f32 = 0.004;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let frames: usize =
        match args.iter().position(|a| a == "--frames").map(|i| args.get(i + 1).and_then(|n| n.parse().ok()))
        {
            None => 60,
            Some(Some(n)) => n,
            Some(None) => {
                eprintln!("untangle: --frames needs a number");
                std::process::exit(2);
            }
        };
    let inversion_only = has("--inversion-only");
    let mut scene = if has("--cpu") {
        Scene::new_cpu(None).expect("CPU backend")
    } else {
        match raycontact::GpuContext::new() {
            Ok(c) => Scene::new(&c),
            Err(e) => {
                eprintln!("untangle: {e} (run with --cpu for the CPU backend)");
                std::process::exit(2);
            }
        }
    };
    let sheets = [
        meshes::grid_sheet(1.2, 1.2, 24, 24),
        meshes::grid_sheet(0.9, 0.9, 18, 18).transformed(Affine3A::from_rotation_translation(
            Quat::from_axis_angle(Vec3::new(1.0, 0.17, 0.0).normalize(), 0.6),
            Vec3::new(0.011, 0.23, 0.0137),
        )),
    ];
    let kind = BodyKind::Cloth { half_thickness: HALF_THICKNESS };
    let ids: Vec<BodyId> =
        sheets.iter().map(|m| scene.add_body(&m.positions, &m.triangles, kind).expect("a sheet")).collect();
    scene.set_intersections(if inversion_only {
        IntersectionMode::Crossings
    } else {
        IntersectionMode::Full
    });
    let rest: Vec<Vec<(u32, u32, f32)>> = sheets.iter().map(rest_lengths).collect();
    let mut positions: Vec<Vec<Vec3>> = sheets.iter().map(|m| m.positions.clone()).collect();
    println!("{}", if inversion_only { "inversion handling alone" } else { "global intersection analysis" });
    println!(
        "frame  crossings  loops (closed)  regions A/B  wrong A/B   collisions inverted  edge  untangle"
    );
    let mut crossing = true;
    for frame in 0..frames {
        let found = match scene.detect(Pairs::Overlapping) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("untangle: {e}");
                std::process::exit(1);
            }
        };
        print_frame(frame, &found, &ids);
        crossing = !found.intersections.crossings.is_empty();
        let applied = found.contacts.iter().filter(|c| {
            c.is_collision()
                && !(inversion_only && c.flags.intersects(ContactFlags::EDGE | ContactFlags::UNTANGLE))
        });
        step(&mut positions, &ids, applied, &rest);
        for (k, &id) in ids.iter().enumerate() {
            scene.set_positions(id, &positions[k]).expect("positions");
        }
    }
    if crossing && !inversion_only {
        eprintln!("untangle: the sheets still cross after {frames} frames");
        std::process::exit(1);
    }
}

/// One line of figures for a frame.
fn print_frame(frame: usize, found: &Contacts, ids: &[BodyId]) {
    let x = &found.intersections;
    let regions = |id: BodyId| x.regions_of(id).map_or(1, |r| r.regions.len());
    let wrong = |id: BodyId| x.regions_of(id).map_or(0, |r| r.wrong_side_vertices().count());
    let count = |f: ContactFlags| found.contacts.iter().filter(|c| c.flags.contains(f)).count();
    let rays = found
        .contacts
        .iter()
        .filter(|c| c.is_collision() && !c.flags.intersects(ContactFlags::EDGE | ContactFlags::UNTANGLE))
        .count();
    println!(
        "{frame:>5}  {:>9}  {:>5} ({:>2})     {:>4}/{:<4}  {:>4}/{:<4}  {:>10} {:>8}  {:>4}  {:>8}",
        x.crossings.len(),
        x.loops.len(),
        x.loops.iter().filter(|l| l.closed).count(),
        regions(ids[0]),
        regions(ids[1]),
        wrong(ids[0]),
        wrong(ids[1]),
        rays,
        count(ContactFlags::INVERTED),
        count(ContactFlags::EDGE),
        count(ContactFlags::UNTANGLE),
    );
}

/// Every edge of a mesh with its rest length.
fn rest_lengths(m: &TriMesh) -> Vec<(u32, u32, f32)> {
    let mut edges: Vec<(u32, u32)> = m
        .triangles
        .iter()
        .flat_map(|t| (0..3).map(move |i| (t[i].min(t[(i + 1) % 3]), t[i].max(t[(i + 1) % 3]))))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges
        .into_iter()
        .map(|(a, b)| (a, b, m.positions[a as usize].distance(m.positions[b as usize])))
        .collect()
}

/// The example's minimal position-based step: each collision contact moves its source vertex
/// half its depth along its normal (at most a quarter of a rest edge a frame), then three Jacobi
/// passes pull every edge back towards its rest length.
fn step<'a>(
    positions: &mut [Vec<Vec3>],
    ids: &[BodyId],
    contacts: impl Iterator<Item = &'a Contact>,
    rest: &[Vec<(u32, u32, f32)>],
) {
    for c in contacts {
        let k = ids.iter().position(|&i| i == c.source_body).expect("a sheet");
        let p = &mut positions[k][c.source_vertex as usize];
        *p += c.normal * (0.5 * c.depth).min(0.0125);
    }
    for (k, edges) in rest.iter().enumerate() {
        for _ in 0..3 {
            let mut moved = vec![Vec3::ZERO; positions[k].len()];
            let mut count = vec![0u32; positions[k].len()];
            for &(a, b, l) in edges {
                let d = positions[k][b as usize] - positions[k][a as usize];
                let len = d.length();
                if len > 0.0 {
                    let fix = d * (0.5 * (len - l) / len);
                    moved[a as usize] += fix;
                    moved[b as usize] -= fix;
                    count[a as usize] += 1;
                    count[b as usize] += 1;
                }
            }
            for (p, (m, n)) in positions[k].iter_mut().zip(moved.iter().zip(&count)) {
                if *n > 0 {
                    *p += *m / *n as f32;
                }
            }
        }
    }
}
