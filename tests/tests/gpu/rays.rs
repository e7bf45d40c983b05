//! Closest-hit ray casts through the GPU BVH against a brute-force CPU caster: triangle exact,
//! t within 1e-5 relative; including rays aimed exactly at shared edges and vertices.

use glam::Vec3;
use rand::Rng;
use raycontact::internals::cpu;
use raycontact::internals::layout::NONE;
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, Ray, RayHit, Scene};
use raycontact_tests::{ctx, other_tuning_ctx, random_unit, rng, stacked_triangles};

/// 10k seeded rays: from outside the body's box towards a random point inside it, from random
/// points inside the box in random directions, and aimed at vertices and edge midpoints.
fn rays_for(mesh: &TriMesh, seed: u64) -> Vec<Ray> {
    let mut r = rng(seed);
    let lo = mesh.positions.iter().fold(Vec3::splat(f32::MAX), |a, p| a.min(*p));
    let hi = mesh.positions.iter().fold(Vec3::splat(f32::MIN), |a, p| a.max(*p));
    let centre = (lo + hi) * 0.5;
    let radius = (hi - lo).length();
    let inside = |r: &mut rand_pcg::Pcg64| lo + (hi - lo) * Vec3::new(r.random(), r.random(), r.random());
    let mut rays = Vec::with_capacity(10_000);
    for i in 0..10_000 {
        let ray = match i % 4 {
            0 => {
                let o = centre + random_unit(&mut r) * radius * 1.5;
                Ray::new(o, inside(&mut r) - o)
            }
            1 => Ray::new(inside(&mut r), random_unit(&mut r)),
            2 => {
                // Through a vertex (shared by several triangles).
                let v = mesh.positions[r.random_range(0..mesh.positions.len())];
                let o = centre + random_unit(&mut r) * radius * 1.5;
                Ray::new(o, v - o)
            }
            _ => {
                // Through the midpoint of an edge (shared by two triangles).
                let t = mesh.triangles[r.random_range(0..mesh.triangles.len())];
                let e = r.random_range(0..3);
                let m = (mesh.positions[t[e] as usize] + mesh.positions[t[(e + 1) % 3] as usize]) * 0.5;
                let o = centre + random_unit(&mut r) * radius * 1.5;
                Ray::new(o, m - o)
            }
        };
        rays.push(ray);
    }
    rays
}

fn brute_force(mesh: &TriMesh, rays: &[Ray]) -> Vec<RayHit> {
    let flat: Vec<u32> = mesh.triangles.iter().flatten().copied().collect();
    rays.iter()
        .map(|r| cpu::raycast_brute_force(&mesh.positions, &flat, 0, mesh.triangles.len() as u32, r))
        .collect()
}

fn assert_same_hits(what: &str, got: &[RayHit], want: &[RayHit]) {
    let mut hits = 0;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            g.triangle, w.triangle,
            "{what}: ray {i}: triangle {} vs {} (t {} vs {})",
            g.triangle, w.triangle, g.t, w.t
        );
        if w.triangle != NONE {
            hits += 1;
            assert!((g.t - w.t).abs() <= 1e-5 * w.t.abs().max(1e-3), "{what}: ray {i}: t {} vs {}", g.t, w.t);
            assert!((g.u - w.u).abs() <= 1e-4 && (g.v - w.v).abs() <= 1e-4, "{what}: ray {i}: barycentrics");
        }
    }
    assert!(hits > got.len() / 4, "{what}: only {hits} of {} rays hit: the test rays are off", got.len());
}

fn check_mesh(name: &str, mesh: &TriMesh, seed: u64) -> (f64, f64) {
    let rays = rays_for(mesh, seed);
    let want = brute_force(mesh, &rays);
    let mut gpu = Scene::new(ctx());
    let g = gpu.add_body(&mesh.positions, &mesh.triangles, BodyKind::Volumetric).unwrap();
    gpu.update().unwrap();
    let got = gpu.cast_rays(g, &rays).unwrap();
    assert_same_hits(&format!("{name} GPU"), &got, &want);
    // The other tuning's walk (through the compact child pairs where the adapter's reads the
    // children's own nodes, or the reverse) finds the same hits, bit for bit; each walk visits
    // the nodes its twin does (through the pairs where its frame has them).
    let mut other = Scene::new(other_tuning_ctx());
    let o = other.add_body(&mesh.positions, &mesh.triangles, BodyKind::Volumetric).unwrap();
    other.update().unwrap();
    let theirs = other.cast_rays(o, &rays).unwrap();
    let hit = |h: &RayHit| (h.triangle, h.t.to_bits(), h.u.to_bits(), h.v.to_bits());
    assert!(got.iter().map(hit).eq(theirs.iter().map(hit)), "{name}: the other tuning's hits");
    let mut unpaired = None;
    for (tuning, scene, hits) in [("this", &mut gpu, &got), ("the other", &mut other, &theirs)] {
        let frame = scene.frame_data().unwrap();
        let query = cpu::QueryScene { packing: scene.packing(), frame: &frame, positions: &mesh.positions };
        let twin = cpu::raycast(&query, &[0], &rays);
        let count = |h: &RayHit| (h.nodes_visited, h.triangles_tested, h.fallback);
        assert!(
            hits.iter().map(count).eq(twin.iter().map(count)),
            "{name}: {tuning} tuning's walk and its twin's"
        );
        let nodes = hits.iter().map(|h| h.nodes_visited as f64).sum::<f64>() / hits.len() as f64;
        let pairs = if frame.child_pairs.is_empty() { "its nodes" } else { "compact child pairs" };
        if frame.child_pairs.is_empty() {
            unpaired = Some(hits.iter().map(|h| h.nodes_visited as u64).sum::<u64>());
        }
        eprintln!("{name}: {tuning} tuning, through {pairs}: {nodes:.1} nodes per ray");
    }
    let mut cpu = Scene::new_cpu(None).unwrap();
    let c = cpu.add_body(&mesh.positions, &mesh.triangles, BodyKind::Volumetric).unwrap();
    cpu.update().unwrap();
    let cpu_hits = cpu.cast_rays(c, &rays).unwrap();
    assert_same_hits(&format!("{name} CPU BVH"), &cpu_hits, &want);
    // The GPU's walk through the nodes and its twin on the CPU backend's tree (the same tree)
    // visit the same nodes.
    let frame = cpu.frame_data().unwrap();
    let scene = cpu::QueryScene { packing: cpu.packing(), frame: &frame, positions: &mesh.positions };
    let twin = cpu::raycast(&scene, &[0], &rays);
    assert_same_hits(&format!("{name} CPU twin"), &twin, &want);
    let nodes_cpu: u64 = twin.iter().map(|h| h.nodes_visited as u64).sum();
    let tris: u64 = twin.iter().map(|h| h.triangles_tested as u64).sum();
    assert_eq!(unpaired, Some(nodes_cpu), "{name}: nodes visited");
    let per_ray = nodes_cpu as f64 / rays.len() as f64;
    eprintln!(
        "{name}: {} triangles, {per_ray:.1} nodes and {:.1} triangles tested per ray",
        mesh.triangles.len(),
        tris as f64 / rays.len() as f64
    );
    // The BVH must prune: far fewer triangle tests than brute force.
    assert!((tris as f64) < 0.2 * (rays.len() * mesh.triangles.len()) as f64);
    (per_ray, tris as f64 / rays.len() as f64)
}

#[test]
fn raycast_sphere() {
    check_mesh("sphere", &meshes::uv_sphere(1.0, 64, 32), 1);
}

#[test]
fn raycast_torus() {
    check_mesh("torus", &meshes::torus(1.0, 0.3, 80, 40), 2);
}

#[test]
fn raycast_bunny() {
    check_mesh("bunny", &raycontact_tests::bunny(), 3);
}

#[test]
fn raycast_axis_aligned_and_grazing() {
    // A subdivided box: rays along the axes through grid vertices and edges, where the
    // watertight test and the tie rule matter most.
    let mesh = meshes::cuboid(Vec3::ONE, 8);
    let mut rays = Vec::new();
    for i in 0..=16 {
        for j in 0..=16 {
            let (x, y) = (-1.0 + i as f32 / 8.0, -1.0 + j as f32 / 8.0);
            rays.push(Ray::new(Vec3::new(x, y, 5.0), -Vec3::Z));
            rays.push(Ray::new(Vec3::new(5.0, x, y), -Vec3::X));
            rays.push(Ray::new(Vec3::new(x * 0.999, -5.0, y * 0.999), Vec3::Y));
        }
    }
    let want = brute_force(&mesh, &rays);
    // Every ray inside the face's span hits the box: no ray slips through an edge.
    for (r, w) in rays.iter().zip(&want) {
        let o = r.origin;
        let inside = [o.x, o.y, o.z].iter().filter(|c| c.abs() <= 1.0).count() == 2;
        assert_eq!(w.triangle != NONE, inside, "ray from {o}");
    }
    let mut gpu = Scene::new(ctx());
    let g = gpu.add_body(&mesh.positions, &mesh.triangles, BodyKind::Volumetric).unwrap();
    gpu.update().unwrap();
    let got = gpu.cast_rays(g, &rays).unwrap();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.triangle, w.triangle, "ray {i} from {}", rays[i].origin);
        if w.is_hit() {
            assert!((g.t - w.t).abs() <= 1e-5 * w.t);
        }
    }
}

#[test]
fn cast_rays_needs_a_fresh_bvh() {
    let mesh = meshes::uv_sphere(1.0, 8, 4);
    let mut s = Scene::new_cpu(Some(1)).unwrap();
    let id = s.add_body(&mesh.positions, &mesh.triangles, BodyKind::Volumetric).unwrap();
    assert!(matches!(s.cast_rays(id, &[]), Err(raycontact::Error::StaleBvh)));
    s.update().unwrap();
    assert!(s.cast_rays(id, &[]).unwrap().is_empty());
}

#[test]
fn short_stack_overflow_falls_back_without_missing_hits() {
    // 2^18 nested triangles stacked in z around one vertical line: the tree is 15 to 20 levels
    // deep and every box contains the ray, so the nearer-first walk pushes a farther child at
    // every level down to the nearest triangle. Rays from above reach the top triangle, a leaf
    // 15 levels deep: the short stack (SHORT_STACK entries) holds. Rays from below reach the
    // bottom one, 19 levels deep: the stack overflows and the query must finish with the
    // stackless walk, pruned by the nearest hit. (Ties at one t across 2^15 or more triangles
    // would need more loop iterations than llvmpipe runs: it caps every shader loop at 65535
    // iterations.)
    let mesh = stacked_triangles(18);
    let mut r = rng(77);
    let rays: Vec<Ray> = (0..400)
        .map(|i| {
            let side = if i < 200 { 1.0 } else { -1.0 };
            let o = Vec3::new(r.random_range(-0.5..0.5), r.random_range(-0.5..0.5), 5.0 * side);
            Ray::new(o, Vec3::new(r.random_range(-0.05..0.05), r.random_range(-0.05..0.05), -side))
        })
        .collect();
    let want = brute_force(&mesh, &rays);
    let mut gpu = Scene::new(ctx());
    let g = gpu.add_body(&mesh.positions, &mesh.triangles, BodyKind::Volumetric).unwrap();
    gpu.update().unwrap();
    let got = gpu.cast_rays(g, &rays).unwrap();
    assert_same_hits("stacked triangles GPU", &got, &want);
    // Every ray from below overflowed the GPU's short stack and finished with the stackless
    // walk, none from above did; all found the brute force's hit (above).
    let fallbacks: Vec<u32> = got.iter().map(|h| h.fallback).collect();
    assert_eq!(fallbacks, [[0; 200], [1; 200]].concat(), "rays whose GPU walk fell back");
    let mut cpu = Scene::new_cpu(None).unwrap();
    let c = cpu.add_body(&mesh.positions, &mesh.triangles, BodyKind::Volumetric).unwrap();
    cpu.update().unwrap();
    assert_same_hits("stacked triangles CPU", &cpu.cast_rays(c, &rays).unwrap(), &want);
    // The twin on the GPU's frame (through its child pairs where it has them).
    let frame = gpu.frame_data().unwrap();
    let scene = cpu::QueryScene { packing: gpu.packing(), frame: &frame, positions: &mesh.positions };
    let twin = cpu::raycast(&scene, &[0], &rays);
    assert_eq!(
        got.iter().map(|h| (h.nodes_visited, h.fallback)).collect::<Vec<_>>(),
        twin.iter().map(|h| (h.nodes_visited, h.fallback)).collect::<Vec<_>>(),
        "the GPU and its twin walk alike"
    );

    // 2^17 coplanar nested triangles with one centroid: the Morton codes tie, the index
    // balances the tree (17 levels, one more than the short stack), every box is entered at the
    // same t, so the walk overflows and the fallback walk runs. Checked on the twin: on
    // llvmpipe this query needs more loop iterations than it runs (it caps every shader loop at
    // 65535 iterations), which only rays through some 2^15 boxes entered at once reach.
    let mut flat = TriMesh::default();
    for t in 0..(1u32 << 17) {
        let s = 1.0 + (t % 1000) as f32 * 1e-3;
        flat.positions.extend([Vec3::new(-s, -s, 0.0), Vec3::new(s, -s, 0.0), Vec3::new(0.0, 2.0 * s, 0.0)]);
        flat.triangles.push([3 * t, 3 * t + 1, 3 * t + 2]);
    }
    let mut cpu = Scene::new_cpu(None).unwrap();
    cpu.add_body(&flat.positions, &flat.triangles, BodyKind::Volumetric).unwrap();
    cpu.update().unwrap();
    let frame = cpu.frame_data().unwrap();
    let few = &rays[..8]; // from above
    let scene = cpu::QueryScene { packing: cpu.packing(), frame: &frame, positions: &flat.positions };
    let twin = cpu::raycast(&scene, &[0], few);
    assert!(twin.iter().all(|h| h.fallback == 1), "the short stack overflows");
    assert_same_hits("flat nested triangles", &twin, &brute_force(&flat, few));
}
