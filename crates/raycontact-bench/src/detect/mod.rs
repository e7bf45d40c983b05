//! `raycontact-bench detect`: one detection step between two mesh files, written as JSON.
//!
//! `raycontact-bench detect A B` loads two meshes (`.obj`, `.off`, `.ply` or `.stl`), welds
//! duplicate vertices, applies an optional per-body transform (translation, axis-angle rotation,
//! uniform scale), adds both to a [`Scene`] (on the GPU adapter, or on the CPU backend with
//! `--cpu`) with the kind given per body, runs one [`Scene::detect`] of the pair (A, B) and writes the result.
//!
//! The output is one pretty-printed JSON document of schema `raycontact.detect/1`: the backend
//! and adapter, the two bodies as loaded, the prediction distance (`--prediction`), the figures of the frame per stage, and every contact
//! with all the fields of [`raycontact::Contact`]. The schema is documented field by field in
//! `docs/detect-json.md`; a change that removes or renames a field, or changes its meaning, bumps
//! the version. Non-finite numbers are written as `null`, so the output is always valid JSON.
//!
//! Errors (unreadable or malformed mesh files, empty meshes, bad option values, no adapter, a GPU
//! error) print one line on stderr naming the file or the option, and exit with code 2.

mod json;

use std::fmt;
use std::path::{Path, PathBuf};

use glam::{Affine3A, Quat, Vec3};
use raycontact::meshes::{self, MeshIoError, TriMesh};
use raycontact::{BodyId, BodyKind, ContextOptions, GpuContext, Pairs, Scene};

use json::{AdapterJson, BodyJson, report};

/// The schema identifier written as the document's `schema` field.
pub const SCHEMA: &str = "raycontact.detect/1";

/// Prefix of every line this command writes on stderr.
const PREFIX: &str = "raycontact-bench detect";

/// One detection step between two mesh files; the contacts as JSON.
///
/// Loads meshes A and B (.obj, .off, .ply or .stl), welds duplicate vertices, transforms each
/// body (scale, then rotation, then translation), runs one ray-traced detection of the pair (A, B)
/// in both directions, on the GPU adapter or on the CPU backend (`--cpu`), and writes a JSON
/// document of schema `raycontact.detect/1` to stdout or to `--out`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct DetectArgs {
    /// Mesh file of body A (.obj, .off, .ply (ASCII or binary) or .stl (ASCII or binary); polygons
    /// are fanned into triangles).
    #[arg(value_name = "A")]
    a: PathBuf,
    /// Mesh file of body B (.obj, .off, .ply or .stl).
    #[arg(value_name = "B")]
    b: PathBuf,
    /// Merge vertices at most this far apart before detection (0 = exact duplicates only).
    /// Triangle soups, where every triangle has its own three vertices, need welding to get
    /// shared vertex normals (STL corners at identical coordinates are merged on reading); the
    /// number of vertices merged is reported on stderr.
    #[arg(long, value_name = "DISTANCE", default_value = "0", allow_hyphen_values = true)]
    weld_tolerance: String,
    /// Translate body A by (x, y, z), applied last.
    #[arg(long, value_name = "X,Y,Z", allow_hyphen_values = true)]
    translate_a: Option<String>,
    /// Rotate body A by `degrees` about the axis (ax, ay, az) (normalised; must not be zero),
    /// applied after the scale.
    #[arg(long, value_name = "AX,AY,AZ,DEGREES", allow_hyphen_values = true)]
    rotate_a: Option<String>,
    /// Scale body A uniformly about the origin by this factor (> 0), applied first.
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    scale_a: Option<String>,
    /// What body A is: `volumetric` (a closed, outward-oriented surface) or
    /// `cloth:<half_thickness>` (a sheet, half-thickness finite and >= 0).
    #[arg(long, value_name = "KIND", default_value = "volumetric")]
    kind_a: String,
    /// Translate body B by (x, y, z), applied last.
    #[arg(long, value_name = "X,Y,Z", allow_hyphen_values = true)]
    translate_b: Option<String>,
    /// Rotate body B by `degrees` about the axis (ax, ay, az) (normalised; must not be zero),
    /// applied after the scale.
    #[arg(long, value_name = "AX,AY,AZ,DEGREES", allow_hyphen_values = true)]
    rotate_b: Option<String>,
    /// Scale body B uniformly about the origin by this factor (> 0), applied first.
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    scale_b: Option<String>,
    /// What body B is: `volumetric` or `cloth:<half_thickness>`.
    #[arg(long, value_name = "KIND", default_value = "volumetric")]
    kind_b: String,
    /// The scene's prediction distance (finite, >= 0; Lehericey et al. 2015): surfaces closer
    /// than this along a vertex's rays, but not in contact, are reported as predictions (flag
    /// `prediction`, depth = minus the gap). 0 (the default) turns predictions off.
    #[arg(long, value_name = "D", default_value = "0", allow_hyphen_values = true)]
    prediction: String,
    /// Run on the CPU backend (the kernels' CPU twins, with rayon) instead of a GPU adapter.
    #[arg(long, conflicts_with = "adapter")]
    cpu: bool,
    /// Pick the first GPU adapter whose name contains this, case-insensitive (default:
    /// WGPU_ADAPTER_NAME, then the default adapter; WGPU_BACKEND limits the backends).
    #[arg(long, value_name = "NAME")]
    adapter: Option<String>,
    /// Write the JSON here instead of stdout (written only when the detection succeeded).
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
}

/// The JSON part of `detect --help`.
const AFTER_HELP: &str = "\
Output (schema \"raycontact.detect/1\", documented field by field in docs/detect-json.md):
  schema           \"raycontact.detect/1\"
  backend          where the detection ran, e.g. \"GPU: llvmpipe (software adapter)\"
  adapter          {name, backend, device_type, driver, driver_info}, null with --cpu
  bodies           [A, B]: name, file, triangles, vertices, welded_vertices, kind,
                   half_thickness, boundary_edges, transform {translation,
                   rotation_axis_angle_degrees, scale}
  prediction_distance  the scene's prediction distance (--prediction)
  pairs_tested     body pairs tested (1), each in both directions
  contact_count    number of contacts
  timings          per stage: stage, gpu_ms, cpu_ms, dispatches, bytes_read, bytes_written
  bytes_read_back  bytes copied from the GPU to the host
  contacts         direction (\"A->B\" or \"B->A\"), source_body, source_vertex, target_body,
                   target_triangle, barycentric [u, v], source_point, target_point, normal,
                   depth, ray_length, weight, flags, flag_names
Non-finite numbers are written as null.

Exit status: 0 on success; 2 on any error (unreadable or malformed mesh, empty mesh, bad option
value, no GPU adapter, GPU error), with a one-line message on stderr.";

/// An error of `detect`: one line for stderr.
#[derive(Debug)]
struct Failure(String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Builds a [`Failure`] from a format string.
macro_rules! fail {
    ($($arg:tt)*) => { Failure(format!($($arg)*)) };
}

/// Runs `detect`; returns the process exit code (0, or 2 after printing the error on stderr).
pub fn run(args: DetectArgs) -> i32 {
    match detect(&args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{PREFIX}: error: {e}");
            2
        }
    }
}

/// The transform of one body, as given on the command line.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Transform {
    /// Applied last.
    translation: Vec3,
    /// Unit rotation axis.
    axis: Vec3,
    /// Rotation angle in degrees.
    degrees: f32,
    /// Uniform scale, applied first.
    scale: f32,
}

impl Transform {
    /// The affine map: scale, then rotation, then translation.
    fn affine(&self) -> Affine3A {
        Affine3A::from_scale_rotation_translation(
            Vec3::splat(self.scale),
            Quat::from_axis_angle(self.axis, self.degrees.to_radians()),
            self.translation,
        )
    }

    /// Whether the transform leaves the mesh unchanged.
    fn is_identity(&self) -> bool {
        self.translation == Vec3::ZERO && self.degrees == 0.0 && self.scale == 1.0
    }
}

/// The options of one body, validated.
#[derive(Debug)]
struct BodySpec<'a> {
    /// "A" or "B".
    name: &'static str,
    /// The mesh file.
    file: &'a Path,
    /// Its transform.
    transform: Transform,
    /// Its kind.
    kind: BodyKind,
}

/// Parses `text` as `N` comma-separated finite numbers for `option`.
fn parse_floats<const N: usize>(option: &str, text: &str, what: &str) -> Result<[f32; N], Failure> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() != N {
        return Err(fail!("{option} `{text}`: expected {what} ({N} comma-separated numbers)"));
    }
    let mut out = [0.0; N];
    for (slot, part) in out.iter_mut().zip(&parts) {
        let value: f32 = part
            .parse()
            .map_err(|_| fail!("{option} `{text}`: `{part}` is not a number (expected {what})"))?;
        if !value.is_finite() {
            return Err(fail!("{option} `{text}`: `{part}` is not finite"));
        }
        *slot = value;
    }
    Ok(out)
}

/// Parses the transform options of one body (`suffix` is "a" or "b").
fn parse_transform(
    suffix: &str,
    translate: Option<&str>,
    rotate: Option<&str>,
    scale: Option<&str>,
) -> Result<Transform, Failure> {
    let mut t = Transform { translation: Vec3::ZERO, axis: Vec3::Z, degrees: 0.0, scale: 1.0 };
    if let Some(text) = translate {
        t.translation = Vec3::from_array(parse_floats::<3>(&format!("--translate-{suffix}"), text, "x,y,z")?);
    }
    if let Some(text) = rotate {
        let option = format!("--rotate-{suffix}");
        let [ax, ay, az, degrees] = parse_floats::<4>(&option, text, "ax,ay,az,degrees")?;
        t.axis = Vec3::new(ax, ay, az).try_normalize().ok_or_else(|| {
            fail!("{option} `{text}`: the rotation axis ({ax}, {ay}, {az}) must not be zero")
        })?;
        t.degrees = degrees;
    }
    if let Some(text) = scale {
        let option = format!("--scale-{suffix}");
        let [s] = parse_floats::<1>(&option, text, "a scale factor")?;
        if s <= 0.0 {
            return Err(fail!("{option} `{text}`: the scale must be > 0"));
        }
        t.scale = s;
    }
    Ok(t)
}

/// Parses `volumetric` or `cloth:<half_thickness>` for `option`.
fn parse_kind(option: &str, text: &str) -> Result<BodyKind, Failure> {
    let lower = text.trim().to_ascii_lowercase();
    if lower == "volumetric" {
        return Ok(BodyKind::Volumetric);
    }
    let Some(h) = lower.strip_prefix("cloth:") else {
        return Err(fail!("{option} `{text}`: expected `volumetric` or `cloth:<half_thickness>`"));
    };
    let half_thickness: f32 = h
        .trim()
        .parse()
        .map_err(|_| fail!("{option} `{text}`: the cloth half-thickness `{h}` is not a number"))?;
    if !half_thickness.is_finite() || half_thickness < 0.0 {
        return Err(fail!("{option} `{text}`: the cloth half-thickness must be finite and >= 0"));
    }
    Ok(BodyKind::Cloth { half_thickness })
}

/// Parses `--prediction`: a finite distance >= 0.
fn parse_prediction(text: &str) -> Result<f32, Failure> {
    let [d] = parse_floats::<1>("--prediction", text, "a distance")?;
    if d < 0.0 {
        return Err(fail!("--prediction `{text}`: the prediction distance must be finite and >= 0"));
    }
    Ok(d)
}

/// Loads, welds and transforms one body's mesh, with the warnings and notes on stderr. Returns
/// the mesh, the number of vertices merged by welding and its boundary edge count.
fn prepare(spec: &BodySpec<'_>, tolerance: f32) -> Result<(TriMesh, usize, usize), Failure> {
    let (name, file) = (spec.name, spec.file.display());
    let mesh = meshes::load_mesh(spec.file).map_err(|e| match e {
        // These name the file already.
        MeshIoError::Io { .. } | MeshIoError::UnsupportedFormat { .. } => fail!("mesh {name}: {e}"),
        MeshIoError::EmptyMesh => fail!("mesh {name} `{file}`: the mesh has no triangles"),
        other => fail!("mesh {name} `{file}`: {other}"),
    })?;
    let (welded, merged) = mesh.weld(tolerance);
    if merged > 0 {
        eprintln!(
            "{PREFIX}: mesh {name} `{file}`: welded {merged} vertices (tolerance {tolerance}): {} -> {} \
             vertices",
            mesh.positions.len(),
            welded.positions.len()
        );
    }
    if welded.triangles.is_empty() {
        return Err(fail!(
            "mesh {name} `{file}`: no triangles left after welding with tolerance {tolerance} (all \
             {} collapsed)",
            mesh.triangles.len()
        ));
    }
    let mesh =
        if spec.transform.is_identity() { welded } else { welded.transformed(spec.transform.affine()) };
    let boundary = mesh.boundary_edge_count();
    if boundary > 0 && spec.kind == BodyKind::Volumetric {
        let option = format!("--kind-{}", spec.name.to_ascii_lowercase());
        eprintln!(
            "{PREFIX}: warning: mesh {name} `{file}` is declared volumetric but is not closed: {boundary} \
             boundary edges (its contacts may be wrong; use {option} cloth:<half_thickness> for a sheet)"
        );
    }
    Ok((mesh, merged, boundary))
}

/// The whole command; errors are one line for stderr.
fn detect(args: &DetectArgs) -> Result<(), Failure> {
    // Every option first, so that a bad value fails before any work.
    let [tolerance] = parse_floats::<1>("--weld-tolerance", &args.weld_tolerance, "a distance")?;
    if tolerance < 0.0 {
        return Err(fail!("--weld-tolerance `{}`: the tolerance must be >= 0", args.weld_tolerance));
    }
    let prediction = parse_prediction(&args.prediction)?;
    let specs = [
        BodySpec {
            name: "A",
            file: &args.a,
            transform: parse_transform(
                "a",
                args.translate_a.as_deref(),
                args.rotate_a.as_deref(),
                args.scale_a.as_deref(),
            )?,
            kind: parse_kind("--kind-a", &args.kind_a)?,
        },
        BodySpec {
            name: "B",
            file: &args.b,
            transform: parse_transform(
                "b",
                args.translate_b.as_deref(),
                args.rotate_b.as_deref(),
                args.scale_b.as_deref(),
            )?,
            kind: parse_kind("--kind-b", &args.kind_b)?,
        },
    ];

    let mut prepared = Vec::with_capacity(2);
    for spec in &specs {
        prepared.push(prepare(spec, tolerance)?);
    }

    let (mut scene, adapter) = if args.cpu {
        (Scene::new_cpu(None).map_err(|e| fail!("CPU backend: {e}"))?, None)
    } else {
        let mut options = ContextOptions::from_env();
        if let Some(name) = &args.adapter {
            options.adapter_name = Some(name.clone());
        }
        let ctx = GpuContext::with_options(options).map_err(|e| fail!("{e}"))?;
        let cache = ctx.pipeline_cache();
        eprintln!(
            "{PREFIX}: {} pipelines created in {:.3} s on {} thread(s); pipeline cache: {}",
            ctx.pipelines_created(),
            ctx.pipeline_creation_time().as_secs_f64(),
            ctx.pipeline_threads(),
            match &cache.path {
                Some(p) if cache.loaded => format!("{} (loaded)", p.display()),
                Some(p) if cache.stored_bytes > 0 =>
                    format!("{} (written, {} bytes)", p.display(), cache.stored_bytes),
                Some(p) => format!("{} (unchanged)", p.display()),
                None => "none".to_string(),
            }
        );
        let info = ctx.adapter_info();
        let adapter = AdapterJson {
            name: info.name.clone(),
            backend: info.backend.to_str().to_string(),
            device_type: format!("{:?}", info.device_type),
            driver: info.driver.clone(),
            driver_info: info.driver_info.clone(),
        };
        (Scene::new(&ctx), Some(adapter))
    };

    scene
        .set_prediction_distance(prediction)
        .map_err(|e| fail!("--prediction `{}`: {e}", args.prediction))?;
    let mut ids: Vec<BodyId> = Vec::with_capacity(2);
    for (spec, (mesh, _, _)) in specs.iter().zip(&prepared) {
        let id = scene
            .add_body(&mesh.positions, &mesh.triangles, spec.kind)
            .map_err(|e| fail!("mesh {} `{}`: {e}", spec.name, spec.file.display()))?;
        ids.push(id);
    }
    let start = std::time::Instant::now();
    let found = scene.detect(Pairs::List(&[(ids[0], ids[1])])).map_err(|e| fail!("detection: {e}"))?;
    eprintln!(
        "{PREFIX}: first detection in {:.3} s (on a driver that compiles at the first dispatch, such as lavapipe, this includes compiling the kernels it runs)",
        start.elapsed().as_secs_f64()
    );

    let bodies = specs
        .iter()
        .zip(&prepared)
        .map(|(spec, (mesh, merged, boundary))| BodyJson::new(spec, mesh, *merged, *boundary))
        .collect();
    let report = report(scene.backend().to_string(), adapter, bodies, prediction, &found, &ids);
    let mut text = serde_json::to_string_pretty(&report).map_err(|e| fail!("writing the JSON: {e}"))?;
    text.push('\n');
    match &args.out {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| fail!("--out `{}`: cannot write the JSON: {e}", path.display()))?,
        None => {
            use std::io::Write as _;
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
                .map_err(|e| fail!("cannot write the JSON to stdout: {e}"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_and_reject() {
        let t = parse_transform("a", Some("1, -2,3"), Some("0,0,2,90"), Some("0.5")).unwrap();
        assert_eq!(t.translation, Vec3::new(1.0, -2.0, 3.0));
        assert_eq!(t.axis, Vec3::Z);
        let p = t.affine().transform_point3(Vec3::X);
        assert!((p - Vec3::new(1.0, -1.5, 3.0)).length() < 1e-6, "{p}");
        for (rotate, needle) in [("0,0,0,45", "must not be zero"), ("1,2,3", "4 comma"), ("1,x,0,4", "`x`")] {
            let e = parse_transform("a", None, Some(rotate), None).unwrap_err();
            assert!(e.0.contains("--rotate-a") && e.0.contains(needle), "{e}");
        }
        assert!(parse_transform("b", None, None, Some("0")).unwrap_err().0.contains("--scale-b"));
        assert!(parse_transform("b", None, None, Some("-1")).is_err());
        assert!(parse_transform("b", Some("inf,0,0"), None, None).is_err());
        assert_eq!(parse_kind("--kind-a", "volumetric").unwrap(), BodyKind::Volumetric);
        assert_eq!(parse_kind("--kind-a", "cloth:0.25").unwrap(), BodyKind::Cloth { half_thickness: 0.25 });
        for bad in ["cloth", "cloth:", "cloth:-1", "cloth:nan", "solid"] {
            assert!(parse_kind("--kind-b", bad).unwrap_err().0.contains("--kind-b"), "{bad}");
        }
        assert_eq!(parse_prediction("0.25").unwrap(), 0.25);
        assert_eq!(parse_prediction("0").unwrap(), 0.0);
        for bad in ["-0.1", "nan", "inf", "x", "1,2"] {
            assert!(parse_prediction(bad).unwrap_err().0.contains("--prediction"), "{bad}");
        }
    }
}
