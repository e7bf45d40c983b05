//! The scene's bookkeeping of positions on the CPU backend, against references written here:
//! which frame's positions the trees and the previous positions come from when only some bodies
//! move, the first non-finite vertex named by the error, and iterative detection's
//! displacement bound as the largest distance computed vertex by vertex.

use glam::Vec3;
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyId, BodyKind, Error, Iterative, Pairs, Scene};

/// Three bodies of vertex counts that are not multiples of 8 (42, 162 and 25).
fn bodies() -> [TriMesh; 3] {
    [meshes::icosphere(0.5, 1), meshes::icosphere(0.7, 2), meshes::grid_sheet(1.0, 1.0, 4, 4)]
}

/// `m`'s positions moved by `k` (a different shape each `k`: every vertex by its own amount).
fn placed(m: &TriMesh, k: u32) -> Vec<Vec3> {
    let shift =
        |i: usize| Vec3::new(0.01 * k as f32, 0.003 * ((i as u32 * 7 + k) % 5) as f32, -0.02 * k as f32);
    m.positions.iter().enumerate().map(|(i, p)| *p + shift(i)).collect()
}

fn scene_of(meshes: &[TriMesh], positions: &[Vec<Vec3>]) -> (Scene, Vec<BodyId>) {
    let mut scene = Scene::new_cpu(Some(2)).unwrap();
    let ids = meshes
        .iter()
        .zip(positions)
        .map(|(m, p)| scene.add_body(p, &m.triangles, BodyKind::Volumetric).unwrap())
        .collect();
    (scene, ids)
}

#[test]
fn the_frame_takes_each_bodys_latest_positions_and_keeps_the_last_as_previous() {
    let meshes = bodies();
    let mut at: Vec<Vec<Vec3>> = meshes.iter().map(|m| placed(m, 0)).collect();
    let (mut scene, ids) = scene_of(&meshes, &at);
    scene.detect(Pairs::Overlapping).unwrap();
    // Which bodies move each frame: the outer two (a still body between moved ones), the first,
    // the last, the middle, none, all, and a body set twice before its frame.
    let plans: [&[usize]; 7] = [&[0, 2], &[0], &[2], &[1], &[], &[0, 1, 2], &[1, 1]];
    for (f, plan) in plans.iter().enumerate() {
        let before = at.clone();
        for (n, &b) in plan.iter().enumerate() {
            at[b] = placed(&meshes[b], (10 * f + n + 1) as u32);
            scene.set_positions(ids[b], &at[b]).unwrap();
        }
        scene.detect(Pairs::Overlapping).unwrap();
        for b in 0..3 {
            // A body that did not move has the same previous and current positions.
            let previous = if plan.contains(&b) { &before[b] } else { &at[b] };
            assert_eq!(&scene.previous_positions(ids[b]).unwrap(), previous, "frame {f}, body {b}: previous");
            assert_eq!(scene.positions(ids[b]).unwrap(), at[b].as_slice(), "frame {f}, body {b}: latest");
        }
        // The frame's normals and trees are those of a scene made at these positions.
        let (mut fresh, _) = scene_of(&meshes, &at);
        fresh.detect(Pairs::Overlapping).unwrap();
        let (got, want) = (scene.frame_data().unwrap(), fresh.frame_data().unwrap());
        assert_eq!(got.normals, want.normals, "frame {f}: normals");
        let packing = scene.packing().clone();
        for b in 0..3 {
            assert_eq!(
                got.body_nodes(&packing, b),
                want.body_nodes(&packing, b),
                "frame {f}, body {b}: tree"
            );
        }
    }
    // A body added after new positions were set: the scene is packed anew, each body's previous
    // positions those of the last frame.
    let before = at.clone();
    at[0] = placed(&meshes[0], 99);
    scene.set_positions(ids[0], &at[0]).unwrap();
    let extra = meshes::icosphere(0.2, 1);
    scene.add_body(&extra.positions, &extra.triangles, BodyKind::Volumetric).unwrap();
    scene.detect(Pairs::Overlapping).unwrap();
    for b in 0..3 {
        assert_eq!(scene.previous_positions(ids[b]).unwrap(), before[b], "repacked, body {b}: previous");
    }
}

#[test]
fn a_non_finite_position_names_the_first_such_vertex_and_changes_nothing() {
    let meshes = bodies();
    let at: Vec<Vec<Vec3>> = meshes.iter().map(|m| placed(m, 0)).collect();
    let (mut scene, ids) = scene_of(&meshes, &at);
    let n = at[1].len();
    // Extreme finite values are accepted.
    let mut extreme = at[1].clone();
    extreme[0] = Vec3::new(f32::MAX, f32::MIN, -0.0);
    extreme[n - 1] = Vec3::new(f32::MIN_POSITIVE / 4.0, 0.0, f32::MAX);
    scene.set_positions(ids[1], &extreme).unwrap();
    let bad_values = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
    // First, last, either side of 32 vertices (96 floats), and two bad vertices: the first named.
    for (k, vertices) in [vec![0], vec![n - 1], vec![31], vec![32], vec![33], vec![70, 40], vec![40, 70]]
        .into_iter()
        .enumerate()
    {
        let mut p = at[1].clone();
        for (j, &v) in vertices.iter().enumerate() {
            p[v][(k + j) % 3] = bad_values[(k + j) % 3];
        }
        let first = *vertices.iter().min().unwrap();
        match scene.set_positions(ids[1], &p) {
            Err(Error::NonFinite { body, vertex, position }) => {
                assert_eq!((body, vertex), (ids[1], first), "case {k}");
                assert_eq!(position.map(f32::to_bits), p[first].to_array().map(f32::to_bits), "case {k}");
            }
            other => panic!("case {k}: {other:?}"),
        }
        assert_eq!(scene.positions(ids[1]).unwrap(), extreme.as_slice(), "case {k}: unchanged");
    }
}

#[test]
fn the_displacement_bound_is_the_largest_distance_from_the_last_full_pass() {
    let meshes = bodies();
    let at: Vec<Vec<Vec3>> = meshes.iter().map(|m| placed(m, 0)).collect();
    let (mut scene, ids) = scene_of(&meshes, &at);
    scene.set_iterative(Some(Iterative::new(10.0))).unwrap();
    scene.detect(Pairs::Overlapping).unwrap();
    for b in 0..3 {
        for k in [1u32, 2, 3] {
            // One vertex moved farther than the rest, in turn the first, one in the middle and
            // the last (past the last group of 8 where the count is not a multiple of 8).
            let mut p = placed(&meshes[b], k);
            let far = [0, p.len() / 2, p.len() - 1][(k % 3) as usize];
            p[far] += Vec3::new(0.0, 0.5, 0.25 * k as f32);
            scene.set_positions(ids[b], &p).unwrap();
            let want = p.iter().zip(&at[b]).map(|(x, y)| x.distance(*y)).fold(0.0f32, f32::max);
            let got = scene.displacement(ids[b]).unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "body {b}, k {k}: {got} against {want}");
        }
    }
}
