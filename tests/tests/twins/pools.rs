//! A CPU scene on the caller's rayon pool (`Scene::new_cpu_on_pool`): it reports the pool's
//! workers, scenes may share the pool and be used in turn, from outside the pool or from one of
//! its workers, and each finds what a scene on a pool of its own finds, contact for contact,
//! frame after frame.

use std::sync::Arc;

use glam::{Affine3A, Vec3};
use raycontact::meshes::{self, TriMesh};
use raycontact::rayon::ThreadPoolBuilder;
use raycontact::{BodyKind, Pairs, Scene};

/// A ball through a torus and a sheet cutting both, each body moved by frame `f`.
fn bodies(f: usize) -> Vec<(TriMesh, BodyKind)> {
    let s = 0.01 * f as f32;
    let ball = meshes::icosphere(0.5, 3).transformed(Affine3A::from_translation(Vec3::new(s, 0.0, 0.1)));
    let torus =
        meshes::torus(0.5, 0.15, 48, 16).transformed(Affine3A::from_translation(Vec3::new(0.0, s, 0.0)));
    let sheet = meshes::grid_sheet(1.6, 1.6, 32, 32).transformed(Affine3A::from_translation(Vec3::new(
        0.0,
        0.0,
        0.3 - s,
    )));
    vec![
        (ball, BodyKind::Volumetric),
        (torus, BodyKind::Volumetric),
        (sheet, BodyKind::Cloth { half_thickness: 0.01 }),
    ]
}

#[test]
fn scenes_on_a_shared_pool_find_what_a_scene_on_its_own_pool_finds() {
    let pool = Arc::new(ThreadPoolBuilder::new().num_threads(3).build().unwrap());
    let mut own = Scene::new_cpu(Some(3)).unwrap();
    let mut shared = [Scene::new_cpu_on_pool(pool.clone()), Scene::new_cpu_on_pool(pool.clone())];
    assert_eq!(shared[0].backend().to_string(), "CPU backend (rayon, 3 threads)");
    assert_eq!(shared[0].backend(), own.backend());
    let first = bodies(0);
    let add = |s: &mut Scene| -> Vec<_> {
        first.iter().map(|(m, kind)| s.add_body(&m.positions, &m.triangles, *kind).unwrap()).collect()
    };
    let ids = add(&mut own);
    assert_eq!(add(&mut shared[0]), ids);
    assert_eq!(add(&mut shared[1]), ids);
    for f in 0..4 {
        let moved = bodies(f);
        let detect = |s: &mut Scene| {
            for (id, (m, _)) in ids.iter().zip(&moved) {
                s.set_positions(*id, &m.positions).unwrap();
            }
            s.detect(Pairs::Overlapping).unwrap().contacts
        };
        let expected = detect(&mut own);
        assert!(expected.len() > 100, "frame {f}: {} contacts", expected.len());
        // The two scenes on one pool, in turn: the first called from outside the pool, the
        // second from inside one of its workers (an engine's job on its own pool), where the
        // scene's work runs in place.
        let [outside, inside] = &mut shared;
        assert_eq!(detect(outside), expected, "frame {f}, shared scene called from outside");
        assert_eq!(pool.install(|| detect(inside)), expected, "frame {f}, shared scene called from a worker");
    }
    // Nothing of the scenes holds the pool's workers between calls.
    drop(shared);
    assert_eq!(Arc::strong_count(&pool), 1);
}
