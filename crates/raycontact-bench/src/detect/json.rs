//! The JSON document of `detect` (schema `raycontact.detect/1`, `docs/detect-json.md`): its
//! types, serialised by derive, and the conversion of a detection's result into them.

use glam::Vec3;
use raycontact::ContactFlags;
use raycontact::meshes::TriMesh;
use raycontact::{BodyId, BodyKind, Contact, Contacts};
use serde::Serialize;

use super::{BodySpec, SCHEMA};

/// A finite `f32`, or `None` (written as JSON `null`).
pub(super) fn num(x: f32) -> Option<f32> {
    x.is_finite().then_some(x)
}

/// A vector's components, each finite or `None`.
pub(super) fn vec3(v: Vec3) -> [Option<f32>; 3] {
    v.to_array().map(num)
}

/// Nanoseconds as finite milliseconds, or `None`.
pub(super) fn ms(ns: Option<f64>) -> Option<f64> {
    ns.map(|ns| ns / 1e6).filter(|x| x.is_finite())
}

/// The names of the flags set in `flags`, in bit order.
pub(super) fn flag_names(flags: ContactFlags) -> Vec<&'static str> {
    flags.names().collect()
}

/// Builds the document from the detection's result.
pub(super) fn report(
    backend: String,
    adapter: Option<AdapterJson>,
    bodies: Vec<BodyJson>,
    prediction: f32,
    found: &Contacts,
    ids: &[BodyId],
) -> Report {
    let name = |id: BodyId| {
        if id == ids[0] {
            "A"
        } else if id == ids[1] {
            "B"
        } else {
            "?"
        }
    };
    let timings = found
        .stats
        .stages
        .iter()
        .map(|(stage, s)| TimingJson {
            stage: stage.name(),
            gpu_ms: ms(s.gpu_ns),
            cpu_ms: ms(s.cpu_ns),
            dispatches: s.dispatches,
            bytes_read: s.bytes_read,
            bytes_written: s.bytes_written,
        })
        .collect();
    let contacts: Vec<ContactJson> = found
        .contacts
        .iter()
        .map(|c: &Contact| {
            let (source, target) = (name(c.source_body), name(c.target_body));
            ContactJson {
                direction: format!("{source}->{target}"),
                source_body: source,
                source_vertex: c.source_vertex,
                target_body: target,
                target_triangle: c.target_triangle,
                barycentric: c.barycentric.to_array().map(num),
                source_point: vec3(c.source_point),
                target_point: vec3(c.target_point),
                normal: vec3(c.normal),
                depth: num(c.depth),
                ray_length: num(c.ray_length),
                weight: num(c.weight),
                flags: c.flags.bits(),
                flag_names: flag_names(c.flags),
            }
        })
        .collect();
    Report {
        schema: SCHEMA,
        backend,
        adapter,
        bodies,
        prediction_distance: num(prediction),
        pairs_tested: found.pairs,
        contact_count: contacts.len(),
        timings,
        bytes_read_back: found.stats.bytes_read_back,
        contacts,
    }
}

/// The JSON document (`docs/detect-json.md`).
#[derive(Serialize, Debug)]
pub(super) struct Report {
    /// [`SCHEMA`].
    schema: &'static str,
    /// [`raycontact::Scene::backend`], as text.
    backend: String,
    /// The GPU adapter, `None` on the CPU backend.
    adapter: Option<AdapterJson>,
    /// A, then B.
    bodies: Vec<BodyJson>,
    /// The scene's prediction distance (`--prediction`; 0: no predictions).
    prediction_distance: Option<f32>,
    /// Pairs of bodies tested (each in both directions).
    pairs_tested: u32,
    /// `contacts.len()`.
    contact_count: usize,
    /// Per stage, in frame order.
    timings: Vec<TimingJson>,
    /// Bytes read back to the host.
    bytes_read_back: u64,
    /// The contacts, in the library's order.
    contacts: Vec<ContactJson>,
}

/// The GPU adapter.
#[derive(Serialize, Debug)]
pub(super) struct AdapterJson {
    /// The adapter's name.
    pub(super) name: String,
    /// The wgpu backend (`vulkan`, `metal`, `dx12`, `gl`, ...).
    pub(super) backend: String,
    /// wgpu's device type (`DiscreteGpu`, `IntegratedGpu`, `VirtualGpu`, `Cpu`, `Other`).
    pub(super) device_type: String,
    /// The driver's name.
    pub(super) driver: String,
    /// The driver's version text.
    pub(super) driver_info: String,
}

/// A body as loaded, welded and transformed.
#[derive(Serialize, Debug)]
pub(super) struct BodyJson {
    /// "A" or "B".
    name: &'static str,
    /// The mesh file, as given.
    file: String,
    /// Triangles after welding.
    triangles: usize,
    /// Vertices after welding.
    vertices: usize,
    /// Vertices merged away by welding.
    welded_vertices: usize,
    /// "volumetric" or "cloth".
    kind: &'static str,
    /// The cloth half-thickness; `None` for a volumetric body.
    half_thickness: Option<f32>,
    /// Edges used by one triangle only (0 for a closed mesh).
    boundary_edges: usize,
    /// The transform applied.
    transform: TransformJson,
}

impl BodyJson {
    /// The entry of one body.
    pub(super) fn new(spec: &BodySpec<'_>, mesh: &TriMesh, merged: usize, boundary: usize) -> Self {
        let (kind, half_thickness) = match spec.kind {
            BodyKind::Volumetric => ("volumetric", None),
            BodyKind::Cloth { half_thickness } => ("cloth", num(half_thickness)),
        };
        let t = spec.transform;
        BodyJson {
            name: spec.name,
            file: spec.file.display().to_string(),
            triangles: mesh.triangles.len(),
            vertices: mesh.positions.len(),
            welded_vertices: merged,
            kind,
            half_thickness,
            boundary_edges: boundary,
            transform: TransformJson {
                translation: vec3(t.translation),
                rotation_axis_angle_degrees: [num(t.axis.x), num(t.axis.y), num(t.axis.z), num(t.degrees)],
                scale: num(t.scale),
            },
        }
    }
}

/// A body's transform: scale, then rotation, then translation.
#[derive(Serialize, Debug)]
pub(super) struct TransformJson {
    /// Applied last.
    translation: [Option<f32>; 3],
    /// Unit axis and angle in degrees.
    rotation_axis_angle_degrees: [Option<f32>; 4],
    /// Uniform scale, applied first.
    scale: Option<f32>,
}

/// The figures of one stage.
#[derive(Serialize, Debug)]
pub(super) struct TimingJson {
    /// [`raycontact::Stage::name`].
    stage: &'static str,
    /// GPU time (timestamp queries), when the adapter has them.
    gpu_ms: Option<f64>,
    /// Host time (the CPU backend's stage time).
    cpu_ms: Option<f64>,
    /// Compute dispatches.
    dispatches: u32,
    /// Bytes of the buffers bound for reading.
    bytes_read: u64,
    /// Bytes of the buffers bound for writing, plus bytes copied or cleared.
    bytes_written: u64,
}

/// One contact.
#[derive(Serialize, Debug)]
pub(super) struct ContactJson {
    /// "A->B" or "B->A": source body to target body.
    direction: String,
    /// "A" or "B".
    source_body: &'static str,
    /// Vertex of the source body the ray starts from.
    source_vertex: u32,
    /// "A" or "B".
    target_body: &'static str,
    /// Triangle of the target body the ray hit.
    target_triangle: u32,
    /// Barycentric weights (u, v) of the hit on the triangle's second and third vertices.
    barycentric: [Option<f32>; 2],
    /// The source vertex's position.
    source_point: [Option<f32>; 3],
    /// The hit point on the target body.
    target_point: [Option<f32>; 3],
    /// Unit direction that pushes the source vertex out of the target body.
    normal: [Option<f32>; 3],
    /// Penetration depth along `normal`.
    depth: Option<f32>,
    /// Length of the ray from the source vertex to the hit.
    ray_length: Option<f32>,
    /// `cos α` between the ray and the hit triangle's normal.
    weight: Option<f32>,
    /// [`ContactFlags`] bits.
    flags: u32,
    /// The names of the bits set in `flags`.
    flag_names: Vec<&'static str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_names_follow_the_bits() {
        assert_eq!(flag_names(ContactFlags::empty()), Vec::<&str>::new());
        assert_eq!(
            flag_names(ContactFlags::COLLISION | ContactFlags::INWARD_RAY | ContactFlags::WALKED),
            ["collision", "inward_ray", "walked"]
        );
    }

    #[test]
    fn non_finite_numbers_become_null() {
        let json = serde_json::to_string(&[num(f32::NAN), num(f32::INFINITY), num(1.5)]).unwrap();
        assert_eq!(json, "[null,null,1.5]");
        assert_eq!(ms(Some(f64::NAN)), None);
        assert_eq!(ms(Some(2e6)), Some(2.0));
    }
}
