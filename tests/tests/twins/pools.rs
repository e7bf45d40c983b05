//! A CPU scene on the caller's rayon pool (`Scene::new_cpu_on_pool`): it reports the pool's
//! workers, scenes may share the pool and be used in turn, from outside the pool or from one of
//! its workers (also from a pool's worker 0 that is the calling thread itself), and each finds
//! what a scene on a pool of its own finds, contact for contact, frame after frame; and however
//! the pool's workers are kept awake (`WorkersAwake`), the contacts are the same.

use std::sync::Arc;

use glam::{Affine3A, Vec3};
use raycontact::meshes::{self, TriMesh};
use raycontact::rayon::ThreadPoolBuilder;
use raycontact::{BodyId, BodyKind, Contacts, Iterative, Pairs, Scene, WorkersAwake};

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

/// Adds frame 0's bodies to `s`: their ids.
fn add_bodies(s: &mut Scene) -> Vec<BodyId> {
    bodies(0).iter().map(|(m, kind)| s.add_body(&m.positions, &m.triangles, *kind).unwrap()).collect()
}

/// Frame `f`'s detection in `s`, whose bodies `ids` are [`add_bodies`]'.
fn detect_frame(s: &mut Scene, ids: &[BodyId], f: usize) -> Contacts {
    for (id, (m, _)) in ids.iter().zip(bodies(f)) {
        s.set_positions(*id, &m.positions).unwrap();
    }
    s.detect(Pairs::Overlapping).unwrap()
}

#[test]
fn scenes_on_a_shared_pool_find_what_a_scene_on_its_own_pool_finds() {
    let pool = Arc::new(ThreadPoolBuilder::new().num_threads(3).build().unwrap());
    let mut own = Scene::new_cpu(Some(3)).unwrap();
    let mut shared = [Scene::new_cpu_on_pool(pool.clone()), Scene::new_cpu_on_pool(pool.clone())];
    assert_eq!(shared[0].backend().to_string(), "CPU backend (rayon, 3 threads)");
    assert_eq!(shared[0].backend(), own.backend());
    let ids = add_bodies(&mut own);
    assert_eq!(add_bodies(&mut shared[0]), ids);
    assert_eq!(add_bodies(&mut shared[1]), ids);
    for f in 0..4 {
        let detect = |s: &mut Scene| detect_frame(s, &ids, f).contacts;
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

/// A scene on a pool that includes the thread calling it (rayon's `use_current_thread`: the
/// thread is the pool's worker 0, the README's way for an engine's step thread to call the CPU
/// backend without handing each call to another thread and waiting for it back) runs its calls
/// in place, its own workers kept awake through each, and finds what a scene on a pool of its
/// own finds. On a thread of its own, so that no thread of the test harness joins a pool.
#[test]
fn a_scene_on_a_pool_that_includes_its_caller_finds_the_same_contacts() {
    std::thread::spawn(|| {
        let pool = Arc::new(ThreadPoolBuilder::new().num_threads(2).use_current_thread().build().unwrap());
        assert_eq!(pool.current_thread_index(), Some(0), "the calling thread is the pool's worker 0");
        let mut own = Scene::new_cpu(Some(2)).unwrap();
        let mut here = Scene::new_cpu_on_pool(pool.clone());
        here.set_workers_awake(WorkersAwake::WholeCall).unwrap();
        let ids = add_bodies(&mut own);
        assert_eq!(add_bodies(&mut here), ids);
        for f in 0..4 {
            let expected = detect_frame(&mut own, &ids, f).contacts;
            assert!(expected.len() > 100, "frame {f}: {} contacts", expected.len());
            assert_eq!(detect_frame(&mut here, &ids, f).contacts, expected, "frame {f}");
        }
    })
    .join()
    .unwrap();
}

/// Keeping the pool's other workers awake through a call (`WorkersAwake`) changes no contact:
/// scenes on pools of their own and on a shared pool, with each setting, iterative detection
/// on, find the same contacts frame after frame (the scene on the shared pool with its default).
/// A scene on a pool of its own keeps them awake through the whole call by default, one on a
/// shared pool for at most `WorkersAwake::SHARED`.
#[test]
fn keeping_the_workers_awake_changes_no_contact() {
    let pool = Arc::new(ThreadPoolBuilder::new().num_threads(2).build().unwrap());
    let settings = [
        WorkersAwake::Off,
        WorkersAwake::AtMost(std::time::Duration::ZERO),
        WorkersAwake::SHARED,
        WorkersAwake::WholeCall,
    ];
    let mut scenes: Vec<Scene> = settings.iter().map(|_| Scene::new_cpu(Some(2)).unwrap()).collect();
    scenes.push(Scene::new_cpu_on_pool(pool.clone()));
    assert_eq!(scenes[0].workers_awake(), Some(WorkersAwake::WholeCall));
    assert_eq!(scenes[4].workers_awake(), Some(WorkersAwake::SHARED));
    for (scene, setting) in scenes.iter_mut().zip(settings) {
        scene.set_workers_awake(setting).unwrap();
        assert_eq!(scene.workers_awake(), Some(setting));
    }
    let mut ids = Vec::new();
    for scene in &mut scenes {
        scene.set_iterative(Some(Iterative::new(0.05))).unwrap();
        let added = add_bodies(scene);
        assert!(ids.is_empty() || added == ids, "the same ids in every scene");
        ids = added;
    }
    let mut walked = false;
    for f in 0..6 {
        let found: Vec<_> = scenes.iter_mut().map(|s| detect_frame(s, &ids, f)).collect();
        assert!(found[0].contacts.len() > 100, "frame {f}: {} contacts", found[0].contacts.len());
        for (k, other) in found.iter().enumerate().skip(1) {
            assert_eq!(other.contacts, found[0].contacts, "frame {f}, scene {k}");
            assert_eq!(other.stats.iterative, found[0].stats.iterative, "frame {f}, scene {k}");
        }
        walked |= found[0].stats.iterative;
    }
    assert!(walked, "an iterative pass among the frames");
}
