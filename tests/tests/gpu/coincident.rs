//! Coincident triangles: a body whose every triangle is listed again after the originals, from
//! another corner and in the other orientation (a closed surface made double-sided, with
//! duplicates), is hit where its original triangles are, at the same t bit for bit
//! (`shared/ray.wgsl`'s `ordered_sum`), so the lowest index, the original, wins the tie on both
//! backends: the contacts another body's rays find on it are those they find on the body alone,
//! on the GPU and on the CPU backend alike. A body listed in both orientations has no vertex
//! normals (its faces cancel: `layout::NORMAL_CANCELLED`), so it casts no ray, on either backend.

use glam::{Affine3A, Quat, Vec3};
use raycontact::meshes::{self, TriMesh};
use raycontact::{Contact, Pairs};

use crate::narrow::scene_with;

/// A triangle's corners in another order.
type Order = fn([u32; 3]) -> [u32; 3];

/// `m` with all its triangles listed again after them, once in each of `orders`.
fn listed_again(m: &TriMesh, orders: &[Order]) -> TriMesh {
    let mut out = m.clone();
    for order in orders {
        out.triangles.extend(m.triangles.iter().map(|&t| order(t)));
    }
    out
}

/// A triangle from its second corner.
fn rotated([a, b, c]: [u32; 3]) -> [u32; 3] {
    [b, c, a]
}

/// A triangle in the other orientation.
fn reversed([a, b, c]: [u32; 3]) -> [u32; 3] {
    [a, c, b]
}

/// The contacts of rays from body 0 (`a`) on body 1 (`b`), as (vertex, triangle, flags, depth
/// bits), sorted.
fn contacts_on(gpu: bool, a: &TriMesh, b: &TriMesh) -> Vec<(u32, u32, u32, u32)> {
    let (mut scene, ids) = scene_with(gpu, &[a.clone(), b.clone()]);
    let ia = ids[0];
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
        let copies = listed_again(&b, &[rotated, reversed]);
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

#[test]
fn a_body_listed_in_both_orientations_has_no_normals_and_casts_no_ray_on_both_backends() {
    // A torus listed again reversed: every vertex's faces cancel, which rounding leaves as a
    // small sum of any direction (the GPU's and the CPU's apart): no normal, no ray.
    let torus = meshes::torus(0.6, 0.25, 24, 12);
    let both = listed_again(&torus, &[reversed]);
    let ball = meshes::icosphere(0.5, 3).transformed(Affine3A::from_translation(Vec3::new(0.6, 0.0, 0.1)));
    let mut found = Vec::new();
    for gpu in [true, false] {
        let (mut scene, ids) = scene_with(gpu, &[both.clone(), ball.clone()]);
        let id = ids[0];
        let contacts = scene.detect(Pairs::Overlapping).unwrap().contacts.to_vec();
        let normals = scene.frame_data().unwrap().normals;
        assert!(normals[..torus.positions.len()].iter().all(|n| *n == Vec3::ZERO), "gpu {gpu}: a normal");
        assert!(normals[torus.positions.len()..].iter().all(|n| n.length() > 0.999), "gpu {gpu}: the ball's");
        assert!(contacts.iter().all(|c| c.source_body != id), "gpu {gpu}: a ray from the torus");
        let mut keys: Vec<_> =
            contacts.iter().map(|c| (c.source_vertex, c.target_triangle, c.flags.bits())).collect();
        keys.sort_unstable();
        assert!(keys.len() > 50, "gpu {gpu}: {} contacts: the bodies should overlap", keys.len());
        found.push(keys);
    }
    assert_eq!(found[0], found[1], "the GPU's contacts against the CPU's");
}
