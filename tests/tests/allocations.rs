//! The CPU backend's steady-state frames allocate no memory that grows with the scene: once a
//! scene has run through the poses it cycles through (every vector grown to what they need), a
//! detection (its update included) allocates the same few bytes at two resolutions of the same
//! bodies, however many triangles, rays and contacts: only bookkeeping that follows the number of
//! bodies and pairs (the frame's figures, each body's part of a buffer). Volumetric, cloth and
//! iterative (walking) detection.
//!
//! Its own test binary: the counting allocator sees every thread of the process, so no other
//! test may run beside it.

use glam::{Affine3A, Quat, Vec3};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, Contacts, Iterative, Pairs, Scene};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

/// The poses a scene cycles through.
const POSES: usize = 3;

/// What a steady frame may allocate at most: a few small vectors.
const MOST_BYTES: usize = 4096;

/// The scene kinds.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Volumetric,
    Cloth,
    Walking,
}

/// A torus and a second body against it (a ball, or a sheet of cloth draped through it), at
/// resolution `fine` (1 or 2: twice the segments a side).
fn bodies(kind: Kind, fine: u32) -> [(TriMesh, BodyKind); 2] {
    let torus = meshes::torus(0.8, 0.3, 40 * fine, 20 * fine);
    let other = match kind {
        Kind::Volumetric => (
            meshes::icosphere(0.5, 2 + fine)
                .transformed(Affine3A::from_translation(Vec3::new(0.3, 0.2, 0.0))),
            BodyKind::Volumetric,
        ),
        Kind::Cloth | Kind::Walking => (
            meshes::grid_sheet(2.0, 2.0, 30 * fine, 30 * fine)
                .transformed(Affine3A::from_translation(Vec3::new(0.0, 0.25, 0.0))),
            BodyKind::Cloth { half_thickness: 0.01 },
        ),
    };
    [(torus, BodyKind::Volumetric), other]
}

/// Per measured frame: (allocations, reallocations, bytes allocated or grown by, whether it was
/// an iterative pass).
fn steady_frames(kind: Kind, fine: u32) -> Vec<(usize, usize, usize, bool)> {
    let meshes = bodies(kind, fine);
    let mut scene = Scene::new_cpu(Some(2)).unwrap();
    if let Kind::Walking = kind {
        // Every pose the same pass each round: a full pass at the first, walks at the others.
        let it = Iterative { full_pass_every: POSES as u32, ..Iterative::new(1.0) };
        scene.set_iterative(Some(it)).unwrap();
    }
    let ids = meshes.each_ref().map(|(m, k)| scene.add_body(&m.positions, &m.triangles, *k).unwrap());
    let mut found = Contacts::default();
    let mut moved: Vec<Vec<Vec3>> = meshes.iter().map(|(m, _)| m.positions.clone()).collect();
    let mut frames = Vec::new();
    // Two rounds of the poses to grow every vector (the contacts alternate between two), then
    // two measured.
    for frame in 0..4 * POSES {
        let k = 0.01 * (frame % POSES) as f32;
        for (b, (m, _)) in meshes.iter().enumerate() {
            let turn = Quat::from_rotation_z(k * (b as f32 + 1.0));
            let shift = Vec3::new(k, -k, 0.0);
            moved[b].iter_mut().zip(&m.positions).for_each(|(p, q)| *p = turn * *q + shift);
        }
        let region = Region::new(GLOBAL);
        for (b, &id) in ids.iter().enumerate() {
            scene.set_positions(id, &moved[b]).unwrap();
        }
        scene.detect_into(Pairs::Overlapping, &mut found).unwrap();
        let s = region.change();
        assert!(!found.contacts.is_empty(), "{kind:?} at {fine}, frame {frame}: the bodies touch");
        if frame >= 2 * POSES {
            let bytes = s.bytes_allocated + s.bytes_reallocated.max(0) as usize;
            frames.push((s.allocations, s.reallocations, bytes, found.stats.iterative));
        }
    }
    let walked = frames.iter().filter(|f| f.3).count();
    let expected = if let Kind::Walking = kind { 2 * (POSES - 1) } else { 0 };
    assert_eq!(walked, expected, "{kind:?} at {fine}: the iterative passes");
    frames
}

#[test]
fn steady_frames_allocate_nothing_that_grows_with_the_scene() {
    for kind in [Kind::Volumetric, Kind::Cloth, Kind::Walking] {
        let [coarse, fine] = [1, 2].map(|fine| steady_frames(kind, fine));
        for (f, (c, x)) in coarse.iter().zip(&fine).enumerate() {
            let what = format!("{kind:?}, measured frame {f}");
            assert_eq!((c.1, x.1), (0, 0), "{what}: no vector grew");
            assert_eq!(c, x, "{what}: the same allocations at both resolutions");
            assert!(c.2 <= MOST_BYTES, "{what}: {} bytes", c.2);
        }
    }
}
