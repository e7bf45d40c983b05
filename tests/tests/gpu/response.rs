//! The contact response (Hermann et al. 2008, section 4): GPU against the CPU twin, Newton's
//! third law, a sphere pressed into a plane, the recorded path, and the documented edge cases.

use glam::{Affine3A, Vec3};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyId, BodyKind, ContactForces, Error, ForceDirection, Pairs, Response, Scene};
use raycontact_tests::ctx;

fn scene(gpu: bool, bodies: &[(&TriMesh, BodyKind)]) -> (Scene, Vec<BodyId>) {
    let mut s = if gpu { Scene::new(ctx()) } else { Scene::new_cpu(None).unwrap() };
    let ids = bodies.iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
    (s, ids)
}

/// A unit sphere 0.1 deep in the top of a coarse box (its corners far from the sphere, so
/// only the sphere's vertices touch it).
fn sphere_on_plane() -> (TriMesh, TriMesh) {
    let ball = meshes::icosphere(1.0, 3);
    let slab = meshes::cuboid(Vec3::new(3.0, 3.0, 0.5), 1)
        .transformed(Affine3A::from_translation(Vec3::new(0.0, 0.0, -1.4)));
    (ball, slab)
}

/// The largest difference between two force sets, in force units.
fn max_difference(a: &ContactForces, b: &ContactForces) -> f32 {
    a.iter()
        .zip(b.iter())
        .flat_map(|((ia, fa), (ib, fb))| {
            assert_eq!(ia, ib);
            fa.iter().zip(fb).map(|(x, y)| (*x - *y).abs().max_element())
        })
        .fold(0.0, f32::max)
}

/// Net force and torque (about the origin) over every vertex of every body, and the sums of
/// their magnitudes.
fn net(s: &Scene, f: &ContactForces) -> (Vec3, Vec3, f32, f32) {
    let (mut force, mut torque, mut fm, mut tm) = (Vec3::ZERO, Vec3::ZERO, 0.0, 0.0);
    for (id, forces) in f.iter() {
        for (p, x) in s.positions(id).unwrap().iter().zip(forces) {
            force += *x;
            torque += p.cross(*x);
            fm += x.length();
            tm += p.length() * x.length();
        }
    }
    (force, torque, fm, tm)
}

#[test]
fn gpu_forces_equal_the_cpu_twins_in_both_directions_with_damping() {
    let a = meshes::torus(1.0, 0.3, 40, 20);
    let b = a.transformed(Affine3A::from_rotation_translation(
        glam::Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        Vec3::new(1.0, 0.0, 0.0),
    ));
    let cloth = BodyKind::Cloth { half_thickness: 0.02 };
    let sheet = meshes::grid_sheet(2.0, 2.0, 24, 24)
        .transformed(Affine3A::from_translation(Vec3::new(0.2, 0.1, 0.29)));
    for direction in [ForceDirection::AlongRay, ForceDirection::AlongNormal] {
        let response = Response { stiffness: 3.0, damping: 0.5, direction, ..Response::default() };
        let mut results = Vec::new();
        for gpu in [true, false] {
            let (mut s, ids) =
                scene(gpu, &[(&a, BodyKind::Volumetric), (&b, BodyKind::Volumetric), (&sheet, cloth)]);
            s.set_response(response).unwrap();
            s.set_pair_stiffness(ids[0], ids[2], 7.0).unwrap();
            s.detect(Pairs::Overlapping).unwrap();
            // A second frame with motion, so that the damping has velocities to act on.
            let moved: Vec<Vec3> = b.positions.iter().map(|p| *p + Vec3::new(-0.01, 0.004, 0.002)).collect();
            s.set_positions(ids[1], &moved).unwrap();
            let found = s.detect(Pairs::Overlapping).unwrap();
            let forces = s.contact_forces().unwrap();
            let collisions = found.contacts.iter().filter(|c| c.is_collision()).count() as u32;
            assert!(collisions > 50, "{direction:?}: {collisions} collisions");
            assert_eq!(forces.contacts, collisions, "{direction:?}: every collision gives a force");
            results.push(forces);
        }
        let d = max_difference(&results[0], &results[1]);
        // The integer sums are exact; the few float operations before the conversion may round
        // differently by an ulp: a few fixed-point steps.
        assert!(d <= 8.0 * Response::default().resolution, "{direction:?}: GPU and CPU differ by {d}");
        assert!(results[0].iter().any(|(_, f)| f.iter().any(|x| x.length() > 0.01)));
    }
}

#[test]
fn forces_obey_newtons_third_law_and_push_the_sphere_out_of_the_plane() {
    let (ball, slab) = sphere_on_plane();
    for gpu in [true, false] {
        for direction in [ForceDirection::AlongRay, ForceDirection::AlongNormal] {
            let (mut s, ids) = scene(gpu, &[(&ball, BodyKind::Volumetric), (&slab, BodyKind::Volumetric)]);
            s.set_response(Response { direction, ..Response::default() }).unwrap();
            let found = s.detect(Pairs::Overlapping).unwrap();
            assert!(
                found.contacts.iter().all(|c| c.source_body == ids[0]),
                "only the sphere's vertices touch"
            );
            let f = s.contact_forces().unwrap();
            let (force, torque, fm, tm) = net(&s, &f);
            // Each contact's contributions sum to exactly zero in fixed point.
            assert!(force.abs().max_element() < 1e-3, "{gpu} {direction:?}: net force {force}");
            let on_ball = f.total(ids[0]).unwrap();
            assert!(on_ball.z > 0.05, "{gpu} {direction:?}: the sphere is pushed up ({on_ball})");
            let tangential = on_ball.truncate().length();
            assert!(
                tangential < 1e-3 * on_ball.z,
                "{gpu} {direction:?}: tangential {tangential} of {on_ball}"
            );
            match direction {
                ForceDirection::AlongRay => {
                    // Each force acts along the line joining its matching points: no torque.
                    assert!(torque.length() < 1e-3 * tm.max(1.0), "{gpu}: net torque {torque} ({fm} {tm})");
                }
                ForceDirection::AlongNormal => {
                    // Against a flat plane the re-projected normal is the plane's: not one bit
                    // of tangential force on any vertex.
                    for (_, forces) in f.iter() {
                        assert!(forces.iter().all(|x| x.x == 0.0 && x.y == 0.0), "{gpu}: tangential force");
                    }
                }
            }
        }
    }
}

#[test]
fn the_recorded_path_leaves_the_readback_paths_forces_on_the_gpu() {
    let (ball, slab) = sphere_on_plane();
    let (mut s, ids) = scene(true, &[(&ball, BodyKind::Volumetric), (&slab, BodyKind::Volumetric)]);
    let want = {
        s.detect(Pairs::Overlapping).unwrap();
        s.contact_forces().unwrap()
    };
    let (mut r, _) = scene(true, &[(&ball, BodyKind::Volumetric), (&slab, BodyKind::Volumetric)]);
    let device = ctx().device();
    let mut enc = device.create_command_encoder(&Default::default());
    r.record_update(&mut enc).unwrap();
    r.record_detect(&mut enc, Pairs::Overlapping).unwrap();
    r.record_contact_forces(&mut enc).unwrap();
    let vertices = r.packing().params.vertex_count as u64;
    let bufs = r.force_buffers().unwrap();
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 16 * vertices,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    enc.copy_buffer_to_buffer(bufs.forces, 0, &read, 0, Some(16 * vertices));
    ctx().queue().submit([enc.finish()]);
    read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let words: Vec<i32> = bytemuck::pod_collect_to_vec(&read.slice(..).get_mapped_range().unwrap());
    let res = Response::default().resolution;
    let got: Vec<Vec3> =
        words.chunks_exact(4).map(|c| Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32) * res).collect();
    let want: Vec<Vec3> = want.of(ids[0]).unwrap().iter().chain(want.of(ids[1]).unwrap()).copied().collect();
    assert_eq!(got, want, "the same bits");
}

#[test]
fn no_contact_gives_zero_forces_and_an_overflow_names_the_vertex() {
    let (ball, slab) = sphere_on_plane();
    let far = ball.transformed(Affine3A::from_translation(Vec3::Z * 5.0));
    for gpu in [true, false] {
        let (mut s, ids) = scene(gpu, &[(&far, BodyKind::Volumetric), (&slab, BodyKind::Volumetric)]);
        assert!(s.detect(Pairs::Overlapping).unwrap().contacts.is_empty());
        let f = s.contact_forces().unwrap();
        assert_eq!(f.contacts, 0);
        assert!(f.iter().all(|(_, x)| x.iter().all(|v| *v == Vec3::ZERO)));
        assert_eq!(f.of(ids[0]).unwrap().len(), far.positions.len());

        let (mut s, ids) = scene(gpu, &[(&ball, BodyKind::Volumetric), (&slab, BodyKind::Volumetric)]);
        s.set_response(Response { stiffness: 1e6, resolution: 1e-6, ..Response::default() }).unwrap();
        s.detect(Pairs::Overlapping).unwrap();
        match s.contact_forces() {
            Err(Error::ForceOverflow { body, vertex, .. }) => {
                assert!(body == ids[0] || body == ids[1], "{gpu}: {body}");
                let n = s.positions(body).unwrap().len() as u32;
                assert!(vertex < n, "{gpu}: vertex {vertex} of {n}");
            }
            other => panic!("{gpu}: expected an overflow, got {other:?}"),
        }
        assert!(s.set_response(Response { resolution: 0.0, ..Response::default() }).is_err());
        assert!(s.set_pair_stiffness(ids[0], ids[1], f32::NAN).is_err());
    }
}

#[test]
fn forces_need_a_complete_detection() {
    let (ball, slab) = sphere_on_plane();
    for gpu in [true, false] {
        let (mut s, _) = scene(gpu, &[(&ball, BodyKind::Volumetric), (&slab, BodyKind::Volumetric)]);
        assert!(matches!(s.contact_forces(), Err(Error::InvalidInput { .. })), "{gpu}: no detection yet");
        s.set_contact_capacity(2);
        s.set_overflow_policy(raycontact::OverflowPolicy::Error);
        assert!(matches!(s.detect(Pairs::Overlapping), Err(Error::ContactOverflow { .. })));
        assert!(matches!(s.contact_forces(), Err(Error::InvalidInput { .. })), "{gpu}: after an overflow");
        s.set_overflow_policy(raycontact::OverflowPolicy::Grow);
        s.detect(Pairs::Overlapping).unwrap();
        assert!(s.contact_forces().unwrap().contacts > 0, "{gpu}");
    }
}

/// Degenerate (zero-area) triangles, documented as kept out of the BVH (never hit) and as
/// giving their vertices no normal: on both sides of a sphere pressed into a slab, the forces
/// are finite, equal on both backends, obey Newton's third law, no contact lands on a
/// degenerate triangle, and a vertex whose only triangle is degenerate gets no force.
#[test]
fn degenerate_triangles_take_no_contact_and_leave_the_forces_sound() {
    let (mut ball, mut slab) = sphere_on_plane();
    // The sphere: its lowest vertex's nearest neighbour moved onto it (the two triangles on
    // their edge collapse), and an extra vertex at the same place whose only triangle is
    // degenerate.
    let low = (0..ball.positions.len())
        .min_by(|&a, &b| ball.positions[a].z.total_cmp(&ball.positions[b].z))
        .unwrap();
    let p = ball.positions[low];
    let near = ball
        .triangles
        .iter()
        .flat_map(|t| if t.contains(&(low as u32)) { t.to_vec() } else { vec![] })
        .filter(|&i| i as usize != low)
        .min_by(|&a, &b| {
            ball.positions[a as usize].distance(p).total_cmp(&ball.positions[b as usize].distance(p))
        })
        .unwrap();
    ball.positions[near as usize] = p;
    let lone = ball.positions.len() as u32;
    ball.positions.push(p);
    ball.triangles.push([lone, low as u32, near]);
    // The slab: slivers along its top face's diagonal (three collinear vertices each).
    let top: Vec<u32> =
        (0..slab.positions.len() as u32).filter(|&i| slab.positions[i as usize].z > -1.0).collect();
    let (a, c) = (
        top[0],
        *top.iter()
            .max_by(|&&x, &&y| {
                let d = |i: u32| slab.positions[i as usize].distance(slab.positions[top[0] as usize]);
                d(x).total_cmp(&d(y))
            })
            .unwrap(),
    );
    for k in 1..4 {
        let m = slab.positions[a as usize].lerp(slab.positions[c as usize], k as f32 / 4.0);
        slab.positions.push(m);
        slab.triangles.push([a, slab.positions.len() as u32 - 1, c]);
    }
    let area = |m: &TriMesh, t: u32| {
        let [x, y, z] = m.triangles[t as usize].map(|i| m.positions[i as usize]);
        (y - x).cross(z - x).length()
    };
    let mut results = Vec::new();
    for gpu in [true, false] {
        let (mut s, ids) = scene(gpu, &[(&ball, BodyKind::Volumetric), (&slab, BodyKind::Volumetric)]);
        let found = s.detect(Pairs::Overlapping).unwrap();
        assert!(
            s.body_state(ids[0]).unwrap().degenerate_count >= 3,
            "{gpu}: the sphere's degenerate triangles"
        );
        assert!(s.body_state(ids[1]).unwrap().degenerate_count >= 3, "{gpu}: the slab's slivers");
        assert!(found.contacts.len() > 10, "{gpu}: {} contacts", found.contacts.len());
        for c in &found.contacts {
            let target = if c.target_body == ids[0] { &ball } else { &slab };
            assert!(
                area(target, c.target_triangle) > 1e-6,
                "{gpu}: a contact on a degenerate triangle: {c:?}"
            );
            assert_ne!(
                (c.source_body, c.source_vertex),
                (ids[0], lone),
                "{gpu}: a ray from a vertex without a normal"
            );
        }
        let f = s.contact_forces().unwrap();
        assert!(f.iter().all(|(_, x)| x.iter().all(|v| v.is_finite())), "{gpu}: finite forces");
        assert_eq!(f.of(ids[0]).unwrap()[lone as usize], Vec3::ZERO, "{gpu}: no force on the lone vertex");
        let (force, _, _, _) = net(&s, &f);
        assert!(force.abs().max_element() < 1e-3, "{gpu}: net force {force}");
        assert!(f.total(ids[0]).unwrap().z > 0.05, "{gpu}: the sphere is pushed up");
        results.push(f);
    }
    let d = max_difference(&results[0], &results[1]);
    assert!(d <= 8.0 * Response::default().resolution, "GPU and CPU differ by {d}");
}
