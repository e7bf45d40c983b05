//! Warming up kernel groups (`GpuContext::warm_up`): each kernel of the groups asked for is
//! warmed up once, and each feature dispatches only the kernels of its group, so that warming
//! up the groups of the features an application uses leaves no kernel for a frame to compile.

use glam::{Affine3A, Vec3};
use raycontact::internals::kernels::take_dispatched;
use raycontact::meshes;
use raycontact::{
    BodyKind, GpuContext, GpuRadixSort, IntersectionMode, Iterative, KernelGroups, Pairs, Ray, Response,
    Scene, SelfCollision, WalkOptions,
};
use raycontact_tests::{default_limits_context, rng};

/// A context of its own (the shared one's warm-ups and dispatches are every test's).
fn own_context() -> GpuContext {
    default_limits_context().expect("a GPU context")
}

/// The kernels warmed up, by name.
fn warmed(ctx: &GpuContext) -> Vec<&'static str> {
    ctx.pipeline_times().iter().filter(|t| t.warm_up.is_some()).map(|t| t.kernel).collect()
}

#[test]
fn warm_up_runs_each_kernel_of_its_groups_once() {
    let ctx = own_context();
    assert!(warmed(&ctx).is_empty(), "a context from a device warms nothing up by itself");
    let detection = KernelGroups::DETECTION.kernel_names();
    assert!(detection.contains(&"narrow_phase") && !detection.contains(&"walk_contacts"));
    let done = ctx.warm_up(KernelGroups::DETECTION).unwrap();
    assert_eq!(done.kernels, detection.len());
    assert_eq!(warmed(&ctx), detection);
    assert_eq!(ctx.warm_up(KernelGroups::DETECTION).unwrap().kernels, 0, "warmed up already");
    // `contact_args` is the detection's too: the walks add only theirs.
    let walking = KernelGroups::DETECTION | KernelGroups::ITERATIVE;
    assert_eq!(ctx.warm_up(walking).unwrap().kernels, walking.kernel_names().len() - detection.len());
    assert_eq!(warmed(&ctx), walking.kernel_names());
    let rest = ctx.warm_up(KernelGroups::ALL).unwrap();
    assert_eq!(rest.kernels, ctx.pipelines_created() - walking.kernel_names().len());
    assert_eq!(warmed(&ctx).len(), ctx.pipelines_created(), "every kernel warmed up");
    assert_eq!(KernelGroups::ALL.kernel_names().len(), ctx.pipelines_created());
    assert_eq!(ctx.warm_up(KernelGroups::NONE).unwrap().kernels, 0);
}

/// The kernels dispatched since the last call, checked to be kernels of `groups`; their names.
fn only(what: &str, ctx: &GpuContext, groups: KernelGroups) -> Vec<&'static str> {
    let names: Vec<&'static str> = take_dispatched(ctx).iter().map(|k| k.name()).collect();
    let allowed = groups.kernel_names();
    for n in &names {
        assert!(allowed.contains(n), "{what} dispatched {n}, which is not of {groups:?} ({allowed:?})");
    }
    names
}

#[test]
fn each_feature_dispatches_only_the_kernels_of_its_group() {
    let ctx = own_context();
    let mut s = Scene::new(&ctx);
    s.set_prediction_distance(0.05).unwrap();
    s.set_self_collision(SelfCollision::All);
    let a = meshes::torus(1.0, 0.3, 40, 20);
    let b = a.transformed(Affine3A::from_rotation_translation(
        glam::Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        Vec3::new(1.0, 0.0, 0.0),
    ));
    let sheet = meshes::grid_sheet(2.0, 2.0, 24, 24)
        .transformed(Affine3A::from_translation(Vec3::new(0.2, 0.1, 0.29)));
    // A body of more than one sort tile of triangles too, so that the sort scatters by passes.
    let big =
        meshes::torus(1.0, 0.3, 160, 40).transformed(Affine3A::from_translation(Vec3::new(-1.0, 0.0, 0.2)));
    let ids: Vec<_> = [(&a, BodyKind::Volumetric), (&b, BodyKind::Volumetric), (&big, BodyKind::Volumetric)]
        .into_iter()
        .chain([(&sheet, BodyKind::Cloth { half_thickness: 0.02 })])
        .map(|(m, k)| s.add_body(&m.positions, &m.triangles, k).unwrap())
        .collect();
    let moved: Vec<Vec3> = b.positions.iter().map(|p| *p + Vec3::new(-0.01, 0.004, 0.002)).collect();
    take_dispatched(&ctx);

    let found = s.detect(Pairs::Overlapping).unwrap();
    assert!(found.contacts.len() > 100, "{} contacts", found.contacts.len());
    s.set_positions(ids[1], &moved).unwrap();
    s.update().unwrap();
    let full = only("a full detection and an update", &ctx, KernelGroups::DETECTION);
    assert!(full.contains(&"narrow_phase") && full.contains(&"radix_scatter"), "{full:?}");

    s.set_iterative(Some(Iterative::new(0.2))).unwrap();
    for f in 0..3 {
        let step: Vec<Vec3> = moved.iter().map(|p| *p + Vec3::X * 0.001 * f as f32).collect();
        s.set_positions(ids[1], &step).unwrap();
        s.detect(Pairs::Overlapping).unwrap();
    }
    let walking = only("iterative detection", &ctx, KernelGroups::DETECTION | KernelGroups::ITERATIVE);
    assert!(walking.contains(&"walk_contacts"), "{walking:?}");
    s.set_iterative(None).unwrap();

    s.set_intersections(IntersectionMode::Full);
    s.detect(Pairs::Overlapping).unwrap();
    let crossing =
        only("the intersection stages", &ctx, KernelGroups::DETECTION | KernelGroups::INTERSECTIONS);
    assert!(crossing.contains(&"crossings") && crossing.contains(&"untangle_contacts"), "{crossing:?}");
    s.set_intersections(IntersectionMode::Off);

    s.detect(Pairs::Overlapping).unwrap();
    take_dispatched(&ctx);
    s.set_response(Response::default()).unwrap();
    assert!(s.contact_forces().unwrap().contacts > 0);
    let response = only("the contact response", &ctx, KernelGroups::RESPONSE);
    assert!(response.contains(&"response"), "{response:?}");

    let rays: Vec<Ray> = (0..64).map(|i| Ray::new(Vec3::new(0.02 * i as f32, 0.1, 3.0), -Vec3::Z)).collect();
    let first = s.cast_rays(ids[0], &rays).unwrap();
    s.cast_rays_anyhit(ids[0], &rays).unwrap();
    s.cast_rays_all(ids[0], &rays, 4).unwrap();
    let starts: Vec<u32> = first.iter().map(|h| h.triangle).collect();
    s.walk(ids[0], &rays, &starts, &WalkOptions::default()).unwrap();
    let queries = only("the ray queries", &ctx, KernelGroups::RAY_QUERIES);
    assert_eq!(queries, KernelGroups::RAY_QUERIES.kernel_names(), "every query ran");

    let mut sort = GpuRadixSort::new(&ctx, 1 << 16);
    let mut r = rng(7);
    for n in [100, 50_000] {
        let keys: Vec<u32> = (0..n).map(|_| rand::Rng::random(&mut r)).collect();
        let values: Vec<u32> = (0..n as u32).collect();
        sort.sort(&keys, &values).unwrap();
    }
    only("the radix sort", &ctx, KernelGroups::SORT);
}

/// A scene warms up what its detections run as it is set: the detection, the walks once it
/// walks, the intersection stages once they are on; a CPU scene nothing.
#[test]
fn a_scene_warms_up_the_groups_its_settings_run() {
    let ctx = own_context();
    let mut s = Scene::new(&ctx);
    assert_eq!(s.warm_up().unwrap().kernels, KernelGroups::DETECTION.kernel_names().len());
    s.set_iterative(Some(Iterative::new(0.2))).unwrap();
    s.set_intersections(IntersectionMode::Crossings);
    let all = KernelGroups::DETECTION | KernelGroups::ITERATIVE | KernelGroups::INTERSECTIONS;
    assert_eq!(
        s.warm_up().unwrap().kernels,
        all.kernel_names().len() - KernelGroups::DETECTION.kernel_names().len()
    );
    assert_eq!(warmed(&ctx), all.kernel_names());
    assert_eq!(Scene::new_cpu(Some(1)).unwrap().warm_up().unwrap().kernels, 0);
}
