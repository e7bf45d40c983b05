//! The ray queries (`cpu::raycast`, the GPU's traversal; `cpu::raycast_ordered`, the CPU
//! backend's, through its wide trees; `cpu::closest_hit`, `closest_hit_ordered` and
//! `closest_hit_wide` with an ignored vertex) against the f64 brute force of
//! `reference`, on random meshes. Rays whose answer is not clear in f64 (an edge within 1e-4,
//! two hits within 1e-4 relative, grazing) are skipped; on the others the triangle must be the
//! same and `t` within 1e-5 relative.

use glam::Vec3;
use rand::Rng;
use raycontact::BodyKind;
use raycontact::internals::cpu;
use raycontact::internals::layout::{NONE, Ray, RayHit};
use raycontact::meshes::{self, TriMesh};
use raycontact_tests::{random_unit, rng};

use crate::reference::{Packed, brute_closest};

/// A triangle soup of `count` triangles in the unit box, of sizes from 0.02 to 0.3, crossing.
pub(crate) fn soup(r: &mut rand_pcg::Pcg64, count: u32) -> TriMesh {
    let mut m = TriMesh::default();
    for t in 0..count {
        let c = Vec3::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0), r.random_range(-1.0..1.0));
        let size = r.random_range(0.02..0.3);
        for _ in 0..3 {
            m.positions.push(c + random_unit(r) * size);
        }
        m.triangles.push([3 * t, 3 * t + 1, 3 * t + 2]);
    }
    m
}

/// An icosphere with its vertices moved radially at random: a closed, bumpy, non-convex
/// surface.
pub(crate) fn bumpy(r: &mut rand_pcg::Pcg64) -> TriMesh {
    let mut m = meshes::icosphere(1.0, 3);
    for p in &mut m.positions {
        *p *= r.random_range(0.7..1.2);
    }
    m
}

pub(crate) fn random_rays(r: &mut rand_pcg::Pcg64, n: usize) -> Vec<Ray> {
    (0..n)
        .map(|i| {
            let mut ray = if i % 2 == 0 {
                let o = random_unit(r) * 3.0;
                let at = Vec3::new(
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                );
                Ray::new(o, (at - o) * r.random_range(0.2..5.0f32))
            } else {
                let o = Vec3::new(
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                );
                Ray::new(o, random_unit(r))
            };
            if i % 5 == 0 {
                ray.tmin = r.random_range(0.0..0.5);
                ray.tmax = r.random_range(0.5..2.0);
            }
            ray
        })
        .collect()
}

/// The query's hits against the brute force on the clear rays: returns how many were compared.
fn compare(what: &str, mesh: &TriMesh, rays: &[Ray], got: &[RayHit], ignore: &[Option<u32>]) -> usize {
    let mut compared = 0;
    for (i, (ray, g)) in rays.iter().zip(got).enumerate() {
        let want = brute_closest(&mesh.positions, &mesh.triangles, ray, ignore[i]);
        if !want.clear {
            continue;
        }
        compared += 1;
        assert_eq!(g.triangle, want.triangle.unwrap_or(NONE), "{what}: ray {i} {ray:?}: {g:?} vs {want:?}");
        if want.triangle.is_some() {
            assert!(
                (g.t as f64 - want.t).abs() <= 1e-5 * want.t.abs().max(1e-3),
                "{what}: ray {i}: t {} vs {}",
                g.t,
                want.t
            );
            let (u, v) = want.uv;
            assert!(
                (g.u as f64 - u).abs() < 1e-4 && (g.v as f64 - v).abs() < 1e-4,
                "{what}: ray {i}: barycentrics"
            );
        }
    }
    compared
}

#[test]
fn raycast_and_the_ordered_walk_find_the_brute_force_hit() {
    let mut r = rng(1980);
    let decoy = meshes::icosphere(0.3, 1);
    let (mut clear, mut hits, mut total) = (0, 0, 0);
    for round in 0..6 {
        let mesh = if round % 2 == 0 { soup(&mut r, [10, 400, 3000][round / 2]) } else { bumpy(&mut r) };
        // A decoy body first, so that the mesh's vertices and triangles do not start at 0.
        let p = Packed::new(&[(&decoy, BodyKind::Volumetric), (&mesh, BodyKind::Volumetric)]);
        let rays = random_rays(&mut r, 4000);
        let none = vec![None; rays.len()];
        let scene = cpu::QueryScene { packing: &p.packing, frame: &p.frame, positions: &p.positions };
        let gpu_order = cpu::raycast(&scene, &[1], &rays);
        let n = compare(&format!("round {round}, raycast"), &mesh, &rays, &gpu_order, &none);
        let cpu_order = cpu::raycast_ordered(&p.packing, &p.frame, &p.positions, 1, &rays);
        compare(&format!("round {round}, raycast_ordered"), &mesh, &rays, &cpu_order, &none);
        clear += n;
        total += rays.len();
        hits += gpu_order.iter().filter(|h| h.is_hit()).count();
        // The two traversal orders find the same hit on every ray, clear or not.
        for (a, b) in gpu_order.iter().zip(&cpu_order) {
            assert_eq!((a.triangle, a.t, a.u, a.v), (b.triangle, b.t, b.u, b.v), "round {round}");
        }
    }
    eprintln!("ray queries: {clear} of {total} rays clear, {hits} hits");
    assert!(clear * 10 > total * 8 && hits * 4 > total, "{clear} clear rays, {hits} hits of {total}");
}

#[test]
fn closest_hit_skips_the_triangles_of_the_ignored_vertex() {
    let mut r = rng(1981);
    let mesh = bumpy(&mut r);
    let p = Packed::new(&[(&mesh, BodyKind::Volumetric)]);
    let body = &p.packing.bodies[0];
    let nodes = p.frame.body_nodes(&p.packing, 0);
    // From each vertex, inwards and outwards: the ray starts on the vertex's own triangles.
    let mut rays = Vec::new();
    let mut ignore = Vec::new();
    for (v, x) in mesh.positions.iter().enumerate() {
        let d = random_unit(&mut r);
        rays.push(Ray::new(*x, if d.dot(*x) > 0.0 { -d } else { d }));
        ignore.push(Some(v as u32));
    }
    let got: Vec<RayHit> = rays
        .iter()
        .zip(&ignore)
        .map(|(ray, v)| {
            cpu::closest_hit(body, nodes, &p.positions, &p.packing.triangles, ray, v.unwrap(), &[])
        })
        .collect();
    let ordered: Vec<RayHit> = rays
        .iter()
        .zip(&ignore)
        .map(|(ray, v)| {
            cpu::closest_hit_ordered(body, nodes, &p.positions, &p.packing.triangles, ray, v.unwrap())
        })
        .collect();
    let wide: Vec<RayHit> = rays
        .iter()
        .zip(&ignore)
        .map(|(ray, v)| {
            let tree = p.frame.body_wide(0).expect("a wide tree");
            cpu::closest_hit_wide(body, nodes, tree, &p.positions, &p.packing.triangles, ray, v.unwrap())
        })
        .collect();
    let n = compare("closest_hit", &mesh, &rays, &got, &ignore);
    compare("closest_hit_ordered", &mesh, &rays, &ordered, &ignore);
    compare("closest_hit_wide", &mesh, &rays, &wide, &ignore);
    for (a, b) in got.iter().zip(&wide) {
        assert_eq!((a.triangle, a.t, a.u, a.v), (b.triangle, b.t, b.u, b.v), "the wide walk, hit for hit");
    }
    assert!(n > mesh.positions.len() / 2, "{n} clear rays");
    assert!(got.iter().filter(|h| h.is_hit()).count() > mesh.positions.len() / 2, "inward rays hit");
}

/// A stacked entry is walked into only when the ray still enters its box before the hit found
/// so far, and its box is not tested again (`cpu::closest_hit`, the twin of the kernels' walk,
/// and the line walk `cpu::closest_hits_line_binary`): two triangles across the z axis at z = 1
/// and z = 2, one leaf each under the root. A ray up the axis hits the nearer one, and the
/// farther leaf, stacked, is dropped when popped: the root and the two children are read (3
/// nodes), not the farther box a second time. A ray that enters the nearer triangle's box but
/// misses the triangle goes back to the farther leaf and hits it, with no box tested again
/// either (3: the leaf's word is on the stack, from the root's child pair). The opposite rays of
/// a line walk from below find nothing, their nodes counted with the first.
#[test]
fn a_stacked_entry_beyond_the_hit_is_dropped_without_a_second_box_test() {
    let mut m = TriMesh::default();
    for z in [1.0f32, 2.0] {
        let base = m.positions.len() as u32;
        m.positions.extend([Vec3::new(-1.0, -1.0, z), Vec3::new(1.0, -1.0, z), Vec3::new(0.0, 1.0, z)]);
        m.triangles.push([base, base + 1, base + 2]);
    }
    let p = Packed::new(&[(&m, BodyKind::Volumetric)]);
    let body = &p.packing.bodies[0];
    let nodes = p.frame.body_nodes(&p.packing, 0);
    assert_eq!(nodes.len(), 3, "the root and two leaves");
    let tris = &p.packing.triangles;
    // Which packed triangle lies at z = 1.
    let at = |z: f32| (0..2u32).find(|&t| p.positions[tris[3 * t as usize] as usize].z == z).unwrap();
    let (near, far) = (at(1.0), at(2.0));
    // Up the axis through both triangles: the nearer one is hit.
    let up = Ray::new(Vec3::new(0.0, -0.2, 0.0), Vec3::Z);
    let hit = cpu::closest_hit(body, nodes, &p.positions, tris, &up, NONE, &[]);
    assert_eq!((hit.triangle, hit.nodes_visited), (near, 3), "{hit:?}");
    assert!((hit.t - 1.0).abs() < 1e-6, "{hit:?}");
    // Through (0.8, 0.7) at z = 1, in the box but beside the triangle's slanted edge, and
    // through (0, 0) at z = 2, inside the farther triangle.
    let slanted = Ray::new(Vec3::new(1.6, 1.4, 0.0), Vec3::new(-0.8, -0.7, 1.0).normalize());
    let hit = cpu::closest_hit(body, nodes, &p.positions, tris, &slanted, NONE, &[]);
    assert_eq!((hit.triangle, hit.nodes_visited), (far, 3), "{hit:?}");
    for (ray, want) in [(up, (near, 3)), (slanted, (far, 3))] {
        let [front, back] = cpu::closest_hits_line_binary(body, nodes, &p.positions, tris, &ray, NONE, &[]);
        assert_eq!((front.triangle, front.nodes_visited), want, "{front:?}");
        assert_eq!((back.triangle, back.nodes_visited), (NONE, 0), "{back:?}");
    }
}
