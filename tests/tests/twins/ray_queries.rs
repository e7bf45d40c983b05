//! The twins of the any-hit and all-hits queries (`cpu::raycast_anyhit`, `cpu::raycast_all`)
//! and of the closest hit over a list of bodies (`cpu::raycast`), against an f64 brute force
//! over every triangle of every body, on random meshes packed after a decoy (so that the list
//! positions, the packed indices and the offsets all differ). Rays whose answer is not clear in
//! f64 (a crossing within 1e-4 of an edge, grazing, two hits within 1e-4 relative, a hit at an
//! end of the segment) are skipped; on the others the hits must be the same triangles of the
//! same bodies, in the same order, with `t` within 1e-5 relative.

use glam::Vec3;
use raycontact::internals::cpu::{self, QueryScene};
use raycontact::internals::layout::{NONE, Ray, RayHitCount, RayHitTotals, RayIntersection};
use raycontact::meshes::{self, TriMesh};
use raycontact::{AllHits, BodyKind, Scene};
use raycontact_tests::rng;

use crate::queries::{bumpy, random_rays, soup};
use crate::reference::{Packed, crossing};

/// Every hit of `ray` on `bodies` (list position, mesh) in f64, sorted by (t, body, triangle):
/// (t, body, triangle), and whether the answer is clear.
fn brute_all(bodies: &[&TriMesh], ray: &Ray) -> (Vec<(f64, u32, u32)>, bool) {
    const EPS: f64 = 1e-4;
    let (tmin, tmax) = (ray.tmin as f64, ray.tmax as f64);
    let mut hits = Vec::new();
    let mut clear = true;
    for (k, m) in bodies.iter().enumerate() {
        for (i, t) in m.triangles.iter().enumerate() {
            let [a, b, c] = t.map(|v| m.positions[v as usize]);
            let Some(x) = crossing(ray.origin, ray.dir, a, b, c) else { continue };
            let scale = x.t.abs().max(1e-3);
            let in_range = x.t >= tmin - EPS * scale && x.t <= tmax + EPS * scale;
            if in_range && (x.margin.abs() < EPS || (x.margin > 0.0 && x.cosine < 1e-3)) {
                clear = false;
            }
            if x.margin < 0.0 {
                continue;
            }
            if (x.t - tmin).abs() < EPS * scale || (x.t - tmax).abs() < EPS * scale {
                clear = false;
            }
            if x.t >= tmin && x.t <= tmax {
                hits.push((x.t, k as u32, i as u32));
            }
        }
    }
    hits.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)).then(p.2.cmp(&q.2)));
    if hits.windows(2).any(|w| w[1].0 - w[0].0 < EPS * w[0].0.abs().max(1e-3)) {
        clear = false;
    }
    (hits, clear)
}

/// A decoy, then a soup, then a bumpy sphere: the list of the query is [bumpy, soup], packed
/// bodies [2, 1].
struct Fixture {
    packed: Packed,
    soup: TriMesh,
    bumpy: TriMesh,
    rays: Vec<Ray>,
}

impl Fixture {
    fn new(seed: u64, soup_size: u32) -> Self {
        let mut r = rng(seed);
        let decoy = meshes::icosphere(0.3, 1);
        let soup = soup(&mut r, soup_size);
        let bumpy = bumpy(&mut r);
        let packed = Packed::new(&[
            (&decoy, BodyKind::Volumetric),
            (&soup, BodyKind::Volumetric),
            (&bumpy, BodyKind::Volumetric),
        ]);
        let rays = random_rays(&mut r, 3000);
        Fixture { packed, soup, bumpy, rays }
    }

    fn scene(&self) -> QueryScene<'_> {
        QueryScene {
            packing: &self.packed.packing,
            frame: &self.packed.frame,
            positions: &self.packed.positions,
        }
    }

    fn bodies(&self) -> [&TriMesh; 2] {
        [&self.bumpy, &self.soup]
    }
}

const TARGETS: [u32; 2] = [2, 1];

/// `t` within 1e-5 relative, or 1e-6 (in units of the direction, whose length is 0.2 to 15 here)
/// near the origin, where f32 positions of size 1 round by more than 1e-5 of `t`.
fn assert_t(what: &str, got: f32, want: f64) {
    assert!((got as f64 - want).abs() <= 1e-5 * want.abs().max(0.1), "{what}: t {got} vs {want}");
}

#[test]
fn all_hits_are_the_brute_force_hits_in_order_up_to_the_cap() {
    let mut compared = 0;
    let mut overflowed = 0;
    for (seed, size) in [(11, 300), (12, 2000)] {
        let f = Fixture::new(seed, size);
        for cap in [1u32, 3, 64] {
            let (totals, counts, slots) = cpu::raycast_all(&f.scene(), &TARGETS, &f.rays, cap);
            assert_eq!(totals, RayHitTotals::of(&counts), "the totals sum the counts");
            let all = AllHits::from_slots(cap, totals, counts.clone(), &slots).unwrap();
            for (i, ray) in f.rays.iter().enumerate() {
                let (want, clear) = brute_all(&f.bodies(), ray);
                let c = counts[i];
                assert_eq!(c.stored, c.found.min(cap), "ray {i}: stored");
                let got = all.ray(i);
                assert_eq!(got.len(), c.stored as usize);
                assert!(got.windows(2).all(|w| w[0].order(&w[1]).is_lt()), "ray {i}: sorted");
                if !clear {
                    continue;
                }
                compared += 1;
                overflowed += u32::from(c.overflow() > 0);
                assert_eq!(c.found as usize, want.len(), "ray {i} {ray:?}: hits found");
                for (g, w) in got.iter().zip(&want) {
                    assert_eq!((g.body, g.triangle), (w.1, w.2), "ray {i} (cap {cap}): {got:?} vs {want:?}");
                    assert_t(&format!("ray {i}"), g.t, w.0);
                }
            }
        }
    }
    eprintln!("all hits: {compared} clear rays compared, {overflowed} of them overflowed");
    assert!(compared > 10_000 && overflowed > 1000, "{compared} compared, {overflowed} overflowed");
}

#[test]
fn any_hit_finds_a_hit_exactly_when_there_is_one_and_it_is_real() {
    let (mut hits, mut compared) = (0, 0);
    for (seed, size) in [(21, 300), (22, 2000)] {
        let f = Fixture::new(seed, size);
        let any = cpu::raycast_anyhit(&f.scene(), &TARGETS, &f.rays);
        let (_, counts, _) = cpu::raycast_all(&f.scene(), &TARGETS, &f.rays, 1);
        for (i, (ray, h)) in f.rays.iter().zip(&any).enumerate() {
            assert_eq!(h.fallback, 0);
            if !h.is_hit() {
                assert_eq!(h.body, NONE);
                // Nothing stopped the walk: it visited what the all-hits walk visits.
                assert_eq!(
                    (h.nodes_visited, h.triangles_tested),
                    (counts[i].nodes_visited, counts[i].triangles_tested)
                );
                assert_eq!(counts[i].found, 0, "ray {i}: the all-hits walk finds no hit either");
            } else {
                assert!(counts[i].found > 0, "ray {i}: a hit the all-hits walk does not find");
                assert!(h.nodes_visited <= counts[i].nodes_visited);
            }
            let (want, clear) = brute_all(&f.bodies(), ray);
            if !clear {
                continue;
            }
            compared += 1;
            assert_eq!(h.is_hit(), !want.is_empty(), "ray {i}: {h:?} vs {want:?}");
            if h.is_hit() {
                hits += 1;
                let w = want.iter().find(|w| (w.1, w.2) == (h.body, h.triangle));
                let w = w.unwrap_or_else(|| panic!("ray {i}: any hit {h:?} is not among {want:?}"));
                assert_t(&format!("ray {i}"), h.t, w.0);
            }
        }
    }
    assert!(compared > 4000 && hits > 1000, "{compared} compared, {hits} hits");
}

#[test]
fn the_closest_hit_over_a_list_is_the_brute_force_one_and_the_backend_agrees() {
    let f = Fixture::new(31, 1500);
    let twin = cpu::raycast(&f.scene(), &TARGETS, &f.rays);
    let mut compared = 0;
    for (i, (ray, h)) in f.rays.iter().zip(&twin).enumerate() {
        let (want, clear) = brute_all(&f.bodies(), ray);
        if !clear {
            continue;
        }
        compared += 1;
        match want.first() {
            Some(w) => {
                assert_eq!((h.body, h.triangle), (w.1, w.2), "ray {i}");
                assert_t(&format!("ray {i}"), h.t, w.0);
            }
            None => assert!(!h.is_hit() && h.body == NONE, "ray {i}: {h:?}"),
        }
    }
    assert!(compared > 2000, "{compared} compared");
    // The CPU backend (its own traversal, body by body) finds the same hit on every ray.
    let mut scene = Scene::new_cpu(Some(2)).unwrap();
    let decoy = meshes::icosphere(0.3, 1);
    let _ = scene.add_body(&decoy.positions, &decoy.triangles, BodyKind::Volumetric).unwrap();
    let s = scene.add_body(&f.soup.positions, &f.soup.triangles, BodyKind::Volumetric).unwrap();
    let b = scene.add_body(&f.bumpy.positions, &f.bumpy.triangles, BodyKind::Volumetric).unwrap();
    scene.update().unwrap();
    let backend = scene.cast_rays(&[b, s], &f.rays).unwrap();
    for (i, (a, c)) in twin.iter().zip(&backend).enumerate() {
        assert_eq!((a.body, a.triangle, a.t, a.u, a.v), (c.body, c.triangle, c.t, c.u, c.v), "ray {i}");
    }
}

#[test]
fn a_stack_of_planes_keeps_the_nearest_hits_and_counts_the_rest() {
    // Ten unit squares at z = 0 .. 9, each two triangles; a ray down the z axis off the
    // diagonals crosses each square once, at t = 20 - z.
    let mut m = TriMesh::default();
    for z in 0..10 {
        let o = 4 * z;
        let zf = z as f32;
        m.positions.extend([
            Vec3::new(-1.0, -1.0, zf),
            Vec3::new(1.0, -1.0, zf),
            Vec3::new(1.0, 1.0, zf),
            Vec3::new(-1.0, 1.0, zf),
        ]);
        m.triangles.extend([[o, o + 1, o + 2], [o, o + 2, o + 3]]);
    }
    let p = Packed::new(&[(&m, BodyKind::Volumetric)]);
    let scene = QueryScene { packing: &p.packing, frame: &p.frame, positions: &p.positions };
    let down = Ray::new(Vec3::new(0.3, -0.2, 20.0), -Vec3::Z);
    let (totals, counts, slots) =
        cpu::raycast_all(&scene, &[0], &[down, Ray::new(Vec3::X * 5.0, Vec3::Z)], 4);
    assert_eq!(counts[0].found, 10);
    assert_eq!((counts[0].stored, counts[0].overflow()), (4, 6));
    let ts: Vec<f32> = slots[..4].iter().map(|h| h.t).collect();
    assert_eq!(ts, [11.0, 12.0, 13.0, 14.0]);
    assert!(slots[..4].iter().all(|h| h.body == 0 && h.triangle % 2 == 0 && h.triangle >= 12));
    assert_eq!(counts[1], RayHitCount { nodes_visited: counts[1].nodes_visited, ..Default::default() });
    assert_eq!(totals, RayHitTotals { found: 10, stored: 4, rays_hit: 1, rays_overflowed: 1 });
    // The segment [12.5, 16.5] holds the planes at z = 7, 6, 5, 4.
    let seg = Ray { tmin: 12.5, tmax: 16.5, ..down };
    let (_, c, s) = cpu::raycast_all(&scene, &[0], &[seg], 16);
    assert_eq!((c[0].found, c[0].stored), (4, 4));
    assert_eq!(s[..4].iter().map(|h| h.t).collect::<Vec<_>>(), [13.0, 14.0, 15.0, 16.0]);
    let any = cpu::raycast_anyhit(&scene, &[0], &[seg, Ray { tmax: 10.5, ..down }]);
    assert!(any[0].is_hit() && (13.0..=16.0).contains(&any[0].t));
    assert!(!any[1].is_hit(), "the segment ends before the top plane");
    // Through the diagonal (x = y) each square's two triangles tie at the same t: both are
    // listed, by triangle index.
    let diag = Ray::new(Vec3::new(0.25, 0.25, 20.0), -Vec3::Z);
    let (_, c, s) = cpu::raycast_all(&scene, &[0], &[diag], 20);
    assert_eq!(c[0].found, 20);
    for pair in s.chunks(2) {
        assert_eq!(pair[0].t, pair[1].t);
        assert_eq!(pair[0].triangle + 1, pair[1].triangle);
    }
    let _: &[RayIntersection] = &s;
}
