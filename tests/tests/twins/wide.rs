//! The CPU backend's 4-wide BVH (`raycontact::internals::wide_bvh`, walked by
//! `cpu::closest_hit_wide`) against the binary tree it is collapsed from: the same hit, ray for
//! ray (triangle, t, u, v), on random rays through triangle soups and closed surfaces, with and
//! without an ignored vertex; and the same contacts as the binary walk on the 200 random
//! placements of the GPU tests, and with the wide trees off. The line walk
//! (`cpu::closest_hits_line`, a ray and its opposite in one walk) finds each ray's hit of the
//! wide walk, on the same rays, and the kernels' line walk of the binary tree
//! (`cpu::closest_hits_line_binary`) each ray's hit of the GPU walk. Its lanes hold the boxes of
//! the binary nodes they name ([`check_lanes`], also used by `wide_refit.rs`).

use glam::{Affine3A, Quat, Vec3};
use rand::Rng;
use raycontact::internals::cpu::{self, Narrow};
use raycontact::internals::layout::{BodyPair, LEAF_BIT, NONE, Node, Ray, RayHit, SELF_CLOTH};
use raycontact::internals::wide_bvh::WideTree;
use raycontact::internals::{FrameData, Packing};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, BvhUpdate, Pairs, Scene};
use raycontact_tests::{random_unit, rng};

use crate::reference::Packed;

/// Random rays towards and through the unit box, a fifth of them bounded.
pub(crate) fn random_rays(r: &mut rand_pcg::Pcg64, n: usize) -> Vec<Ray> {
    (0..n)
        .map(|i| {
            let o = if i % 2 == 0 {
                random_unit(r) * 3.0
            } else {
                Vec3::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0), r.random_range(-1.0..1.0))
            };
            // Some rays along an axis: their other axes are parallel slabs.
            let d = match i % 7 {
                0 => Vec3::X,
                1 => -Vec3::Z,
                _ => random_unit(r),
            };
            let mut ray = Ray::new(o, d * r.random_range(0.2..5.0f32));
            if i % 5 == 0 {
                ray.tmin = r.random_range(0.0..0.5);
                ray.tmax = r.random_range(0.5..2.0);
            }
            ray
        })
        .collect()
}

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

/// The same hit: triangle, t, u and v, bit for bit.
pub(crate) fn same(a: &RayHit, b: &RayHit) -> bool {
    (a.triangle, a.t.to_bits(), a.u.to_bits(), a.v.to_bits())
        == (b.triangle, b.t.to_bits(), b.u.to_bits(), b.v.to_bits())
}

/// Every ray of `rays` (with its ignored vertex) walked three ways through body `b` of `frame`:
/// the wide tree, the binary ordered walk and the GPU's walk (`cpu::closest_hit`), and a fourth
/// when the wide tree was collapsed from a binned-SAH tree: the GPU's walk of that tree with
/// this frame's boxes ([`fitted_sah`]); and the
/// line walk of the ray with its opposite, whose hits are the wide walk's of each. Returns the
/// hits.
pub(crate) fn compare_walks(
    what: &str,
    p: &Packing,
    frame: &FrameData,
    pos: &[Vec3],
    b: usize,
    rays: &[(Ray, u32)],
) -> usize {
    let body = &p.bodies[b];
    let nodes = frame.body_nodes(p, b);
    let wide = frame.body_wide(b).expect("the CPU frame has wide trees");
    let sah = fitted_sah(frame, p, b);
    // The face the classification computes from the positions: the wide walks give it from
    // their records, bit for bit (none on a miss, or from a body too small for a wide tree).
    let face_of = |h: &RayHit| {
        (h.triangle != u32::MAX && !wide.nodes.is_empty()).then(|| {
            let g = 3 * (body.tri_offset + h.triangle) as usize;
            let [a, b, c] = [0, 1, 2].map(|k| pos[p.triangles[g + k] as usize]);
            (b - a).cross(c - a)
        })
    };
    let mut hits = 0;
    for (i, (ray, ignore)) in rays.iter().enumerate() {
        let w = cpu::closest_hit_wide(body, nodes, wide, pos, &p.triangles, ray, *ignore);
        let o = cpu::closest_hit_ordered(body, nodes, pos, &p.triangles, ray, *ignore);
        let g = cpu::closest_hit(body, nodes, pos, &p.triangles, ray, *ignore, &[]);
        assert!(
            same(&w, &o) && same(&w, &g),
            "{what}: ray {i} {ray:?}: wide {w:?}, ordered {o:?}, gpu walk {g:?}"
        );
        let back = Ray { dir: -ray.dir, ..*ray };
        let wb = cpu::closest_hit_wide(body, nodes, wide, pos, &p.triangles, &back, *ignore);
        let [l, lb] = cpu::closest_hits_line(body, nodes, wide, pos, &p.triangles, [ray, &back], *ignore);
        assert!(
            same(&l, &w) && same(&lb, &wb),
            "{what}: ray {i} {ray:?}: line walk {l:?} and {lb:?}, wide walks {w:?} and {wb:?}"
        );
        // The kernels' line walk (`shared/bvh_line.wgsl`'s twin, on the binary tree): each ray's
        // hit of its own walk; the boxes read counted once, in the first ray's hit (the second
        // counts only its stackless walk, after a full stack).
        let gb = cpu::closest_hit(body, nodes, pos, &p.triangles, &back, *ignore, &[]);
        let [bl, blb] = cpu::closest_hits_line_binary(body, nodes, pos, &p.triangles, ray, *ignore, &[]);
        assert!(
            same(&bl, &g) && same(&blb, &gb),
            "{what}: ray {i} {ray:?}: binary line walk {bl:?} and {blb:?}, gpu walks {g:?} and {gb:?}"
        );
        assert!(blb.fallback == 1 || blb.nodes_visited == 0, "{what}: ray {i}: {blb:?}");
        // The counting walks: the same hits, counters included, and one fetch per wide node
        // visited, each of two to four lanes.
        let counted =
            cpu::closest_hit_wide_counted::<true>(body, nodes, wide, pos, &p.triangles, ray, *ignore);
        let (wf, fetched) = (counted.hit, counted.fetched);
        assert_eq!(wf, w, "{what}: ray {i}: the counting wide walk");
        assert_eq!(counted.face, face_of(&w), "{what}: ray {i}: the hit's face from its record");
        let lanes = w.nodes_visited - 1;
        assert!(
            2 * fetched <= lanes && lanes <= 4 * fetched,
            "{what}: ray {i}: {fetched} wide nodes fetched for {lanes} lanes"
        );
        let line = cpu::closest_hits_line_counted::<true>(
            body,
            nodes,
            wide,
            pos,
            &p.triangles,
            [ray, &back],
            *ignore,
        );
        let (lf, line_fetched) = (line.map(|h| h.hit), line[0].fetched);
        assert_eq!(lf, [l, lb], "{what}: ray {i}: the counting line walk");
        assert_eq!(line[1].fetched, 0, "{what}: ray {i}: the line walk's fetches are counted once");
        for (h, hit) in line.iter().zip([l, lb]) {
            assert_eq!(h.face, face_of(&hit), "{what}: ray {i}: the line walk's face from its record");
        }
        let line_lanes = l.nodes_visited + lb.nodes_visited - 2;
        assert!(2 * line_fetched <= line_lanes && line_lanes <= 4 * line_fetched, "{what}: ray {i}");
        if let Some(sah) = &sah {
            let s = cpu::closest_hit(body, sah, pos, &p.triangles, ray, *ignore, &[]);
            assert!(same(&w, &s), "{what}: ray {i} {ray:?}: wide {w:?}, the SAH tree's walk {s:?}");
        }
        hits += usize::from(w.is_hit());
    }
    hits
}

/// Body `b`'s binned-SAH tree (its wide tree's, `None` when it has none) with this frame's
/// boxes, as the refit of its wide tree must see it: each leaf the box of the LBVH's leaf of its
/// triangle, each internal node the union of its children's (`+ 0.0`, as the LBVH's refit).
fn fitted_sah(frame: &FrameData, p: &Packing, b: usize) -> Option<Vec<Node>> {
    let mut sah = frame.body_wide(b).unwrap().sah.clone();
    if sah.is_empty() {
        return None;
    }
    let internal = sah.len() / 2;
    let of_triangle: std::collections::HashMap<u32, (Vec3, Vec3)> =
        frame.body_nodes(p, b)[internal..].iter().map(|l| (l.child & !LEAF_BIT, (l.min, l.max))).collect();
    // Children after parents: in reverse, the leaves first.
    for i in (0..sah.len()).rev() {
        let (min, max) = if i >= internal {
            of_triangle[&(sah[i].child & !LEAF_BIT)]
        } else {
            let l = sah[sah[i].child as usize];
            let r = sah[l.escape as usize];
            (l.min.min(r.min) + Vec3::ZERO, l.max.max(r.max) + Vec3::ZERO)
        };
        (sah[i].min, sah[i].max) = (min, max);
    }
    Some(sah)
}

/// Each lane of each wide node holds this frame's box of the binary node it names (of its SAH
/// tree when it has one, [`fitted_sah`], else of the LBVH), and the leaves hold every leaf
/// triangle of the LBVH once.
pub(crate) fn check_lanes(what: &str, frame: &FrameData, p: &Packing, b: usize) {
    let lbvh = frame.body_nodes(p, b);
    let tree: &WideTree = frame.body_wide(b).unwrap();
    let fitted = fitted_sah(frame, p, b);
    let nodes = fitted.as_deref().unwrap_or(lbvh);
    let mut leaves = Vec::new();
    for (n, src) in tree.nodes.iter().zip(&tree.source) {
        assert!((2..=4).contains(&n.count), "{what}: a wide node of {} children", n.count);
        for i in 0..n.count as usize {
            let bn = &nodes[src[i] as usize];
            for a in 0..3 {
                assert_eq!((n.lo[a][i], n.hi[a][i]), (bn.min[a], bn.max[a]), "{what}: lane box");
            }
            if n.child[i] & LEAF_BIT != 0 {
                let r = n.child[i] & !LEAF_BIT;
                let rec = &tree.tris[r as usize];
                assert_eq!(LEAF_BIT | rec.triangle, bn.child, "{what}: leaf triangle");
                // Collapsed from a binned-SAH tree (refitted from the last node backwards):
                // the records in the order of the nodes and lanes that hold them.
                if fitted.is_some() {
                    assert_eq!(r as usize, leaves.len(), "{what}: records in node order");
                }
                leaves.push(rec.triangle);
            }
        }
        assert!(n.child[n.count as usize..].iter().all(|&c| c == NONE));
    }
    leaves.sort_unstable();
    let mut want: Vec<u32> = lbvh.iter().filter_map(|n| n.triangle()).collect();
    want.sort_unstable();
    assert_eq!(leaves, want, "{what}: the wide leaves are the binary leaves");
}

#[test]
fn the_wide_walk_finds_the_binary_walks_hit_ray_for_ray() {
    let mut r = rng(4242);
    let decoy = meshes::icosphere(0.3, 1);
    let mut hits = 0;
    for round in 0..8 {
        let mesh = match round % 4 {
            0 => soup(&mut r, [10, 3000][round / 4]),
            1 => meshes::torus(0.8, 0.3, 60, 30),
            2 => raycontact_tests::bunny().transformed(Affine3A::from_scale(Vec3::splat(8.0))),
            _ => {
                let mut m = meshes::icosphere(1.0, 4);
                m.positions.iter_mut().for_each(|p| *p *= r.random_range(0.7..1.2));
                m
            }
        };
        let p = Packed::new(&[(&decoy, BodyKind::Volumetric), (&mesh, BodyKind::Volumetric)]);
        check_lanes(&format!("round {round}"), &p.frame, &p.packing, 1);
        let mut rays: Vec<(Ray, u32)> =
            random_rays(&mut r, 3000).into_iter().map(|ray| (ray, NONE)).collect();
        // From every vertex inwards and outwards, its own triangles ignored (the narrow phase's
        // rays).
        let off = p.packing.bodies[1].vertex_offset;
        for (v, x) in mesh.positions.iter().enumerate().step_by(3) {
            let d = random_unit(&mut r);
            rays.push((Ray::new(*x, d), off + v as u32));
            rays.push((Ray::new(*x, -d), off + v as u32));
        }
        hits += compare_walks(&format!("round {round}"), &p.packing, &p.frame, &p.positions, 1, &rays);
        // The CPU backend's batch query walks the wide trees too.
        let batch: Vec<Ray> = rays.iter().map(|(ray, _)| *ray).collect();
        let q = cpu::raycast_ordered(&p.packing, &p.frame, &p.positions, 1, &batch);
        let scene = cpu::QueryScene { packing: &p.packing, frame: &p.frame, positions: &p.positions };
        let g = cpu::raycast(&scene, &[1], &batch);
        assert!(q.iter().zip(&g).all(|(a, b)| same(a, b)), "round {round}: raycast_ordered");
    }
    assert!(hits > 5000, "{hits} hits");
}

#[test]
fn wide_and_binary_walks_find_the_same_contacts_on_200_random_placements() {
    // The shapes and placements of the GPU tests' `random_placements_match_the_cpu_reference`.
    let shapes = [
        raycontact_tests::bunny().transformed(Affine3A::from_scale(Vec3::splat(0.2))),
        meshes::torus(1.0, 0.35, 40, 20),
        meshes::cuboid(Vec3::new(0.8, 0.6, 0.5), 4),
        meshes::icosphere(0.9, 3),
        meshes::cylinder(0.6, 0.8, 32),
    ];
    let mut r = rng(2008);
    let mut total = 0;
    for placement in 0..200 {
        let pose = |r: &mut rand_pcg::Pcg64| {
            Affine3A::from_scale_rotation_translation(
                Vec3::splat(r.random_range(0.7..1.3)),
                Quat::from_axis_angle(random_unit(r), r.random_range(0.0..std::f32::consts::TAU)),
                random_unit(r) * r.random_range(0.0..0.9),
            )
        };
        let m1 = shapes[r.random_range(0..shapes.len())].transformed(pose(&mut r));
        let m2 = shapes[r.random_range(0..shapes.len())].transformed(pose(&mut r));
        let mut scene = Scene::new_cpu(Some(2)).unwrap();
        scene.add_body(&m1.positions, &m1.triangles, BodyKind::Volumetric).unwrap();
        scene.add_body(&m2.positions, &m2.triangles, BodyKind::Volumetric).unwrap();
        let found = scene.detect(Pairs::Overlapping).unwrap().contacts;
        let frame = scene.frame_data().unwrap();
        let packing = scene.packing().clone();
        let positions: Vec<Vec3> = m1.positions.iter().chain(&m2.positions).copied().collect();
        let pairs: Vec<BodyPair> = cpu::broad_phase(&packing.bodies, &frame.body_state, SELF_CLOTH, 0.0);
        let mut binary = frame.clone();
        binary.wide = Default::default();
        let run = |f: &FrameData| {
            let cx = Narrow {
                packing: &packing,
                frame: f,
                positions: &positions,
                previous: &positions,
                remember_exit: false,
                inversions: true,
            };
            let mut c = cpu::narrow_phase(&cx, &pairs);
            c.sort_by_key(|c| (c.source_body, c.source_vertex, c.target_body, c.flags));
            c
        };
        let (w, b) = (run(&frame), run(&binary));
        assert_eq!(w, b, "placement {placement}: contacts through the wide and the binary trees");
        // And the scene (its rays in Morton order) found the same ones.
        assert_eq!(found.len(), w.len(), "placement {placement}: the scene's detection");
        // Every ray of every source vertex, hit for hit, both directions.
        for (k, p) in pairs.iter().enumerate() {
            for (a, t) in [(p.a, p.b), (p.b, p.a)] {
                let src = &packing.bodies[a as usize];
                let rays: Vec<(Ray, u32)> = (0..src.vertex_count)
                    .map(|v| {
                        let g = src.vertex_offset + v;
                        (Ray::new(positions[g as usize], -frame.normals[g as usize]), g)
                    })
                    .collect();
                compare_walks(
                    &format!("placement {placement} pair {k}"),
                    &packing,
                    &frame,
                    &positions,
                    t as usize,
                    &rays,
                );
            }
        }
        total += w.len();
    }
    assert!(total > 1000, "{total} contacts");
}

#[test]
fn without_wide_trees_the_backend_walks_the_binary_trees_and_finds_the_same_contacts() {
    // Scene::set_wide_bvh(false): no wide tree is built, the rays walk the binary trees (the
    // kernels' algorithm), the contacts are the wide walk's; turned back on (under Refit, which
    // never rebuilds), the next frame builds the trees again.
    let a = meshes::torus(0.8, 0.3, 60, 30);
    let b = meshes::icosphere(0.5, 3).transformed(Affine3A::from_translation(Vec3::new(0.7, 0.1, 0.0)));
    for policy in [BvhUpdate::Rebuild, BvhUpdate::Refit] {
        let mut wide = Scene::new_cpu(Some(2)).unwrap();
        let mut binary = Scene::new_cpu(Some(2)).unwrap();
        binary.set_wide_bvh(false);
        let mut ids = Vec::new();
        for s in [&mut wide, &mut binary] {
            s.set_bvh_update(policy).unwrap();
            ids.push(s.add_body(&a.positions, &a.triangles, BodyKind::Volumetric).unwrap());
            s.add_body(&b.positions, &b.triangles, BodyKind::Volumetric).unwrap();
        }
        for frame in 0..4 {
            let k = 0.05 * frame as f32;
            let moved: Vec<Vec3> = a.positions.iter().map(|p| Quat::from_rotation_z(k) * *p).collect();
            wide.set_positions(ids[0], &moved).unwrap();
            binary.set_positions(ids[1], &moved).unwrap();
            if frame == 3 {
                binary.set_wide_bvh(true);
            }
            let w = wide.detect(Pairs::Overlapping).unwrap();
            let n = binary.detect(Pairs::Overlapping).unwrap();
            assert!(!w.contacts.is_empty(), "{policy:?} frame {frame}: the bodies touch");
            assert_eq!(w.contacts, n.contacts, "{policy:?} frame {frame}: the same contacts");
            let f = binary.frame_data().unwrap();
            let built = (0..2).all(|b| f.body_wide(b).is_some());
            assert_eq!(built, frame == 3, "{policy:?} frame {frame}: wide trees built only when on");
        }
    }
}
