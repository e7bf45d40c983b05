//! No compile stall and no allocation in steady-state frames: every pipeline exists once the
//! context does, detections create none, and a scene's frames after the first ones create no
//! buffer, for each scene kind (volumetric, cloth, walking).

use glam::{Affine3A, Vec3};
use raycontact::internals::kernels::Kernel;
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyId, BodyKind, Iterative, Pairs, Scene};
use raycontact_tests::ctx;

/// Runs `frames` detections on `scene`, moving body `id` (`mesh`) by `step` each frame; the
/// contacts found in all.
fn frames(scene: &mut Scene, id: BodyId, mesh: &TriMesh, step: Vec3, from: u32, frames: u32) -> usize {
    let mut contacts = 0;
    for f in from..from + frames {
        let moved: Vec<Vec3> = mesh.positions.iter().map(|p| *p + step * f as f32).collect();
        scene.set_positions(id, &moved).unwrap();
        contacts += scene.detect(Pairs::Overlapping).unwrap().contacts.len();
    }
    contacts
}

/// Two warm-up frames, then five steady-state frames: no pipeline and no buffer created by the
/// latter, and none of the pipelines by any of them.
fn assert_steady(what: &str, (mut scene, id): (Scene, BodyId), mesh: &TriMesh, step: Vec3) {
    let ctx = ctx();
    let pipelines = ctx.pipelines_created();
    assert_eq!(pipelines, Kernel::ALL.len(), "{what}: every pipeline exists once the context does");
    let warm = frames(&mut scene, id, mesh, step, 0, 2);
    let allocated = scene.buffer_allocations();
    let steady = frames(&mut scene, id, mesh, step, 2, 5);
    assert!(warm > 0 && steady > 0, "{what}: the bodies touch ({warm}, {steady} contacts)");
    assert_eq!(scene.buffer_allocations(), allocated, "{what}: buffers created in steady-state frames");
    assert_eq!(ctx.pipelines_created(), pipelines, "{what}: pipelines created by detections");
}

/// A GPU scene of `bodies` on the shared context, and the id of the first body.
fn scene_of(bodies: &[(&TriMesh, BodyKind)], iterative: Option<Iterative>) -> (Scene, BodyId) {
    let mut scene = Scene::new(ctx());
    scene.set_prediction_distance(0.05).unwrap();
    scene.set_iterative(iterative).unwrap();
    let ids: Vec<BodyId> =
        bodies.iter().map(|(m, k)| scene.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
    (scene, ids[0])
}

#[test]
fn volumetric_frames_create_no_pipeline_and_no_buffer() {
    let a = meshes::icosphere(1.0, 3);
    let b = meshes::torus(1.0, 0.4, 32, 16).transformed(Affine3A::from_translation(Vec3::new(1.6, 0.1, 0.0)));
    let scene = scene_of(&[(&a, BodyKind::Volumetric), (&b, BodyKind::Volumetric)], None);
    assert_steady("volumetric", scene, &a, Vec3::new(0.01, 0.003, 0.0));
}

/// A sheet resting on a ball and sliding across it: about as many contacts every frame.
#[test]
fn cloth_frames_create_no_pipeline_and_no_buffer() {
    let sheet = meshes::grid_sheet(2.0, 2.0, 24, 24).transformed(Affine3A::from_translation(Vec3::Z * 0.95));
    let ball = meshes::icosphere(1.0, 3);
    let cloth = BodyKind::Cloth { half_thickness: 0.01 };
    let scene = scene_of(&[(&sheet, cloth), (&ball, BodyKind::Volumetric)], None);
    assert_steady("cloth", scene, &sheet, Vec3::new(0.004, 0.002, 0.0));
}

/// A sheet sinking into a ball: the contacts grow every frame (122 to 186), within the contact
/// readback's headroom, so no buffer is recreated.
#[test]
fn growing_contacts_create_no_buffer() {
    let sheet = meshes::grid_sheet(2.0, 2.0, 24, 24).transformed(Affine3A::from_translation(Vec3::Z * 0.95));
    let ball = meshes::icosphere(1.0, 3);
    let cloth = BodyKind::Cloth { half_thickness: 0.01 };
    let scene = scene_of(&[(&sheet, cloth), (&ball, BodyKind::Volumetric)], None);
    assert_steady("sinking cloth", scene, &sheet, -Vec3::Z * 0.01);
}

#[test]
fn walking_frames_create_no_pipeline_and_no_buffer() {
    let a = meshes::icosphere(1.0, 3);
    let b = meshes::icosphere(1.0, 3).transformed(Affine3A::from_translation(Vec3::new(1.8, 0.05, 0.0)));
    let it = Iterative { full_pass_every: 100, ..Iterative::new(0.2) };
    let scene = scene_of(&[(&a, BodyKind::Volumetric), (&b, BodyKind::Volumetric)], Some(it));
    assert_steady("walking", scene, &a, Vec3::new(0.005, 0.001, 0.0));
}
