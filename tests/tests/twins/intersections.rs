//! The intersection stages' CPU twins (through the CPU backend) against references written
//! independently of them: a brute-force f64 segment–triangle test over every edge and triangle,
//! a breadth-first search of the vertex graph without the crossed edges, f64 area sums, point-in
//! -polyhedron tests, and analytic depths.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use glam::{DVec3, Vec3};
use raycontact::meshes::TriMesh;
use raycontact::{BodyId, BodyKind, ContactFlags, Contacts, IntersectionMode, Pairs, Scene};
use raycontact_tests::intersect;

type Bodies = Vec<(TriMesh, BodyKind)>;

fn detect(bodies: &Bodies) -> (Contacts, Vec<BodyId>) {
    let mut s = Scene::new_cpu(None).unwrap();
    s.set_intersections(IntersectionMode::Full);
    let ids: Vec<BodyId> =
        bodies.iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
    (s.detect(Pairs::Overlapping).unwrap(), ids)
}

fn edges(m: &TriMesh) -> BTreeSet<[u32; 2]> {
    m.triangles
        .iter()
        .flat_map(|t| (0..3).map(move |i| [t[i].min(t[(i + 1) % 3]), t[i].max(t[(i + 1) % 3])]))
        .collect()
}

/// A crossing's identity: (edge body, edge, triangle body, triangle).
type Key = (usize, [u32; 2], usize, u32);

/// The f64 segment–triangle test: `Some(true)` for a crossing clear of every edge, vertex and
/// end, `Some(false)` for a clear miss, `None` within `eps` of a degenerate case.
fn crosses(p: DVec3, q: DVec3, a: DVec3, b: DVec3, c: DVec3, eps: f64) -> Option<bool> {
    let n = (b - a).cross(c - a);
    let (sp, sq) = ((p - a).dot(n), (q - a).dot(n));
    let scale = n.length() * (q - p).length();
    if sp.abs() < eps * scale || sq.abs() < eps * scale {
        return None;
    }
    if sp * sq > 0.0 {
        return Some(false);
    }
    let x = p + (q - p) * (sp / (sp - sq));
    let area = n.length_squared();
    let w = [(b - x).cross(c - x).dot(n), (c - x).cross(a - x).dot(n), (a - x).cross(b - x).dot(n)]
        .map(|w| w / area);
    if w.iter().any(|w| w.abs() < eps) {
        return None;
    }
    Some(w.iter().all(|w| *w > 0.0))
}

/// Every crossing of every pair of distinct bodies (and of each cloth with itself, triangles
/// around the edge skipped) by brute force: (clear crossings, near-degenerate candidates).
fn brute_force(bodies: &Bodies) -> (BTreeSet<Key>, BTreeSet<Key>) {
    let (mut clear, mut unsure) = (BTreeSet::new(), BTreeSet::new());
    for (i, (a, ka)) in bodies.iter().enumerate() {
        for (j, (b, _)) in bodies.iter().enumerate() {
            if i == j && *ka == BodyKind::Volumetric {
                continue;
            }
            for e in edges(a) {
                let (p, q) = (a.positions[e[0] as usize].as_dvec3(), a.positions[e[1] as usize].as_dvec3());
                for (t, tri) in b.triangles.iter().enumerate() {
                    if i == j && tri.iter().any(|v| e.contains(v)) {
                        continue;
                    }
                    let [x, y, z] = tri.map(|v| b.positions[v as usize].as_dvec3());
                    match crosses(p, q, x, y, z, 1e-6) {
                        Some(true) => clear.insert((i, e, j, t as u32)),
                        None => unsure.insert((i, e, j, t as u32)),
                        Some(false) => false,
                    };
                }
            }
        }
    }
    (clear, unsure)
}

fn scenes() -> Vec<(&'static str, Bodies)> {
    vec![
        ("tilted sheets", intersect::tilted_sheets()),
        ("sphere through a sheet", intersect::sphere_through_sheet()),
        ("torus through a slab", intersect::torus_through_slab()),
        ("boxes edge to edge", intersect::boxes_edge_to_edge()),
        ("two spheres", intersect::two_spheres()),
    ]
}

#[test]
fn crossings_are_those_of_a_brute_force_segment_triangle_test() {
    for (what, bodies) in scenes() {
        let (found, ids) = detect(&bodies);
        let slot = |id: BodyId| ids.iter().position(|&x| x == id).unwrap();
        let twin: BTreeSet<Key> = found
            .intersections
            .crossings
            .iter()
            .map(|c| (slot(c.edge_body), c.edge_vertices, slot(c.triangle_body), c.triangle))
            .collect();
        assert_eq!(
            twin.len(),
            found.intersections.crossings.len(),
            "{what}: one crossing per edge and triangle"
        );
        let (clear, unsure) = brute_force(&bodies);
        assert!(!clear.is_empty(), "{what}");
        let missed: Vec<_> = clear.difference(&twin).collect();
        let extra: Vec<_> = twin.difference(&clear).filter(|k| !unsure.contains(k)).collect();
        assert!(missed.is_empty() && extra.is_empty(), "{what}: missed {missed:?}, extra {extra:?}");
        for c in &found.intersections.crossings {
            let m = &bodies[slot(c.edge_body)].0;
            let (p, q) = (m.positions[c.edge_vertices[0] as usize], m.positions[c.edge_vertices[1] as usize]);
            assert!(c.point.distance(p + c.t * (q - p)) < 1e-6, "{what}: {c:?}");
        }
    }
}

#[test]
fn regions_are_the_components_of_the_vertex_graph_without_the_crossed_edges() {
    for (what, bodies) in scenes() {
        let (found, ids) = detect(&bodies);
        for r in &found.intersections.regions {
            let k = ids.iter().position(|&x| x == r.body).unwrap();
            let m = &bodies[k].0;
            let crossed: BTreeSet<[u32; 2]> = found
                .intersections
                .crossings
                .iter()
                .filter(|c| c.edge_body == r.body)
                .map(|c| c.edge_vertices)
                .collect();
            let mut next: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
            for e in edges(m).difference(&crossed) {
                next.entry(e[0]).or_default().push(e[1]);
                next.entry(e[1]).or_default().push(e[0]);
            }
            // Breadth-first, each component labelled by its lowest vertex's order.
            let mut label = vec![u32::MAX; m.positions.len()];
            let mut count = 0;
            for v in 0..m.positions.len() as u32 {
                if label[v as usize] != u32::MAX {
                    continue;
                }
                let mut queue = VecDeque::from([v]);
                label[v as usize] = count;
                while let Some(x) = queue.pop_front() {
                    for &y in next.get(&x).map_or(&[][..], |n| &n[..]) {
                        if label[y as usize] == u32::MAX {
                            label[y as usize] = count;
                            queue.push_back(y);
                        }
                    }
                }
                count += 1;
            }
            assert_eq!(r.vertex_region, label, "{what}: regions of body {k}");
            // Areas: a third of every triangle around each vertex, summed in f64.
            let mut area = vec![0f64; count as usize];
            for t in &m.triangles {
                let [a, b, c] = t.map(|v| m.positions[v as usize].as_dvec3());
                for &v in t {
                    area[label[v as usize] as usize] += (b - a).cross(c - a).length() / 6.0;
                }
            }
            for (g, want) in r.regions.iter().zip(area) {
                assert!((g.area as f64 - want).abs() < 1e-4 * want.max(1e-3), "{what}: {g:?} vs {want}");
            }
        }
    }
}

/// Whether `p` is inside the closed mesh `m` (the parity of its crossings along a slanted ray,
/// in f64).
fn inside(m: &TriMesh, p: DVec3) -> bool {
    let q = p + DVec3::new(0.31, 0.47, 0.83) * 100.0;
    m.triangles
        .iter()
        .filter(|t| {
            let [a, b, c] = t.map(|v| m.positions[v as usize].as_dvec3());
            crosses(p, q, a, b, c, 1e-12) == Some(true)
        })
        .count()
        % 2
        == 1
}

#[test]
fn wrong_side_of_a_volumetric_body_is_inside_it() {
    for (what, bodies) in
        [("two spheres", intersect::two_spheres()), ("torus through a slab", intersect::torus_through_slab())]
    {
        let (found, ids) = detect(&bodies);
        for (k, &id) in ids.iter().enumerate() {
            let (m, other) = (&bodies[k].0, &bodies[1 - k].0);
            let r = found.intersections.regions_of(id).unwrap();
            for (v, &g) in r.vertex_region.iter().enumerate() {
                let wrong = r.regions[g as usize].wrong_side_of == Some(ids[1 - k]);
                assert_eq!(wrong, inside(other, m.positions[v].as_dvec3()), "{what}: body {k} vertex {v}");
            }
        }
    }
}

#[test]
fn edge_contacts_of_boxes_edge_to_edge_push_by_the_edges_dip() {
    let (found, _) = detect(&intersect::boxes_edge_to_edge());
    let edge: Vec<_> = found.contacts.iter().filter(|c| c.flags.contains(ContactFlags::EDGE)).collect();
    assert_eq!(edge.len(), 4);
    for c in edge {
        // Each edge dips 0.05 into a right-angled ridge: its inside part is 0.1 long, at 45° to
        // the crossed face.
        assert!((c.depth - 0.1 * 0.5f32.sqrt()).abs() < 1e-4, "{c:?}");
        assert!((c.normal.length() - 1.0).abs() < 1e-5, "{c:?}");
    }
}

#[test]
fn untangling_contacts_push_through_the_other_sheet_by_its_distance() {
    let bodies = intersect::tilted_sheets();
    let (found, ids) = detect(&bodies);
    let cut = found.intersections.regions_of(ids[1]).unwrap();
    let wrong: BTreeSet<u32> = cut.wrong_side_vertices().collect();
    let untangle: Vec<_> =
        found.contacts.iter().filter(|c| c.flags.contains(ContactFlags::UNTANGLE)).collect();
    assert!(!untangle.is_empty());
    for c in untangle {
        assert_eq!((c.source_body, c.target_body), (ids[1], ids[0]));
        assert!(wrong.contains(&c.source_vertex));
        // A is the plane z = 0: through it by the vertex's distance, plus both half-thicknesses.
        let z = bodies[1].0.positions[c.source_vertex as usize].z;
        assert!((c.depth - (z.abs() + 0.01)).abs() < 1e-5, "{c:?}");
        assert!((c.normal - Vec3::new(0.0, 0.0, -z.signum())).length() < 1e-5, "{c:?}");
    }
}

#[test]
fn loops_join_crossings_of_the_same_triangle_pair_and_measure_their_polyline() {
    for (what, bodies) in scenes() {
        let (found, ids) = detect(&bodies);
        let x = &found.intersections;
        let slot = |id: BodyId| ids.iter().position(|&b| b == id).unwrap();
        let mut seen = BTreeSet::new();
        for l in &x.loops {
            let points: Vec<Vec3> = l.crossings.iter().map(|&i| x.crossings[i as usize].point).collect();
            let n = points.len();
            let segments = if l.closed { n } else { n - 1 };
            assert_eq!(l.triangles.len(), segments);
            let length: f32 = (0..segments).map(|i| points[i].distance(points[(i + 1) % n])).sum();
            assert!((l.length - length).abs() < 1e-5 * length.max(1.0), "{what}");
            // Consecutive crossings both lie on the segment's two triangles.
            for (i, tris) in l.triangles.iter().enumerate() {
                for &c in [l.crossings[i], l.crossings[(i + 1) % n]].iter() {
                    let c = &x.crossings[c as usize];
                    let own = &bodies[slot(c.edge_body)].0.triangles;
                    let k = if c.edge_body == l.bodies[0] { 0 } else { 1 };
                    assert_eq!(c.triangle, tris[1 - k], "{what}: crossed triangle");
                    let t = own[tris[k] as usize];
                    assert!(
                        c.edge_vertices.iter().all(|v| t.contains(v)),
                        "{what}: edge of the segment's triangle"
                    );
                }
            }
            seen.extend(l.crossings.iter().copied());
        }
        assert_eq!(seen.len(), x.crossings.len(), "{what}: every crossing on one loop");
    }
}
