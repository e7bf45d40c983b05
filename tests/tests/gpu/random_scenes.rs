//! Random scenes through the public API, every setting drawn at random: two to four bodies
//! (spheres, tori, boxes, cylinders, sheets) turned and placed at random in a unit cube, so that
//! they overlap, at scales 1e-3 to 1e3; the tree update policy, iterative detection, a static
//! body, self-collision, the prediction distance and the intersection stages; bodies moved at
//! random between frames. The GPU's ray contacts equal the CPU backend's frame by frame (as
//! `narrow::assert_same` compares them), and so do its intersection counts and its edge and
//! untangling contacts; `Refit` and `Auto` find the contacts of a rebuild at the same positions,
//! on each backend. Run with 300 seeds each while it was written (32 s): 1,200 frames with the
//! same ray-contact keys on both backends (none needing `assert_same`'s tolerance), and `Refit`
//! and `Auto` equal to a rebuild in all 300 scenes on both. The CPU backend's contacts of a scene
//! scaled by 1e-8 to 1e8 are those of the scene itself.

use glam::{Affine3A, Quat, Vec3};
use rand::Rng;
use raycontact::meshes::{self, TriMesh};
use raycontact::{
    BodyId, BodyKind, BvhUpdate, Contact, ContactFlags, Contacts, IntersectionMode, Iterative, Pairs, Scene,
    SelfCollision,
};
use raycontact_tests::{ctx, random_unit, rng};

use crate::narrow::assert_same;

/// A body's positions, triangles and kind.
type Body = (Vec<Vec3>, Vec<[u32; 3]>, BodyKind);

/// An intersection stage's contact: source body, vertex, target body, triangle, flags.
type StageContact = (u32, u32, u32, u32, u32);

/// A body of a random shape and kind, turned and placed at random (positions times `scale`).
fn random_body(r: &mut rand_pcg::Pcg64, scale: f32) -> Body {
    let (m, volumetric): (TriMesh, bool) = match r.random_range(0..6) {
        0 => (meshes::icosphere(0.5, r.random_range(1..4)), true),
        1 => (meshes::torus(0.5, 0.2, r.random_range(8..20), r.random_range(6..14)), true),
        2 => {
            let half =
                Vec3::new(r.random_range(0.3..1.3), r.random_range(0.3..1.3), r.random_range(0.3..1.3));
            (meshes::cuboid(half, r.random_range(1..4)), true)
        }
        3 => (meshes::cylinder(r.random_range(0.3..0.6), 0.5, r.random_range(6..26)), true),
        4 => (meshes::uv_sphere(0.5, r.random_range(6..16), r.random_range(4..12)), true),
        _ => {
            let (x, y) = (r.random_range(1.0..2.0), r.random_range(1.0..2.0));
            (meshes::grid_sheet(x, y, r.random_range(2..14), r.random_range(2..14)), false)
        }
    };
    let turn = Quat::from_axis_angle(random_unit(r), r.random_range(0.0..std::f32::consts::TAU));
    let at = 0.8 * Vec3::new(r.random(), r.random(), r.random());
    let m = m.transformed(Affine3A::from_scale_rotation_translation(Vec3::splat(scale), turn, at * scale));
    let kind = if volumetric {
        BodyKind::Volumetric
    } else {
        BodyKind::Cloth { half_thickness: r.random_range(0.0..0.01) * scale }
    };
    (m.positions, m.triangles, kind)
}

/// The settings a random scene is run with.
#[derive(Clone, Copy, Debug)]
struct Settings {
    scale: f32,
    prediction: f32,
    self_collision: SelfCollision,
    policy: BvhUpdate,
    iterative: bool,
    first_static: bool,
    intersections: IntersectionMode,
}

impl Settings {
    fn random(r: &mut rand_pcg::Pcg64) -> Self {
        let scale = [1.0, 1e-3, 1e3][r.random_range(0..3)];
        Settings {
            scale,
            prediction: r.random_range(0.0..0.05) * scale,
            self_collision: [SelfCollision::None, SelfCollision::Cloth, SelfCollision::All]
                [r.random_range(0..3)],
            policy: [BvhUpdate::Rebuild, BvhUpdate::Refit, BvhUpdate::Auto { max_degradation: 1.5 }]
                [r.random_range(0..3)],
            iterative: r.random_bool(0.5),
            first_static: r.random_bool(0.3),
            intersections: [IntersectionMode::Off, IntersectionMode::Crossings, IntersectionMode::Full]
                [r.random_range(0..3)],
        }
    }

    fn apply(&self, scene: &mut Scene, first: BodyId) {
        scene.set_prediction_distance(self.prediction).unwrap();
        scene.set_self_collision(self.self_collision);
        scene.set_bvh_update(self.policy).unwrap();
        if self.iterative {
            scene.set_iterative(Some(Iterative::new(0.1 * self.scale))).unwrap();
        }
        scene.set_intersections(self.intersections);
        if self.first_static {
            scene.set_static(first, true).unwrap();
        }
    }
}

/// Scene `seed`'s bodies (the same in every scene made of it).
fn bodies(seed: u64) -> (rand_pcg::Pcg64, Settings, Vec<Body>) {
    let mut r = rng(seed);
    let settings = Settings::random(&mut r);
    let count = r.random_range(2..5);
    let bodies = (0..count).map(|_| random_body(&mut r, settings.scale)).collect();
    (r, settings, bodies)
}

/// Runs `frames` detections of scene `seed` in each of `scenes` (made by `make`, given the
/// settings, which it may change), the bodies moved at random between frames, and hands each
/// frame's results to `check`.
fn run(
    seed: u64,
    frames: usize,
    make: &[&dyn Fn(&mut Settings) -> Scene],
    mut check: impl FnMut(&str, &[Contacts]),
) {
    let (mut r, settings, bodies) = bodies(seed);
    let mut scenes: Vec<(Scene, Vec<BodyId>)> = make
        .iter()
        .map(|make| {
            let mut s = settings;
            let mut scene = make(&mut s);
            let ids: Vec<BodyId> =
                bodies.iter().map(|(p, t, kind)| scene.add_body(p, t, *kind).unwrap()).collect();
            s.apply(&mut scene, ids[0]);
            (scene, ids)
        })
        .collect();
    let mut positions: Vec<Vec<Vec3>> = bodies.iter().map(|b| b.0.clone()).collect();
    for frame in 0..frames {
        let found: Vec<Contacts> =
            scenes.iter_mut().map(|(s, _)| s.detect(Pairs::Overlapping).unwrap()).collect();
        check(&format!("seed {seed} frame {frame} ({settings:?})"), &found);
        for (b, p) in positions.iter_mut().enumerate() {
            if r.random_bool(0.5) {
                let step = Vec3::new(r.random(), r.random(), r.random()) - 0.5;
                let turn = Quat::from_axis_angle(random_unit(&mut r), 0.05);
                let centre = p.iter().copied().sum::<Vec3>() / p.len() as f32;
                for v in p.iter_mut() {
                    *v = centre + turn * (*v - centre) + step * 0.03 * settings.scale;
                }
                for (s, ids) in &mut scenes {
                    s.set_positions(ids[b], p).unwrap();
                }
            }
        }
    }
}

/// The ray contacts, and the intersection stages' (edge and untangling contacts, several to a
/// vertex and body) as sorted (source body, vertex, target body, triangle, flags).
fn split(contacts: &[Contact]) -> (Vec<Contact>, Vec<StageContact>) {
    let by_stages = ContactFlags::EDGE | ContactFlags::UNTANGLE;
    let (stages, rays): (Vec<Contact>, Vec<Contact>) =
        contacts.iter().partition(|c| c.flags.intersects(by_stages));
    let key = |c: &Contact| {
        (c.source_body.index(), c.source_vertex, c.target_body.index(), c.target_triangle, c.flags.bits())
    };
    let mut stages: Vec<_> = stages.iter().map(key).collect();
    stages.sort_unstable();
    (rays, stages)
}

#[test]
fn random_scenes_find_the_same_contacts_on_the_gpu_as_on_the_cpu() {
    let (mut compared, mut contacts) = (0, 0);
    for seed in 0..40 {
        let gpu: &dyn Fn(&mut Settings) -> Scene = &|_| Scene::new(ctx());
        let cpu: &dyn Fn(&mut Settings) -> Scene = &|_| Scene::new_cpu(Some(2)).unwrap();
        run(seed, 4, &[gpu, cpu], |what, found| {
            let (g, c) = (&found[0], &found[1]);
            let (g_rays, g_edges) = split(&g.contacts);
            let (c_rays, c_edges) = split(&c.contacts);
            assert_same(what, &g_rays, &c_rays);
            assert_eq!(g.intersections.counts, c.intersections.counts, "{what}: intersection counts");
            assert_eq!(g_edges, c_edges, "{what}: edge and untangling contacts");
            compared += 1;
            contacts += c.contacts.len();
        });
    }
    assert_eq!(compared, 160);
    assert!(contacts > 10_000, "{contacts} contacts: the scenes should overlap");
}

#[test]
fn random_scenes_under_refit_and_auto_find_a_rebuilds_contacts() {
    for seed in 100..130 {
        for gpu in [true, false] {
            let make = |policy: BvhUpdate| {
                move |s: &mut Settings| {
                    // Full passes only: an iterative pass walks from the last frame's hits.
                    (s.policy, s.iterative) = (policy, false);
                    if gpu { Scene::new(ctx()) } else { Scene::new_cpu(Some(2)).unwrap() }
                }
            };
            let (rebuild, refit) = (make(BvhUpdate::Rebuild), make(BvhUpdate::Refit));
            let auto = make(BvhUpdate::Auto { max_degradation: 1.2 });
            run(seed, 4, &[&rebuild, &refit, &auto], |what, found| {
                let what = format!("{what} on the {}", if gpu { "GPU" } else { "CPU" });
                assert_eq!(found[1].contacts, found[0].contacts, "{what}: Refit against a rebuild");
                assert_eq!(found[2].contacts, found[0].contacts, "{what}: Auto against a rebuild");
            });
        }
    }
}

#[test]
fn random_scenes_scaled_by_1e_minus_8_to_1e8_find_the_same_contacts() {
    // Every contact's source, target and triangle, and flags, of seed `seed`'s bodies brought to
    // scale 1, then scaled by `scale`.
    let keys = |seed: u64, scale: f32| {
        let (_, settings, bodies) = bodies(seed);
        let scale = scale / settings.scale;
        let mut scene = Scene::new_cpu(Some(2)).unwrap();
        for (p, t, kind) in &bodies {
            let p: Vec<Vec3> = p.iter().map(|p| *p * scale).collect();
            let kind = match *kind {
                BodyKind::Cloth { half_thickness } => {
                    BodyKind::Cloth { half_thickness: half_thickness * scale }
                }
                k => k,
            };
            scene.add_body(&p, t, kind).unwrap();
        }
        scene.set_prediction_distance(0.02 * scale * settings.scale).unwrap();
        let found = scene.detect(Pairs::Overlapping).unwrap().contacts;
        let mut keys: Vec<_> = found
            .iter()
            .map(|c| {
                (
                    c.source_body.index(),
                    c.source_vertex,
                    c.target_body.index(),
                    c.target_triangle,
                    c.flags.bits(),
                )
            })
            .collect();
        keys.sort_unstable();
        keys
    };
    let mut contacts = 0;
    for seed in 200..230 {
        let want = keys(seed, 1.0);
        contacts += want.len();
        for scale in [1e-8, 1e-4, 1e4, 1e8] {
            assert_eq!(keys(seed, scale), want, "seed {seed} scaled by {scale}");
        }
    }
    assert!(contacts > 1000, "{contacts} contacts: the scenes should overlap");
}
