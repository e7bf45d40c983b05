//! `cpu::intersect_triangle` (the watertight test of `shared/ray.wgsl`) against Möller–Trumbore
//! in f64, on random rays and triangles away from the edges; its `t` on a ray exactly on an
//! edge line; its watertightness on rays through a shared edge; and that the order of a
//! triangle's corners changes nothing, bit for bit.
//!
//! Edge cases are excluded, not compared: a pair is skipped when the f64 crossing lies within
//! 1e-3 (in barycentric units) of an edge line, when the ray grazes the plane (`|cos| < 0.02`),
//! when the triangle is thin (its smallest height under 2% of its longest edge), or when `t`
//! lies within 1e-4 (relative) of `tmin` or `tmax`. On the rest the two must agree on hit or
//! miss, on `t` within 1e-5 relative and on the barycentric weights within 1e-5 / |cos| (the
//! sheared f32 computation loses precision as the ray grazes; seen on 190k pairs: 3.8e-6 and
//! 4.1e-6).

use glam::Vec3;
use rand::Rng;
use raycontact::internals::cpu::{intersect_triangle, ray_axes};
use raycontact_tests::{random_unit, rng};

use crate::reference::crossing;

fn random_point(r: &mut impl Rng, half: f32) -> Vec3 {
    Vec3::new(r.random_range(-half..half), r.random_range(-half..half), r.random_range(-half..half))
}

/// Smallest height of a triangle over its longest edge.
fn thinness(a: Vec3, b: Vec3, c: Vec3) -> f32 {
    let area2 = (b - a).cross(c - a).length();
    let longest = (b - a).length().max((c - b).length()).max((a - c).length());
    area2 / (longest * longest)
}

#[test]
fn intersect_triangle_matches_moller_trumbore_away_from_edges() {
    let mut r = rng(1997);
    let (mut compared, mut hits, mut skipped) = (0, 0, 0);
    let (mut worst_t, mut worst_uv) = (0.0f64, 0.0f64);
    for i in 0..200_000 {
        let (a, b, c) = (random_point(&mut r, 1.0), random_point(&mut r, 1.0), random_point(&mut r, 1.0));
        let o = random_unit(&mut r) * r.random_range(0.5..4.0);
        // Towards a point near the triangle (about half of them hit), with a direction of any
        // length; a quarter of the rays have a finite segment.
        let w: [f32; 3] = [r.random_range(-0.3..1.0), r.random_range(-0.3..1.0), r.random_range(-0.3..1.0)];
        let sum = w[0] + w[1] + w[2];
        let target = (a * w[0] + b * w[1] + c * w[2]) / sum;
        let d = (target - o) * r.random_range(0.1..10.0f32);
        let (tmin, tmax) = match i % 4 {
            0 => (r.random_range(0.0..0.5), r.random_range(0.5..1.5)),
            _ => (0.0, f32::INFINITY),
        };
        if sum.abs() < 0.1 || thinness(a, b, c) < 0.02 {
            skipped += 1;
            continue;
        }
        let Some(x) = crossing(o, d, a, b, c) else {
            skipped += 1;
            continue;
        };
        let near_end = (x.t - tmin as f64).abs() < 1e-4 * x.t.abs().max(1e-3)
            || (x.t - tmax as f64).abs() < 1e-4 * x.t.abs().max(1e-3);
        if x.margin.abs() < 1e-3 || x.cosine < 0.02 || near_end {
            skipped += 1;
            continue;
        }
        let expected = x.margin > 0.0 && x.t >= tmin as f64 && x.t <= tmax as f64;
        let got = intersect_triangle(o, d, ray_axes(d), tmin, tmax, a, b, c);
        assert_eq!(
            got.is_some(),
            expected,
            "ray {i}: o {o} d {d} [{tmin}, {tmax}] on ({a}, {b}, {c}): {x:?}"
        );
        compared += 1;
        if let Some((t, u, v)) = got {
            hits += 1;
            let et = (t as f64 - x.t).abs() / x.t.abs();
            let euv = (u as f64 - x.u).abs().max((v as f64 - x.v).abs()) * x.cosine;
            worst_t = worst_t.max(et);
            worst_uv = worst_uv.max(euv);
            assert!(et <= 1e-5, "ray {i}: t {t} vs {}", x.t);
            assert!(euv <= 1e-5, "ray {i}: (u, v) ({u}, {v}) vs ({}, {})", x.u, x.v);
        }
    }
    eprintln!(
        "intersect_triangle: {compared} compared ({hits} hits), {skipped} skipped; worst t {worst_t:e}, uv {worst_uv:e}"
    );
    assert!(compared > 100_000 && hits > 30_000, "the random cases must mostly count");
}

/// A ray whose sheared edge function is exactly zero (the edge (b, c) seen end to end from the
/// ray's line) takes its `t` from the edge alone (`edge_t`): along +z from the origin through
/// the edge from (-1, 0, 2) to (3, 0, 6), which it crosses a quarter of the way along, at z = 3,
/// whatever the corner the triangle is listed from and its orientation; the weights of b and c
/// are 3/4 and 1/4. (The random rays above never land exactly on an edge line.)
#[test]
fn a_ray_exactly_on_an_edge_line_takes_the_edges_t() {
    let (a, b, c) = (Vec3::new(0.0, 1.0, 9.0), Vec3::new(-1.0, 0.0, 2.0), Vec3::new(3.0, 0.0, 6.0));
    let (o, d) = (Vec3::ZERO, Vec3::Z);
    let hit = |p, q, r| intersect_triangle(o, d, ray_axes(d), 0.0, f32::INFINITY, p, q, r);
    assert_eq!(hit(a, b, c), Some((3.0, 0.75, 0.25)));
    for (p, q, r) in [(b, c, a), (c, a, b), (a, c, b), (c, b, a), (b, a, c)] {
        assert_eq!(hit(p, q, r).map(|h| h.0), Some(3.0), "listed as ({p}, {q}, {r})");
    }
}

#[test]
fn a_ray_through_a_shared_edge_hits_one_side_at_the_edges_t() {
    // Two triangles sharing the edge (p, q): a ray aimed at a point of that edge (rounded to
    // f32, so a hair to either side) must hit at least one of them (watertight), and every
    // hit has the t of the edge point within the f32 rounding.
    let mut r = rng(2013);
    let mut both = 0;
    for i in 0..50_000 {
        let (p, q) = (random_point(&mut r, 1.0), random_point(&mut r, 1.0));
        let (s1, s2) = (random_point(&mut r, 1.0), random_point(&mut r, 1.0));
        // s2 on the other side of the edge than s1, in the plane of neither.
        let mid = (p + q) * 0.5;
        let s2 = mid + (mid - s1) + (s2 - mid) * 0.2;
        if thinness(p, q, s1) < 0.05 || thinness(q, p, s2) < 0.05 {
            continue;
        }
        let at = p + (q - p) * r.random_range(0.05..0.95f32);
        let o = random_unit(&mut r) * 3.0;
        let d = at - o;
        let axes = ray_axes(d);
        let one = intersect_triangle(o, d, axes, 0.0, f32::INFINITY, p, q, s1);
        let two = intersect_triangle(o, d, axes, 0.0, f32::INFINITY, q, p, s2);
        let (Some(x1), Some(x2)) = (
            crossing(o, d, p, q, s1).filter(|x| x.cosine > 0.05),
            crossing(o, d, q, p, s2).filter(|x| x.cosine > 0.05),
        ) else {
            continue;
        };
        // Both triangles face the ray from the same side when the surface does not fold over
        // the edge as seen from o; skip the folded views (a ray may then pass between them).
        let n1 = (q - p).cross(s1 - p);
        let n2 = (p - q).cross(s2 - q);
        if n1.dot(d).signum() != n2.dot(d).signum() {
            continue;
        }
        assert!(
            one.is_some() || two.is_some(),
            "ray {i} through the shared edge slips through: {x1:?} {x2:?}"
        );
        for (t, _, _) in [one, two].into_iter().flatten() {
            assert!((t - 1.0).abs() < 1e-5, "ray {i}: t {t} at the edge point (t = 1)");
        }
        both += usize::from(one.is_some() && two.is_some());
    }
    eprintln!("shared edges: {both} rays hit both triangles");
}

#[test]
fn a_triangle_listed_from_any_corner_in_either_orientation_is_hit_at_the_same_t() {
    // The six orders of a triangle's corners (three rotations, each in both orientations) are
    // hit or missed alike, at the same t and with the same weight at each corner, bit for bit:
    // coincident triangles tie exactly, so the lowest index wins on every device.
    let mut r = rng(2015);
    let orders = [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [2, 1, 0], [1, 0, 2]];
    let mut hits = 0;
    for i in 0..100_000 {
        let p = [random_point(&mut r, 1.0), random_point(&mut r, 1.0), random_point(&mut r, 1.0)];
        let o = random_unit(&mut r) * r.random_range(0.5..4.0);
        let d = (p[r.random_range(0..3)] * 0.5 + random_point(&mut r, 0.6)) - o;
        let d = d * r.random_range(0.1..10.0f32);
        let axes = ray_axes(d);
        // (t, weight of corner 0, 1, 2) as bits.
        let found: Vec<Option<[u32; 4]>> = orders
            .iter()
            .map(|&[x, y, z]| {
                intersect_triangle(o, d, axes, 0.0, f32::INFINITY, p[x], p[y], p[z]).map(|(t, u, v)| {
                    let mut w = [0.0f32; 3];
                    (w[y], w[z]) = (u, v);
                    let bits = |k: usize| if k == x { u32::MAX } else { w[k].to_bits() };
                    [t.to_bits(), bits(0), bits(1), bits(2)]
                })
            })
            .collect();
        let first = found[0].map(|[t, ..]| t);
        for (k, f) in found.iter().enumerate() {
            assert_eq!(f.map(|[t, ..]| t), first, "ray {i}: order {:?} against the first", orders[k]);
            // Each weight given by two orders agrees (the first corner's is not returned).
            for other in &found[..k] {
                if let (Some(a), Some(b)) = (f, other) {
                    for c in 1..4 {
                        if a[c] != u32::MAX && b[c] != u32::MAX {
                            assert_eq!(
                                a[c],
                                b[c],
                                "ray {i}: weight of corner {} of order {:?}",
                                c - 1,
                                orders[k]
                            );
                        }
                    }
                }
            }
        }
        hits += usize::from(first.is_some());
    }
    assert!(hits > 10_000, "{hits} rays hit");
}
