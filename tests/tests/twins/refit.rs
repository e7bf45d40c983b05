//! The BVH update policy on the CPU backend (`BvhUpdate`): a refitted tree gives the contacts of
//! a rebuild at the same positions (the closest hit does not depend on the tree), its nodes are
//! the last rebuild's with boxes refitted to the new triangles, and `Auto` rebuilds exactly
//! when its documented criterion says: some body's SAH cost after the refit above
//! `max_degradation` times its cost right after the last rebuild, or a body whose degenerate
//! triangles are not those of its tree, checked here by refitting the last frame's tree
//! independently with the twins.

use glam::{Quat, Vec3};
use raycontact::internals::cpu;
use raycontact::internals::layout::{BodyState, LEAF_BIT, Node};
use raycontact::meshes::{self, TriMesh};
use raycontact::walk::Iterative;
use raycontact::{
    BodyKind, BvhAction, BvhUpdate, IntersectionMode, Pairs, Ray, RayHit, Scene, WalkOptions, sah_cost,
};

/// Two interlocked tori and a cloth sheet over them, deformed more and more: twisted, swollen
/// and rippled (the trees degrade frame after frame).
fn bodies() -> Vec<(TriMesh, BodyKind)> {
    let a = meshes::torus(1.0, 0.35, 48, 24);
    let b = a.transformed(glam::Affine3A::from_rotation_translation(
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        Vec3::new(1.0, 0.0, 0.0),
    ));
    let sheet = meshes::grid_sheet(3.0, 3.0, 40, 40)
        .transformed(glam::Affine3A::from_translation(Vec3::new(0.5, 0.0, 0.5)));
    vec![
        (a, BodyKind::Volumetric),
        (b, BodyKind::Volumetric),
        (sheet, BodyKind::Cloth { half_thickness: 0.01 }),
    ]
}

fn deformed(m: &TriMesh, body: usize, frame: usize) -> Vec<Vec3> {
    let k = frame as f32 * 0.08;
    m.positions
        .iter()
        .map(|p| {
            let twist = Quat::from_rotation_x(k * (p.x + body as f32));
            let swell = 1.0 + 0.3 * k * (2.0 * p.y + body as f32).sin();
            twist * (*p * swell) + Vec3::new(0.0, 0.0, 0.1 * k * (4.0 * p.x).sin())
        })
        .collect()
}

/// Sets the bodies `ids` of each of `scenes` to [`deformed`] `meshes` at `frame`.
fn set_deformed(
    scenes: [&mut Scene; 2],
    meshes: &[(TriMesh, BodyKind)],
    ids: &[raycontact::BodyId],
    frame: usize,
) {
    for s in scenes {
        for (b, (m, _)) in meshes.iter().enumerate() {
            s.set_positions(ids[b], &deformed(m, b, frame)).unwrap();
        }
    }
}

/// A CPU scene of [`bodies`] with `policy`, prediction distance 0.05.
fn scene(policy: BvhUpdate) -> (Scene, Vec<raycontact::BodyId>) {
    let mut s = Scene::new_cpu(Some(2)).unwrap();
    s.set_bvh_update(policy).unwrap();
    s.set_prediction_distance(0.05).unwrap();
    let ids = bodies().iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
    (s, ids)
}

#[test]
fn a_refitted_tree_finds_the_contacts_of_a_rebuild() {
    let meshes = bodies();
    let (mut rebuild, ids) = scene(BvhUpdate::Rebuild);
    let (mut refit, _) = scene(BvhUpdate::Refit);
    let mut degraded: f32 = 1.0;
    for frame in 0..12 {
        set_deformed([&mut rebuild, &mut refit], &meshes, &ids, frame);
        let a = rebuild.detect(Pairs::Overlapping).unwrap();
        let b = refit.detect(Pairs::Overlapping).unwrap();
        assert_eq!(a.stats.bvh.action, BvhAction::Rebuilt);
        let want = if frame == 0 { BvhAction::Rebuilt } else { BvhAction::Refitted };
        assert_eq!(b.stats.bvh.action, want, "frame {frame}");
        assert!(!b.stats.bvh.degenerate_changed);
        degraded = degraded.max(b.stats.bvh.degradation.unwrap());
        assert!(!a.contacts.is_empty());
        assert_eq!(a.contacts, b.contacts, "frame {frame}: contacts of the refitted trees");
        // The refitted nodes: the last rebuild's topology, every box the union of its children's
        // (leaves: their triangle's box).
        let f = refit.frame_data().unwrap();
        let p = refit.packing().clone();
        for body in 0..p.bodies.len() {
            let nodes = f.body_nodes(&p, body);
            let off = p.bodies[body].tri_offset as usize;
            for n in nodes {
                let (lo, hi) = if n.child & LEAF_BIT != 0 {
                    let t = &f.tri_boxes[off + (n.child & !LEAF_BIT) as usize];
                    (t.min, t.max)
                } else {
                    let (l, r) = (&nodes[n.child as usize], &nodes[nodes[n.child as usize].escape as usize]);
                    (l.min.min(r.min), l.max.max(r.max))
                };
                assert_eq!((n.min, n.max), (lo, hi), "frame {frame} body {body}: a refitted box");
            }
        }
        // Ray queries on the refitted trees.
        let rays: Vec<raycontact::Ray> = (0..200)
            .map(|i| raycontact::Ray::new(Vec3::new(-3.0, i as f32 * 0.02 - 2.0, 0.1), Vec3::X))
            .collect();
        for &id in &ids {
            let key = |h: &raycontact::RayHit| (h.triangle, h.t.to_bits(), h.u.to_bits(), h.v.to_bits());
            let (a, b) = (rebuild.cast_rays(id, &rays).unwrap(), refit.cast_rays(id, &rays).unwrap());
            assert!(a.iter().map(key).eq(b.iter().map(key)), "frame {frame}: ray queries");
        }
    }
    assert!(degraded > 1.02, "the deformation degrades the refitted trees ({degraded})");
}

#[test]
fn trees_a_refit_leaves_behind_answer_every_reader_as_a_rebuild_does() {
    // Under `Refit` the CPU backend leaves the LBVHs of the bodies whose wide trees refit on
    // their own behind, and fits them before anything else reads them: an iterative pass (its
    // walks' fallback), the intersection stages, the ray queries and walks, `frame_data`.
    let meshes = bodies();
    let make = |policy| {
        let (mut s, ids) = scene(policy);
        s.set_intersections(IntersectionMode::Full);
        let iterative = Iterative { full_pass_every: 3, ..Iterative::new(2.0) };
        s.set_iterative(Some(iterative)).unwrap();
        (s, ids)
    };
    let (mut rebuild, ids) = make(BvhUpdate::Rebuild);
    let (mut refit, _) = make(BvhUpdate::Refit);
    let rays: Vec<Ray> =
        (0..120).map(|i| Ray::new(Vec3::new(-3.0, i as f32 * 0.03 - 1.8, 0.05), Vec3::X)).collect();
    let (mut refitted, mut walked) = (0, 0);
    for frame in 0..8 {
        set_deformed([&mut rebuild, &mut refit], &meshes, &ids, frame);
        let a = rebuild.detect(Pairs::Overlapping).unwrap();
        let b = refit.detect(Pairs::Overlapping).unwrap();
        refitted += (b.stats.bvh.action == BvhAction::Refitted) as u32;
        walked += b.stats.iterative as u32;
        assert!(!a.contacts.is_empty());
        assert_eq!(a.contacts, b.contacts, "frame {frame}: contacts");
        assert_eq!(a.intersections, b.intersections, "frame {frame}: intersections");
        let what = format!("frame {frame}");
        let key = |h: &RayHit| (h.body, h.triangle, h.t.to_bits(), h.u.to_bits(), h.v.to_bits());
        let both = [ids[0], ids[2], ids[1]];
        let (x, y) =
            (rebuild.cast_rays(&both[..], &rays).unwrap(), refit.cast_rays(&both[..], &rays).unwrap());
        assert!(x.iter().map(key).eq(y.iter().map(key)), "{what}: closest hits");
        let (x, y) = (
            rebuild.cast_rays_anyhit(&both[..], &rays).unwrap(),
            refit.cast_rays_anyhit(&both[..], &rays).unwrap(),
        );
        assert!(x.iter().map(|h| h.is_hit()).eq(y.iter().map(|h| h.is_hit())), "{what}: any hits");
        let (x, y) = (
            rebuild.cast_rays_all(&both[..], &rays, 8).unwrap(),
            refit.cast_rays_all(&both[..], &rays, 8).unwrap(),
        );
        // The hits (the nodes visited are the trees').
        assert!((0..rays.len()).all(|i| x.ray(i) == y.ray(i)), "{what}: all hits");
        let first = rebuild.cast_rays(ids[0], &rays).unwrap();
        let starts: Vec<u32> = first.iter().map(|h| h.triangle).collect();
        let moved: Vec<Ray> =
            rays.iter().map(|r| Ray::new(r.origin + Vec3::new(0.0, 0.004, 0.0), r.dir)).collect();
        let options = WalkOptions::default();
        let (x, y) = (
            rebuild.walk(ids[0], &moved, &starts, &options).unwrap(),
            refit.walk(ids[0], &moved, &starts, &options).unwrap(),
        );
        assert_eq!(x, y, "{what}: walks");
    }
    assert!(refitted >= 6 && walked >= 3, "{refitted} refitted frames, {walked} iterative passes");
}

#[test]
fn a_policy_switch_after_trees_were_left_behind_measures_them_fitted() {
    // The CPU backend with its wide trees (which leaves trees behind under `Refit`) against the
    // twins end to end (wide trees off: every tree refitted), through `Refit` frames, then
    // `Auto` (which measures the binary trees: those left behind must be fitted first), then
    // back and forth: the same contacts every frame, and after each frame under another
    // policy the same decisions, measures and trees.
    let meshes = bodies();
    let auto = BvhUpdate::Auto { max_degradation: 1.01 };
    let schedule = [
        BvhUpdate::Refit,
        BvhUpdate::Refit,
        BvhUpdate::Refit,
        auto,
        auto,
        BvhUpdate::Refit,
        BvhUpdate::Refit,
        BvhUpdate::Rebuild,
        BvhUpdate::Refit,
        BvhUpdate::Refit,
        auto,
    ];
    let mut scenes = [true, false].map(|wide| {
        let (mut s, ids) = scene(BvhUpdate::Refit);
        s.set_wide_bvh(wide);
        (s, ids)
    });
    for (frame, &policy) in schedule.iter().enumerate() {
        let mut found = Vec::new();
        for (s, ids) in &mut scenes {
            s.set_bvh_update(policy).unwrap();
            for (b, (m, _)) in meshes.iter().enumerate() {
                // The tori are set where they were built, one coordinate a float further every
                // other frame (refitted, their cost is about the rebuild's; the very positions
                // they have would change nothing); the sheet, twisted from the start, twists on
                // (its tree degrades: `Auto` rebuilds in frame 3) but keeps still under `Auto`,
                // so its tree left behind must be fitted before it is measured (else it
                // measures as built).
                if b < 2 {
                    let mut p = deformed(m, b, 0);
                    if frame % 2 == 1 {
                        p[0].x = p[0].x.next_up();
                    }
                    s.set_positions(ids[b], &p).unwrap();
                } else if policy != auto {
                    s.set_positions(ids[b], &deformed(m, b, 3 * frame + 6)).unwrap();
                }
            }
            found.push(s.detect(Pairs::Overlapping).unwrap());
        }
        let what = format!("frame {frame}, {policy:?}");
        assert_eq!(found[0].contacts, found[1].contacts, "{what}: contacts");
        let (a, b) = (&found[0].stats.bvh, &found[1].stats.bvh);
        assert_eq!(a.action, b.action, "{what}: action");
        if frame == 3 {
            assert_eq!(a.action, BvhAction::Rebuilt, "{what}: the sheet's tree degraded");
        }
        if policy == BvhUpdate::Refit {
            // Nothing read between `Refit` frames: the trees stay behind until the next policy.
            continue;
        }
        assert_eq!(a.degradation, b.degradation, "{what}: the binary trees' measure");
        let [(wide, _), (twins, _)] = &mut scenes;
        let (fa, fb) = (wide.frame_data().unwrap(), twins.frame_data().unwrap());
        let p = wide.packing().clone();
        for body in 0..p.bodies.len() {
            assert_eq!(fa.body_nodes(&p, body), fb.body_nodes(&p, body), "{what}: body {body}'s tree");
        }
    }
}

/// Each body's SAH cost of its tree `trees[b]` refitted (bottom-up, every box the union of its
/// children's, a leaf its triangle's) to `positions`.
fn refitted_costs(scene: &Scene, trees: &[Vec<Node>], positions: &[Vec3]) -> Vec<f64> {
    let p = scene.packing();
    let mut boxes = vec![Default::default(); p.params.tri_count as usize];
    let mut state = vec![BodyState::default(); p.bodies.len()];
    cpu::triangle_bounds(p, positions, &mut boxes, &mut state, &[]);
    (0..p.bodies.len())
        .map(|b| {
            let mut nodes = trees[b].clone();
            let off = p.bodies[b].tri_offset as usize;
            // A Karras tree's children may have lower indices than their parent: passes until
            // nothing changes.
            loop {
                let mut changed = false;
                for i in (0..nodes.len()).rev() {
                    let (lo, hi) = if nodes[i].child & LEAF_BIT != 0 {
                        let t = &boxes[off + (nodes[i].child & !LEAF_BIT) as usize];
                        (t.min, t.max)
                    } else {
                        let l = nodes[i].child as usize;
                        let r = nodes[l].escape as usize;
                        (nodes[l].min.min(nodes[r].min), nodes[l].max.max(nodes[r].max))
                    };
                    if (nodes[i].min, nodes[i].max) != (lo, hi) {
                        (nodes[i].min, nodes[i].max) = (lo, hi);
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            sah_cost(&nodes)
        })
        .collect()
}

#[test]
fn auto_rebuilds_exactly_when_the_sah_cost_degrades_past_its_bound() {
    let meshes = bodies();
    let bound = 1.08;
    let (mut auto, ids) = scene(BvhUpdate::Auto { max_degradation: bound });
    let (mut rebuild, _) = scene(BvhUpdate::Rebuild);
    let (mut rebuilds, mut refits) = (0, 0);
    let mut at_rebuild: Vec<f64> = Vec::new();
    let mut last_nodes: Vec<Vec<Node>> = Vec::new();
    for frame in 0..24 {
        let positions: Vec<Vec<Vec3>> =
            meshes.iter().enumerate().map(|(b, (m, _))| deformed(m, b, frame)).collect();
        for (b, p) in positions.iter().enumerate() {
            auto.set_positions(ids[b], p).unwrap();
            rebuild.set_positions(ids[b], p).unwrap();
        }
        let packed: Vec<Vec3> = positions.concat();
        // What the criterion says, from last frame's trees refitted independently.
        let expect = if frame == 0 {
            None
        } else {
            let costs = refitted_costs(&auto, &last_nodes, &packed);
            let ratio = costs.iter().zip(&at_rebuild).map(|(n, t)| n / t).fold(f64::MIN, f64::max);
            Some((ratio, ratio > bound as f64))
        };
        let found = auto.detect(Pairs::Overlapping).unwrap();
        let want = rebuild.detect(Pairs::Overlapping).unwrap();
        assert_eq!(found.contacts, want.contacts, "frame {frame}: Auto finds a rebuild's contacts");
        let bvh = found.stats.bvh;
        match expect {
            None => assert_eq!(bvh.action, BvhAction::Rebuilt),
            Some((ratio, rebuilds_now)) => {
                let d = bvh.degradation.unwrap() as f64;
                assert!((d - ratio).abs() <= 1e-5 * ratio, "frame {frame}: degradation {d} vs {ratio}");
                let action = if rebuilds_now { BvhAction::Rebuilt } else { BvhAction::Refitted };
                assert_eq!(bvh.action, action, "frame {frame}: degradation {ratio} against {bound}");
            }
        }
        let f = auto.frame_data().unwrap();
        let p = auto.packing().clone();
        last_nodes = (0..p.bodies.len()).map(|b| f.body_nodes(&p, b).to_vec()).collect();
        if bvh.action == BvhAction::Rebuilt {
            rebuilds += 1;
            at_rebuild = last_nodes.iter().map(|n| sah_cost(n)).collect();
        } else {
            refits += 1;
        }
    }
    assert!(rebuilds >= 3 && refits >= 3, "{rebuilds} rebuilds, {refits} refits");
}

#[test]
fn auto_rebuilds_when_a_triangle_stops_being_degenerate() {
    // A strip whose middle triangle starts flat (its apex on its base), then opens.
    let mut m = meshes::grid_sheet(1.0, 1.0, 4, 4);
    let apex = m.triangles[5][2] as usize;
    let base = [m.triangles[5][0] as usize, m.triangles[5][1] as usize];
    let flat = (m.positions[base[0]] + m.positions[base[1]]) * 0.5;
    let open = m.positions[apex];
    m.positions[apex] = flat;
    for policy in [BvhUpdate::auto(), BvhUpdate::Refit] {
        let mut s = Scene::new_cpu(Some(1)).unwrap();
        s.set_bvh_update(policy).unwrap();
        let id = s.add_body(&m.positions, &m.triangles, BodyKind::Cloth { half_thickness: 0.01 }).unwrap();
        let first = s.update().unwrap();
        assert_eq!(first.bvh.action, BvhAction::Rebuilt);
        assert!(s.body_state(id).unwrap().degenerate_count > 0);
        let mut moved = m.positions.clone();
        moved[apex] = open;
        s.set_positions(id, &moved).unwrap();
        let st = s.update().unwrap();
        assert!(st.bvh.degenerate_changed, "{policy:?}");
        let want = if policy == BvhUpdate::Refit { BvhAction::Refitted } else { BvhAction::Rebuilt };
        assert_eq!(st.bvh.action, want, "{policy:?}");
    }
}
