//! Shared helpers of raycontact's integration tests: one GPU context for the whole run, on a
//! device created with WebGPU's default limits and no features (a missing adapter fails the test
//! that asks for it, with the installation hint), seeded random data, the shipped meshes, and
//! contact lists compared as multisets.

pub mod intersect;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use glam::Vec3;
use rand::{Rng, SeedableRng};
use raycontact::meshes::{self, TriMesh};
use raycontact::wgpu;
use raycontact::{Contact, ContactFlags, ContextOptions, GpuContext, Tuning};

/// The GPU context shared by every test: [`default_limits_context`]. Panics (failing the test,
/// never skipping it) when no adapter is found, with raycontact's message on how to get one.
pub fn ctx() -> &'static GpuContext {
    static CTX: OnceLock<GpuContext> = OnceLock::new();
    CTX.get_or_init(|| match default_limits_context() {
        Ok(c) => {
            eprintln!(
                "raycontact tests on adapter {:?} ({:?}), WebGPU's default limits",
                c.adapter_name(),
                c.adapter_info().backend
            );
            c
        }
        Err(e) => panic!("raycontact's GPU tests need an adapter: {e}"),
    })
}

/// A context on the adapter that `WGPU_BACKEND` / `WGPU_ADAPTER_NAME` choose, through
/// [`GpuContext::from_device`] on a device created with `wgpu::Limits::default()` (WebGPU's
/// defaults: 8 storage buffers per stage, 16 KiB of workgroup memory) and no features, as a
/// browser or a cautious application would create it.
pub fn default_limits_context() -> raycontact::Result<GpuContext> {
    let adapter = ContextOptions::from_env().adapter()?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("raycontact tests (WebGPU default limits)"),
        required_features: wgpu::Features::empty(),
        required_limits: wgpu::Limits::default(),
        ..Default::default()
    }))
    .map_err(|source| raycontact::Error::RequestDevice { adapter: adapter.get_info().name, source })?;
    GpuContext::from_device(device, queue, adapter.get_info())
}

/// A second GPU context, on the same kind of device as [`ctx`], whose kernels are built with the
/// other [`Tuning`] than the adapter's default (one triangle per invocation on a software adapter,
/// sixteen on a GPU), but for the child pairs, which it switches the other way from the default
/// (both tunings keep them), so that tests check both tunings and both walks (through the
/// compact child pairs and through the children's own nodes) against the CPU twins.
pub fn other_tuning_ctx() -> &'static GpuContext {
    static CTX: OnceLock<GpuContext> = OnceLock::new();
    CTX.get_or_init(|| {
        let mine = ctx().tuning();
        let other = if mine == Tuning::SOFTWARE { Tuning::GPU } else { Tuning::SOFTWARE };
        let other = Tuning { child_pairs: !mine.child_pairs, ..other };
        let options = ContextOptions { tuning: Some(other), ..ContextOptions::from_env() };
        let adapter = options.adapter().expect("the adapter of the shared context");
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("raycontact tests (other tuning)"),
            required_features: wgpu::Features::empty(),
            required_limits: wgpu::Limits::default(),
            ..Default::default()
        }))
        .expect("a device with WebGPU's default limits");
        GpuContext::from_device_with(device, queue, adapter.get_info(), &options).expect("a context")
    })
}

/// A seeded random number generator.
pub fn rng(seed: u64) -> rand_pcg::Pcg64 {
    rand_pcg::Pcg64::seed_from_u64(seed)
}

/// A uniformly random unit vector.
pub fn random_unit(rng: &mut impl Rng) -> Vec3 {
    loop {
        let v =
            Vec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
        let l = v.length_squared();
        if l > 1e-4 && l <= 1.0 {
            return v / l.sqrt();
        }
    }
}

/// `2^log2` nested triangles stacked in z around one vertical line (triangle t at z = t * 1e-5,
/// its half-width 1 + (t mod 1000) * 1e-3): a BVH 15 to 20 levels deep whose every box contains
/// the line, so that a nearer-first walk from below pushes a farther child at every level down
/// to the bottom triangle (19 levels at 2^18) and overflows the short stack.
pub fn stacked_triangles(log2: u32) -> TriMesh {
    let mut mesh = TriMesh::default();
    for t in 0..(1u32 << log2) {
        let s = 1.0 + (t % 1000) as f32 * 1e-3;
        let z = t as f32 * 1e-5;
        mesh.positions.extend([Vec3::new(-s, -s, z), Vec3::new(s, -s, z), Vec3::new(0.0, 2.0 * s, z)]);
        mesh.triangles.push([3 * t, 3 * t + 1, 3 * t + 2]);
    }
    mesh
}

/// A coarse cloth sheet (`cols` x `rows` cells of side `h`, so that the triangles beside a
/// vertex's own lie beyond the reach: its self pair asks `may_reach`) folded back over itself
/// at column `fold`, the upper layer `gap` above the lower one and shifted a third of a cell.
pub fn folded_sheet(cols: u32, rows: u32, fold: u32, h: f32, gap: f32) -> TriMesh {
    let mut positions = Vec::new();
    for j in 0..=rows {
        for i in 0..=cols {
            let (x, y) = (i as f32 * h, j as f32 * h);
            positions.push(if i <= fold {
                Vec3::new(x, y, 0.003 * (9.0 * x + 7.0 * y).sin())
            } else {
                let back = (2 * fold - i) as f32 * h + h / 3.0;
                Vec3::new(back, y + 0.01, gap + 0.003 * (8.0 * back + 5.0 * y).sin())
            });
        }
    }
    let at = |i: u32, j: u32| j * (cols + 1) + i;
    let mut triangles = Vec::new();
    for j in 0..rows {
        for i in 0..cols {
            triangles.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
            triangles.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
        }
    }
    TriMesh { positions, triangles }
}

/// The Stanford bunny shipped in `assets/bunny.obj`.
pub fn bunny() -> TriMesh {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/bunny.obj");
    meshes::load_mesh(std::path::Path::new(path)).expect("assets/bunny.obj loads")
}

/// A contact's identity in comparisons: (source body slot, source vertex, target body slot,
/// [`ContactFlags::OUTWARD_RAY`] bit). One detection over distinct pairs finds at most one
/// contact per key.
pub type ContactKey = (u32, u32, u32, u32);

/// The key of a contact.
pub fn contact_key(c: &Contact) -> ContactKey {
    (
        c.source_body.index(),
        c.source_vertex,
        c.target_body.index(),
        c.flags.bits() & ContactFlags::OUTWARD_RAY.bits(),
    )
}

/// Contacts grouped by key, each group in input order: a multiset, so that a duplicate
/// contact makes a group of two instead of vanishing into a map entry.
pub fn grouped(cs: &[Contact]) -> BTreeMap<ContactKey, Vec<&Contact>> {
    let mut out: BTreeMap<ContactKey, Vec<&Contact>> = BTreeMap::new();
    for c in cs {
        out.entry(contact_key(c)).or_default().push(c);
    }
    out
}

/// Panics when a key occurs more than once in `cs` (`what` names the detection).
pub fn assert_unique_keys(what: &str, cs: &[Contact]) {
    let twice: Vec<_> = grouped(cs).into_iter().filter(|(_, g)| g.len() > 1).collect();
    assert!(twice.is_empty(), "{what}: {} keys found more than once: {twice:?}", twice.len());
}

/// Keys with the number of times one list holds them more often than the other.
pub type Surplus = Vec<(ContactKey, usize)>;

/// The multiset difference of two contact lists by key: (keys counted more often in `a`, in
/// `b`), each with the surplus count.
pub fn key_surplus(a: &[Contact], b: &[Contact]) -> (Surplus, Surplus) {
    let (ga, gb) = (grouped(a), grouped(b));
    let count = |g: &BTreeMap<ContactKey, Vec<&Contact>>, k: &ContactKey| g.get(k).map_or(0, Vec::len);
    let keys: std::collections::BTreeSet<ContactKey> = ga.keys().chain(gb.keys()).copied().collect();
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    for k in keys {
        let (x, y) = (count(&ga, &k), count(&gb, &k));
        if x > y {
            only_a.push((k, x - y));
        } else if y > x {
            only_b.push((k, y - x));
        }
    }
    (only_a, only_b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use raycontact::{BodyKind, Scene};

    fn contact(scene: &mut Scene, vertex: u32, flags: ContactFlags) -> Contact {
        let m = meshes::icosphere(1.0, 0);
        let ids: Vec<_> = (0..2)
            .map(|_| scene.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap())
            .collect();
        Contact {
            source_body: ids[0],
            source_vertex: vertex,
            target_body: ids[1],
            target_triangle: 0,
            barycentric: glam::Vec2::ZERO,
            source_point: Vec3::ZERO,
            target_point: Vec3::ZERO,
            normal: Vec3::Z,
            depth: 0.0,
            ray_length: 0.0,
            weight: 1.0,
            flags,
        }
    }

    #[test]
    fn a_duplicate_contact_counts_twice() {
        let mut s = Scene::new_cpu(Some(1)).unwrap();
        let c = contact(&mut s, 3, ContactFlags::COLLISION);
        let outward = Contact { flags: ContactFlags::OUTWARD_RAY, ..c };
        assert_eq!(key_surplus(&[c, c], &[c]), (vec![(contact_key(&c), 1)], vec![]));
        assert_eq!(key_surplus(&[c, outward], &[outward, c]), (vec![], vec![]));
        assert_eq!(grouped(&[c, outward, c]).len(), 2);
        assert_unique_keys("distinct", &[c, outward]);
        assert!(std::panic::catch_unwind(|| assert_unique_keys("twice", &[c, c])).is_err());
    }
}
