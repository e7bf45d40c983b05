//! A context made on an adapter the caller already has (`GpuContext::with_options_on`): it runs
//! on that adapter with the options' settings, and finds what the shared context finds.

use glam::Vec3;
use raycontact::{BodyKind, ContextOptions, GpuContext, Pairs, Scene, Tuning, meshes};
use raycontact_tests::ctx;

#[test]
fn a_context_on_a_given_adapter_takes_the_options_and_finds_the_same_contacts() {
    let mut options = ContextOptions::from_env();
    let adapter = options.adapter().unwrap();
    let info = adapter.get_info();
    // The other tuning than the adapter kind's, compiled on one thread.
    let default = Tuning::for_device_type(info.device_type);
    let other = if default == Tuning::SOFTWARE { Tuning::GPU } else { Tuning::SOFTWARE };
    options.tuning = Some(other);
    options.pipeline_threads = Some(1);
    // Its adapter choice is not read: a name no adapter has changes nothing.
    options.adapter_name = Some("no such adapter".into());
    let mine = GpuContext::with_options_on(&adapter, &options).unwrap();
    assert_eq!(mine.adapter_info().name, info.name);
    assert_eq!((mine.tuning(), mine.pipeline_threads()), (other, 1));
    assert_eq!(mine.pipelines_created(), ctx().pipelines_created(), "every pipeline, before any frame");
    let a = meshes::torus(1.0, 0.35, 32, 16);
    let b = meshes::icosphere(0.6, 3).transformed(glam::Affine3A::from_translation(Vec3::new(1.0, 0.0, 0.0)));
    let contacts = |c: &GpuContext| {
        let mut s = Scene::new(c);
        s.add_body(&a.positions, &a.triangles, BodyKind::Volumetric).unwrap();
        s.add_body(&b.positions, &b.triangles, BodyKind::Volumetric).unwrap();
        s.detect(Pairs::Overlapping).unwrap().contacts
    };
    let (got, want) = (contacts(&mine), contacts(ctx()));
    assert!(!want.is_empty());
    assert_eq!(got, want, "the contacts of the shared context");
}
