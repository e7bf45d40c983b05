//! The ray-traced narrow phase (Hermann et al. 2008) on the GPU against its CPU reference and
//! analytic cases.

use glam::{Affine3A, Quat, Vec3};
use rand::Rng;
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyId, BodyKind, BvhStats, Contact, Contacts, Error, OverflowPolicy, Pairs, Scene, Stage};
use raycontact_tests::{assert_unique_keys, ctx, grouped, key_surplus, random_unit, rng};

pub(crate) fn scene_with(gpu: bool, meshes: &[TriMesh]) -> (Scene, Vec<BodyId>) {
    let mut s = if gpu { Scene::new(ctx()) } else { Scene::new_cpu(None).unwrap() };
    let ids = meshes
        .iter()
        .map(|m| s.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap())
        .collect();
    (s, ids)
}

fn sphere(r: f32, centre: Vec3) -> TriMesh {
    meshes::icosphere(r, 5).transformed(Affine3A::from_translation(centre))
}

/// Depth of a ray from `p` along `d` (unit) until it leaves the sphere (c, r).
fn exit_distance(p: Vec3, d: Vec3, c: Vec3, r: f32) -> f32 {
    let m = p - c;
    let b = m.dot(d);
    let cc = m.dot(m) - r * r;
    -b + (b * b - cc).max(0.0).sqrt()
}

/// GPU contacts against the CPU reference, as multisets by (source body, vertex, target body,
/// ray side): each backend finds every key at most once; the keys agree but for rays that
/// graze a triangle edge (the GPU's normals differ from the CPU's by up to 1e-5); and for each
/// common key the same triangle or the same depth. Returns how many keys differ.
pub(crate) fn assert_same(what: &str, gpu: &[Contact], cpu: &[Contact]) -> usize {
    assert_unique_keys(&format!("{what} (GPU)"), gpu);
    assert_unique_keys(&format!("{what} (CPU)"), cpu);
    let (only_gpu, only_cpu) = key_surplus(gpu, cpu);
    let differ = only_gpu.len() + only_cpu.len();
    assert!(
        differ * 200 <= cpu.len().max(1) || differ <= 1,
        "{what}: {} GPU-only and {} CPU-only contacts of {}: {only_gpu:?} {only_cpu:?}",
        only_gpu.len(),
        only_cpu.len(),
        cpu.len()
    );
    assert_eq!(gpu.len() + only_cpu.len(), cpu.len() + only_gpu.len(), "{what}: contact counts");
    let c = grouped(cpu);
    for (k, g) in grouped(gpu) {
        let Some(cc) = c.get(&k) else { continue };
        let (cg, cc) = (g[0], cc[0]);
        assert!(
            cg.target_triangle == cc.target_triangle
                || (cg.depth - cc.depth).abs() <= 1e-4 * cc.depth.max(1.0),
            "{what}: contact {k:?}: GPU {cg:?} vs CPU {cc:?}"
        );
        assert!((cg.depth - cc.depth).abs() <= 1e-3 * cc.depth.max(1.0), "{what}: depth of {k:?}");
    }
    differ
}

/// A volumetric collision of vertex `v` inside the sphere (`other`, `r`): the ray from `v` to
/// the target point has the analytic exit length; the depth is that ray re-projected onto the
/// hit triangle's normal, which is the contact normal, pointing along the ray.
fn check_reprojection(contact: &Contact, v: Vec3, other: Vec3, r: f32) {
    let ray = contact.target_point - contact.source_point;
    assert!((ray.length() - contact.ray_length).abs() < 1e-4, "ray length {ray} vs {}", contact.ray_length);
    let exit = exit_distance(v, ray.normalize(), other, r);
    assert!((contact.ray_length - exit).abs() < 1e-3, "ray length {} vs analytic {exit}", contact.ray_length);
    assert!(contact.weight > 0.0 && contact.weight <= 1.0 + 1e-6);
    assert!((contact.depth - contact.ray_length * contact.weight).abs() < 1e-5);
    assert!((contact.normal.length() - 1.0).abs() < 1e-5);
    assert!((contact.normal.dot(ray.normalize()) - contact.weight).abs() < 1e-4, "normal along the ray");
    assert!(contact.is_collision() && !contact.is_outward());
}

fn detect_both(meshes: &[TriMesh]) -> (Vec<Contact>, Vec<Contact>) {
    let (mut g, _) = scene_with(true, meshes);
    let (mut c, _) = scene_with(false, meshes);
    let gc = g.detect(Pairs::Overlapping).unwrap().contacts;
    let cc = c.detect(Pairs::Overlapping).unwrap().contacts;
    (gc, cc)
}

#[test]
fn separated_bodies_have_no_contacts() {
    let (g, c) = detect_both(&[sphere(1.0, Vec3::ZERO), sphere(1.0, Vec3::new(2.5, 0.0, 0.0))]);
    assert!(g.is_empty() && c.is_empty());
    // Boxes overlapping, bodies not: still none.
    let (g, c) = detect_both(&[sphere(1.0, Vec3::ZERO), sphere(1.0, Vec3::new(1.5, 1.5, 0.0))]);
    assert!(g.is_empty() && c.is_empty(), "{g:?}");
}

#[test]
fn interpenetrating_spheres_match_the_analytic_depth() {
    let (ca, cb, r) = (Vec3::ZERO, Vec3::new(1.6, 0.1, -0.05), 1.0);
    let a = sphere(r, ca);
    let b = sphere(r, cb);
    let (g, c) = detect_both(&[a.clone(), b.clone()]);
    assert_same("spheres", &g, &c);
    assert!(!g.is_empty());
    let ids: Vec<u32> = vec![0, 1];
    for contact in &g {
        let (p, other) = if contact.source_body.index() == ids[0] { (&a, cb) } else { (&b, ca) };
        let v = p.positions[contact.source_vertex as usize];
        assert!(v.distance(other) <= r + 1e-3, "source vertex {v} is not inside the other sphere");
        check_reprojection(contact, v, other, r);
    }
    // Every vertex of A clearly inside B is a source, in both directions.
    for (mesh, other, body) in [(&a, cb, 0u32), (&b, ca, 1)] {
        for (vi, v) in mesh.positions.iter().enumerate() {
            if v.distance(other) < r - 0.01 {
                assert!(
                    g.iter().any(|c| c.source_body.index() == body && c.source_vertex == vi as u32),
                    "vertex {vi} of body {body} is inside the other sphere but has no contact"
                );
            }
        }
    }
}

#[test]
fn deep_penetration_is_detected() {
    // One sphere 80% inside the other: proximity methods would miss the deep vertices.
    let (ca, cb, r) = (Vec3::ZERO, Vec3::new(0.4, 0.0, 0.0), 1.0);
    let (g, c) = detect_both(&[sphere(r, ca), sphere(r, cb)]);
    assert_same("deep", &g, &c);
    let deepest = g.iter().map(|c| c.ray_length).fold(0.0, f32::max);
    assert!(deepest > 1.5, "deepest contact {deepest}");
    for contact in &g {
        let other = if contact.source_body.index() == 0 { cb } else { ca };
        check_reprojection(contact, contact.source_point, other, r);
    }
}

#[test]
fn a_body_inside_another_has_no_contacts() {
    // Hermann 2008 §4: the inward rays of the inner body leave it first, and the outer body's
    // vertices are outside the box overlap: nothing separates them.
    let (g, c) = detect_both(&[sphere(2.0, Vec3::ZERO), sphere(0.5, Vec3::new(0.2, 0.1, 0.0))]);
    assert!(g.is_empty() && c.is_empty());
}

#[test]
fn interpenetrating_tori() {
    let a = meshes::torus(1.0, 0.35, 40, 20);
    let b = a.transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        Vec3::new(0.5, 0.0, 0.0),
    ));
    let (g, c) = detect_both(&[a.clone(), b]);
    assert_eq!(a.triangles.len(), 1600);
    assert!(!g.is_empty());
    assert_same("tori", &g, &c);
}

#[test]
fn random_placements_match_the_cpu_reference() {
    let shapes = [
        raycontact_tests::bunny().transformed(Affine3A::from_scale(Vec3::splat(0.2))),
        meshes::torus(1.0, 0.35, 40, 20),
        meshes::cuboid(Vec3::new(0.8, 0.6, 0.5), 4),
        meshes::icosphere(0.9, 3),
        meshes::cylinder(0.6, 0.8, 32),
    ];
    let mut r = rng(2008);
    let (mut gpu, mut cpu) = (Scene::new(ctx()), Scene::new_cpu(None).unwrap());
    let mut total = 0;
    let mut differ = 0;
    for placement in 0..200 {
        let pose = |r: &mut rand_pcg::Pcg64| {
            Affine3A::from_scale_rotation_translation(
                Vec3::splat(r.random_range(0.7..1.3)),
                Quat::from_axis_angle(random_unit(r), r.random_range(0.0..std::f32::consts::TAU)),
                random_unit(r) * r.random_range(0.0..0.9),
            )
        };
        let m1 = shapes[r.random_range(0..shapes.len())].transformed(pose(&mut r));
        let m2 = shapes[r.random_range(0..shapes.len())].transformed(pose(&mut r));
        for s in [&mut gpu, &mut cpu] {
            for id in s.bodies().collect::<Vec<_>>() {
                s.remove_body(id).unwrap();
            }
            s.add_body(&m1.positions, &m1.triangles, BodyKind::Volumetric).unwrap();
            s.add_body(&m2.positions, &m2.triangles, BodyKind::Volumetric).unwrap();
        }
        let g = gpu.detect(Pairs::Overlapping).unwrap().contacts;
        let c = cpu.detect(Pairs::Overlapping).unwrap().contacts;
        differ += assert_same(&format!("placement {placement}"), &g, &c);
        total += c.len();
    }
    eprintln!("200 placements: {total} contacts on the CPU, {differ} differ on the GPU");
    assert!(total > 1000);
}

/// Two overlapping spheres on the GPU or on the CPU backend, and their pair: the scene of the
/// contact-capacity tests.
fn sphere_pair(gpu: bool) -> (Scene, [(BodyId, BodyId); 1]) {
    let meshes = [sphere(1.0, Vec3::ZERO), sphere(1.0, Vec3::new(1.2, 0.0, 0.0))];
    let (s, ids) = scene_with(gpu, &meshes);
    (s, [(ids[0], ids[1])])
}

#[test]
fn overflow_reports_the_exact_number_needed_and_grows_alike_on_both_backends() {
    let mut grown_to = Vec::new();
    for gpu in [true, false] {
        let what = if gpu { "GPU" } else { "CPU backend" };
        let (mut s, pair) = sphere_pair(gpu);
        let all = s.detect(Pairs::List(&pair)).unwrap().contacts;
        assert!(all.len() > 10);
        let (mut small, pair) = sphere_pair(gpu);
        small.set_contact_capacity(4);
        small.set_overflow_policy(OverflowPolicy::Error);
        match small.detect(Pairs::List(&pair)) {
            Err(Error::ContactOverflow { needed, capacity }) => {
                assert_eq!(needed as usize, all.len(), "{what}");
                assert_eq!(capacity, 4, "{what}");
            }
            other => panic!("{what}: expected an overflow, got {other:?}"),
        }
        assert_eq!(small.contact_capacity(), 4, "{what}: an error leaves the capacity");
        small.set_overflow_policy(OverflowPolicy::Grow);
        let grown = small.detect(Pairs::List(&pair)).unwrap();
        assert_eq!(grown.contacts, all, "{what}");
        // Grown with headroom: twice the number needed, and 256.
        let n = all.len() as u64;
        assert_eq!(small.contact_capacity(), 2 * n + 256, "{what}");
        grown_to.push(small.contact_capacity());
        // Steady state: the next frames allocate nothing.
        let again = small.detect(Pairs::Overlapping).unwrap();
        assert_eq!(again.contacts, all, "{what}");
        assert_eq!(small.detect(Pairs::Overlapping).unwrap().stats.buffers_allocated, 0, "{what}");
    }
    assert_eq!(grown_to[0], grown_to[1]);
}

#[test]
fn a_detection_that_fills_most_of_the_capacity_grows_it_for_the_next_without_casting_twice() {
    let mut grown_to = Vec::new();
    for gpu in [true, false] {
        let what = if gpu { "GPU" } else { "CPU backend" };
        let (mut s, pair) = sphere_pair(gpu);
        let all = s.detect(Pairs::List(&pair)).unwrap();
        let n = all.contacts.len() as u64;
        assert!(n > 100, "{what}: {n} contacts");
        let rays = |c: &raycontact::Contacts| c.stats.get(Stage::Rays).map_or(0, |st| st.dispatches);

        // Room for exactly the contacts found: no overflow, but past three quarters of it.
        let (mut tight, pair) = sphere_pair(gpu);
        tight.set_contact_capacity(n);
        let first = tight.detect(Pairs::List(&pair)).unwrap();
        assert_eq!(first.contacts, all.contacts, "{what}");
        assert_eq!(rays(&first), rays(&all), "{what}: the rays cast once");
        assert_eq!(tight.contact_capacity(), 2 * n + 256, "{what}: grown for the next detection");
        grown_to.push(tight.contact_capacity());
        // The next detection grows the buffers (on the GPU) and casts its rays once.
        let next = tight.detect(Pairs::List(&pair)).unwrap();
        assert_eq!(next.contacts, all.contacts, "{what}");
        assert_eq!(rays(&next), rays(&all), "{what}: the rays cast once");
        if gpu {
            assert!(next.stats.buffers_allocated > 0, "the contact buffers grew before the rays");
        }
        assert_eq!(tight.contact_capacity(), 2 * n + 256, "{what}: under three quarters now");
        let steady = tight.detect(Pairs::List(&pair)).unwrap();
        assert_eq!(steady.stats.buffers_allocated, 0, "{what}");

        // Under the error policy the capacity stays as set.
        let (mut strict, pair) = sphere_pair(gpu);
        strict.set_contact_capacity(n);
        strict.set_overflow_policy(OverflowPolicy::Error);
        assert_eq!(strict.detect(Pairs::List(&pair)).unwrap().contacts, all.contacts);
        assert_eq!(strict.contact_capacity(), n, "{what}: the error policy keeps the capacity");
    }
    assert_eq!(grown_to[0], grown_to[1], "both backends grow alike");
}

#[test]
fn the_detection_that_makes_the_contact_buffers_zeroes_both_sides() {
    // A detection writes one ping-pong side of the contacts, the next frame the other. Both are
    // zeroed (two clears counted in the rays stage) by the detection that created them: on the
    // first packing, and again when a detection grows them; no other detection clears them.
    // The contacts stay the first detection's on either side, as the CPU backend's.
    let (mut g, pair) = sphere_pair(true);
    let (mut c, _) = sphere_pair(false);
    let cpu = c.detect(Pairs::List(&pair)).unwrap().contacts;
    let first = g.detect(Pairs::List(&pair)).unwrap();
    assert!(first.contacts.len() > 100, "{} contacts", first.contacts.len());
    assert_same("first", &first.contacts, &cpu);
    let clears = |found: &raycontact::Contacts| found.stats.get(Stage::Rays).map_or(0, |st| st.copies);
    assert_eq!(clears(&first), 2, "the first detection zeroes both sides");
    let frame = |g: &mut Scene| {
        let found = g.detect(Pairs::List(&pair)).unwrap();
        assert_eq!(found.contacts, first.contacts);
        found
    };
    for f in 0..3 {
        let found = frame(&mut g);
        assert_eq!((clears(&found), found.stats.buffers_allocated), (0, 0), "frame {f}");
    }
    g.set_contact_capacity(8 * g.contact_capacity());
    let grown = frame(&mut g);
    assert!(grown.stats.buffers_allocated >= 2, "both sides grew");
    assert_eq!(clears(&grown), 2, "and were zeroed");
    for f in 0..2 {
        assert_eq!(clears(&frame(&mut g)), 0, "frame {f} after the growth");
    }
}

#[test]
fn pairs_naming_removed_bodies_are_rejected() {
    let meshes = [sphere(1.0, Vec3::ZERO), sphere(1.0, Vec3::new(1.2, 0.0, 0.0))];
    let (mut s, ids) = scene_with(true, &meshes);
    s.remove_body(ids[1]).unwrap();
    assert!(matches!(s.detect(Pairs::List(&[(ids[0], ids[1])])), Err(Error::UnknownBody { .. })));
    // A volumetric self pair is Hermann's self-collision test: a sphere does not touch itself.
    assert!(s.detect(Pairs::List(&[(ids[0], ids[0])])).unwrap().contacts.is_empty());
    let bad = [(ids[0], ids[0], f32::NAN)];
    assert!(matches!(s.detect(Pairs::WithDistance(&bad)), Err(Error::InvalidInput { .. })));
    assert!(s.detect(Pairs::Overlapping).unwrap().contacts.is_empty());
}

#[test]
fn every_inward_ray_leaving_its_own_body_first_finds_nothing() {
    // Hermann 2008 §4 / Figure 9: when all the inward rays cross the colliding body before the
    // collided one, no collision is detected. Two crossing slabs: every vertex of one slab that
    // lies inside the other has an inward ray that leaves its own (thin) slab first.
    let a = meshes::cuboid(Vec3::new(2.0, 2.0, 0.05), 8);
    let b = meshes::cuboid(Vec3::new(0.05, 2.0, 2.0), 8);
    let inside_b = a.positions.iter().filter(|p| p.x.abs() < 0.05 && p.z.abs() < 2.0).count();
    assert!(inside_b > 0, "the slabs must really cross");
    let (g, c) = detect_both(&[a, b]);
    assert!(g.is_empty(), "{} contacts on the GPU", g.len());
    assert!(c.is_empty(), "{} contacts on the CPU", c.len());

    // A non-convex (here: two-piece) intersection volume as in Figure 9: a thin slab cutting a
    // standing torus through both sides of its tube.
    let slab = meshes::cuboid(Vec3::new(2.0, 2.0, 0.05), 16);
    let torus =
        meshes::torus(1.0, 0.35, 48, 24).transformed(Affine3A::from_rotation_x(std::f32::consts::FRAC_PI_2));
    let in_tube = slab
        .positions
        .iter()
        .filter(|p| (Vec3::new(p.x, 0.0, p.z).length() - 1.0).hypot(p.y) < 0.3 && p.z.abs() <= 0.05)
        .count();
    assert!(in_tube > 0, "the slab must cut the tube");
    let (g, c) = detect_both(&[slab, torus]);
    assert!(g.is_empty(), "{} contacts on the GPU", g.len());
    assert!(c.is_empty(), "{} contacts on the CPU", c.len());
}

#[test]
fn degenerate_triangles_change_nothing() {
    let a = sphere(1.0, Vec3::ZERO);
    let b = sphere(1.0, Vec3::new(1.3, 0.2, 0.0));
    let mut a_bad = a.clone();
    a_bad.triangles.push([0, 0, 1]);
    a_bad.triangles.push([2, 3, 2]);
    let (g_clean, _) = detect_both(&[a.clone(), b.clone()]);
    let (g_bad, c_bad) = detect_both(&[a_bad, b]);
    assert_same("degenerate", &g_bad, &c_bad);
    let key =
        |c: &Contact| (c.source_body.index(), c.source_vertex, c.target_body.index(), c.target_triangle);
    assert_eq!(g_clean.iter().map(key).collect::<Vec<_>>(), g_bad.iter().map(key).collect::<Vec<_>>());
}

#[test]
fn detect_async_matches_detect() {
    let meshes = [sphere(1.0, Vec3::ZERO), sphere(1.0, Vec3::new(1.2, 0.3, 0.0))];
    let (mut s, _) = scene_with(true, &meshes);
    let blocking = s.detect(Pairs::Overlapping).unwrap().contacts;
    let (mut s2, _) = scene_with(true, &meshes);
    let asynchronous = pollster::block_on(s2.detect_async(Pairs::Overlapping)).unwrap().contacts;
    assert!(!blocking.is_empty());
    assert_eq!(blocking, asynchronous);
}

/// `detect_into` and `detect_into_async` give what `detect` gives, on both backends, refilling
/// the caller's vector in place (the same allocation once it is large enough), and leave the
/// caller's `Contacts` as they were when the detection fails.
#[test]
fn detect_into_refills_the_callers_contacts_in_place() {
    let meshes = [sphere(1.0, Vec3::ZERO), sphere(1.0, Vec3::new(1.2, 0.3, 0.0))];
    for gpu in [true, false] {
        let (mut reference, _) = scene_with(gpu, &meshes);
        let (mut s, ids) = scene_with(gpu, &meshes);
        // The resting sphere's binned-SAH tree made in the frame that finds it at rest: in the
        // background, which frame puts it in place (a count of the stats compared below)
        // depends on how soon the trees' thread gets to it.
        for scene in [&mut reference, &mut s] {
            scene.set_background_trees(false);
        }
        let mut found = Contacts::default();
        found.contacts.reserve(100_000);
        let memory = found.contacts.as_ptr();
        for frame in 0..4 {
            let at = meshes[1].transformed(Affine3A::from_translation(Vec3::X * (0.02 * frame as f32)));
            for scene in [&mut reference, &mut s] {
                scene.set_positions(ids[1], &at.positions).unwrap();
            }
            let want = reference.detect(Pairs::Overlapping).unwrap();
            if frame % 2 == 0 {
                s.detect_into(Pairs::Overlapping, &mut found).unwrap();
            } else {
                pollster::block_on(s.detect_into_async(Pairs::Overlapping, &mut found)).unwrap();
            }
            assert!(!want.contacts.is_empty(), "gpu {gpu} frame {frame}: contacts to compare");
            assert_eq!(found.contacts, want.contacts, "gpu {gpu} frame {frame}: contacts");
            assert_eq!(found.pairs, want.pairs, "gpu {gpu} frame {frame}: pairs");
            // (Host times differ from run to run.)
            let timeless = |b: BvhStats| BvhStats { host_ns: b.host_ns.map(|_| 0.0), ..b };
            let (got, expected) = (timeless(found.stats.bvh), timeless(want.stats.bvh));
            assert_eq!(got, expected, "gpu {gpu} frame {frame}: BVH update");
            assert_eq!(found.contacts.as_ptr(), memory, "gpu {gpu} frame {frame}: the caller's vector");
        }
        let before = found.clone();
        s.remove_body(ids[1]).unwrap();
        let failed = s.detect_into(Pairs::List(&[(ids[0], ids[1])]), &mut found);
        assert!(matches!(failed, Err(Error::UnknownBody { .. })), "gpu {gpu}: {failed:?}");
        assert_eq!(found, before, "gpu {gpu}: a failed detection leaves the contacts alone");
    }
}

#[test]
fn record_only_detection_leaves_contacts_and_dispatch_arguments_on_the_gpu() {
    let meshes = [sphere(1.0, Vec3::ZERO), sphere(1.0, Vec3::new(1.2, 0.3, 0.0))];
    let (mut reference, _) = scene_with(true, &meshes);
    let expected = reference.detect(Pairs::Overlapping).unwrap().contacts.len() as u32;
    let (mut s, _) = scene_with(true, &meshes);
    let device = ctx().device();
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    s.record_update(&mut encoder).unwrap();
    s.record_detect(&mut encoder, Pairs::Overlapping).unwrap();
    let bufs = s.contact_buffers().unwrap();
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test staging"),
        size: 32,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(bufs.dispatch_args, 0, &staging, 0, Some(16));
    encoder.copy_buffer_to_buffer(bufs.state, 0, &staging, 16, Some(16));
    ctx().queue().submit([encoder.finish()]);
    staging.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let words: Vec<u32> = bytemuck::pod_collect_to_vec(&staging.slice(..).get_mapped_range().unwrap());
    assert_eq!(words[6], expected, "contact count in the state buffer");
    assert_eq!(
        &words[..4],
        &raycontact::internals::cpu::contact_args(expected, 1 << 16),
        "dispatch arguments"
    );
    assert_eq!(words[0], expected.div_ceil(raycontact::internals::layout::WG_SIZE));
}

#[test]
fn a_volumetric_body_through_itself_is_found_by_its_self_pair() {
    // Hermann 2008 §3.3: one body made of two interpenetrating spheres. Its self pair finds the
    // contacts that the two spheres as separate bodies find (the inward ray hits the body's
    // inward surface twice); a sphere or a torus alone finds none.
    let (a, b) = (sphere(1.0, Vec3::ZERO), sphere(1.0, Vec3::new(1.5, 0.2, 0.1)));
    let offset = a.positions.len() as u32;
    let mut merged = a.clone();
    merged.positions.extend(&b.positions);
    merged.triangles.extend(b.triangles.iter().map(|t| t.map(|i| i + offset)));
    let (two, _) = detect_both(&[a.clone(), b.clone()]);
    let expected: Vec<u32> =
        two.iter().map(|c| c.source_vertex + if c.source_body.index() == 1 { offset } else { 0 }).collect();
    for gpu in [true, false] {
        let (mut s, ids) = scene_with(gpu, &[merged.clone()]);
        assert!(
            s.detect(Pairs::Overlapping).unwrap().contacts.is_empty(),
            "volumetric self pairs are opt-in"
        );
        s.set_self_collision(raycontact::SelfCollision::All);
        let found = s.detect(Pairs::Overlapping).unwrap().contacts;
        let listed = s.detect(Pairs::List(&[(ids[0], ids[0])])).unwrap().contacts;
        assert_eq!(found, listed);
        let got: Vec<u32> = found.iter().map(|c| c.source_vertex).collect();
        let mut want = expected.clone();
        want.sort();
        assert_eq!(got, want, "self contacts (gpu: {gpu})");
        for (c, d) in found.iter().zip(&two) {
            assert_eq!(
                c.target_triangle - if d.target_body.index() == 1 { a.triangles.len() as u32 } else { 0 },
                d.target_triangle
            );
            assert!((c.depth - d.depth).abs() < 1e-5 && c.is_collision());
        }
        let torus = meshes::torus(1.0, 0.3, 48, 24);
        let (mut s, ids) = scene_with(gpu, &[torus]);
        assert!(s.detect(Pairs::List(&[(ids[0], ids[0])])).unwrap().contacts.is_empty());
    }
}

#[test]
fn ray_sources_list_the_vertices_within_reach_of_the_other_box() {
    let meshes = [
        sphere(1.0, Vec3::ZERO),
        sphere(1.0, Vec3::new(1.5, 0.1, 0.0)),
        sphere(0.5, Vec3::new(5.0, 0.0, 0.0)),
    ];
    let (mut s, ids) = scene_with(true, &meshes);
    let list = [(ids[0], ids[1]), (ids[0], ids[2]), (ids[1], ids[1])];
    s.detect(Pairs::List(&list)).unwrap();
    let (gpu, found) = s.ray_sources().unwrap();
    assert_eq!(gpu.len(), found as usize);
    let frame = s.frame_data().unwrap();
    let positions: Vec<Vec3> = meshes.iter().flat_map(|m| m.positions.iter().copied()).collect();
    let pairs: Vec<raycontact::internals::layout::BodyPair> = [(0, 1), (0, 2), (1, 1)]
        .map(|(a, b)| raycontact::internals::layout::BodyPair { a, b, prediction: 0.0, pad: 0 })
        .to_vec();
    let mut cpu = raycontact::internals::cpu::ray_sources(s.packing(), &frame.body_state, &positions, &pairs);
    cpu.sort_unstable();
    assert_eq!(gpu, cpu, "the GPU's list is the CPU twin's");
    // Far apart: nothing listed for (0, 2) either way; a self pair lists every vertex once.
    assert!(gpu.iter().all(|[k, _]| *k != 2 && *k != 3));
    assert_eq!(gpu.iter().filter(|[k, _]| *k == 4).count(), meshes[1].positions.len());
    // Between the spheres, only the vertices inside the other's box: fewer than half of them.
    let listed = gpu.iter().filter(|[k, _]| *k == 0).count();
    assert!(listed > 0 && listed < meshes[0].positions.len() / 2, "{listed} listed");
}

#[test]
fn more_sources_than_the_list_holds_grow_it_and_find_every_contact() {
    // Eight spheres around one point: most vertices are sources of all seven pairs, more than
    // the list's first capacity (four per vertex) where the contact capacity leaves no budget
    // for more (`overlapping_sources`). The detection grows it and runs the rays again.
    let meshes: Vec<TriMesh> = (0..8)
        .map(|i| {
            meshes::icosphere(0.5, 2).transformed(Affine3A::from_translation(Vec3::new(
                0.01 * i as f32,
                0.0,
                0.004 * i as f32,
            )))
        })
        .collect();
    let (mut g, _) = scene_with(true, &meshes);
    let (mut c, _) = scene_with(false, &meshes);
    for s in [&mut g, &mut c] {
        s.set_contact_capacity(64);
    }
    let gc = g.detect(Pairs::Overlapping).unwrap();
    let cc = c.detect(Pairs::Overlapping).unwrap();
    let (_, found) = g.ray_sources().unwrap();
    let vertices: usize = meshes.iter().map(|m| m.positions.len()).sum();
    assert!(found as usize > 4 * vertices, "{found} sources for {vertices} vertices");
    assert_eq!(gc.pairs, 28);
    assert_same("eight spheres", &gc.contacts, &cc.contacts);
    // The next frame fits at once and allocates nothing.
    assert_eq!(g.detect(Pairs::Overlapping).unwrap().stats.buffers_allocated, 0);
}

/// With room in the budget, the source list holds every source the overlapping pairs can list
/// from the first detection: seven balls gathering to one point, more of them in reach of each
/// other frame after frame until most vertices are sources of six pairs, never grow it (it held
/// four entries a vertex, and grew at three).
#[test]
fn the_source_list_holds_what_the_overlapping_pairs_can_list() {
    let ball = meshes::icosphere(0.5, 2);
    let n = 7;
    let start = |i: usize| Vec3::new((i as f32).cos(), (i as f32).sin(), 0.1 * i as f32) * 2.5;
    let end = |i: usize| Vec3::new(0.013 * i as f32, 0.007 * i as f32, 0.0);
    let at = |i: usize, f: usize| -> Vec<Vec3> {
        let t = f as f32 / 11.0;
        let shift = start(i).lerp(end(i), t);
        ball.positions.iter().map(|p| *p + shift).collect()
    };
    let (mut g, ids) = scene_with(true, &vec![ball.clone(); n]);
    let (mut c, _) = scene_with(false, &vec![ball.clone(); n]);
    let vertices = n * ball.positions.len();
    let mut most = 0;
    for f in 0..12 {
        for (i, &id) in ids.iter().enumerate() {
            g.set_positions(id, &at(i, f)).unwrap();
            c.set_positions(id, &at(i, f)).unwrap();
        }
        let (gc, cc) = (g.detect(Pairs::Overlapping).unwrap(), c.detect(Pairs::Overlapping).unwrap());
        assert_same(&format!("frame {f}"), &gc.contacts, &cc.contacts);
        if f > 0 {
            assert_eq!(gc.stats.buffers_allocated, 0, "frame {f}: buffers created");
        }
        // (Its own readback buffer aside: a debugging read.)
        let (listed, found) = g.ray_sources().unwrap();
        assert_eq!(listed.len(), found as usize, "frame {f}: every source listed");
        most = most.max(found as usize);
    }
    assert!(most > 3 * vertices, "{most} sources at most for {vertices} vertices");
}
