//! Coincident triangles: a body whose every triangle is listed again after the originals, from
//! another corner and in the other orientation (a closed surface made double-sided, with
//! duplicates), is hit where its original triangles are, at the same t bit for bit
//! (`shared/ray.wgsl`'s `ordered_sum`), so the lowest index, the original, wins the tie on both
//! backends: the contacts another body's rays find on it are those they find on the body alone,
//! on the GPU and on the CPU backend alike.

use glam::{Affine3A, Quat, Vec3};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, Contact, Pairs, Scene};
use raycontact_tests::ctx;

/// `m` with each triangle listed again twice after all of them: rotated by one corner, and
/// reversed.
fn with_copies(m: &TriMesh) -> TriMesh {
    let mut out = m.clone();
    out.triangles.extend(m.triangles.iter().map(|&[a, b, c]| [b, c, a]));
    out.triangles.extend(m.triangles.iter().map(|&[a, b, c]| [a, c, b]));
    out
}

/// The contacts of rays from body 0 (`a`) on body 1 (`b`), as (vertex, triangle, flags, depth
/// bits), sorted.
fn contacts_on(gpu: bool, a: &TriMesh, b: &TriMesh) -> Vec<(u32, u32, u32, u32)> {
    let mut scene = if gpu { Scene::new(ctx()) } else { Scene::new_cpu(Some(2)).unwrap() };
    let ia = scene.add_body(&a.positions, &a.triangles, BodyKind::Volumetric).unwrap();
    scene.add_body(&b.positions, &b.triangles, BodyKind::Volumetric).unwrap();
    scene.set_prediction_distance(0.05).unwrap();
    let found = scene.detect(Pairs::Overlapping).unwrap();
    let mut keys: Vec<_> = found
        .contacts
        .iter()
        .filter(|c: &&Contact| c.source_body == ia)
        .map(|c| (c.source_vertex, c.target_triangle, c.flags.bits(), c.depth.to_bits()))
        .collect();
    keys.sort_unstable();
    keys
}

#[test]
fn a_body_listed_again_in_other_orders_is_hit_on_its_first_triangles_on_both_backends() {
    let a = meshes::icosphere(0.6, 4);
    let turn = Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 0.4);
    for (k, b) in [
        meshes::cuboid(Vec3::new(0.5, 0.4, 0.7), 3),
        meshes::torus(0.6, 0.25, 24, 12),
        meshes::icosphere(0.5, 3),
    ]
    .into_iter()
    .enumerate()
    {
        let b = b.transformed(Affine3A::from_rotation_translation(turn, Vec3::new(0.55, 0.1, -0.05)));
        let copies = with_copies(&b);
        let cpu = contacts_on(false, &a, &b);
        assert!(cpu.len() > 50, "body {k}: {} contacts: the bodies should overlap", cpu.len());
        assert_eq!(contacts_on(false, &a, &copies), cpu, "body {k} with its copies, on the CPU");
        // The GPU's own contacts (its normals may differ from the CPU's in the last bits).
        let gpu = contacts_on(true, &a, &b);
        assert_eq!(contacts_on(true, &a, &copies), gpu, "body {k} with its copies, on the GPU");
        let key = |v: &[(u32, u32, u32, u32)]| v.iter().map(|c| (c.0, c.1, c.2)).collect::<Vec<_>>();
        assert_eq!(key(&gpu), key(&cpu), "body {k}: the GPU's contacts against the CPU's");
    }
}
