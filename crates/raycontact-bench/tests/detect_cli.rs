//! `raycontact-bench detect`, run as a process: the JSON it writes (on the GPU adapter and on
//! the CPU backend), the weld report, the open-mesh warning, and its errors (exit code 2, one
//! line naming the problem, never a panic).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use raycontact::meshes::{TriMesh, grid_sheet, icosphere, write_obj};
use serde_json::Value;

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    /// A fresh directory named after the test.
    fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("raycontact-detect-cli-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// Writes `text` to `name` in the directory; returns its path.
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `mesh` as OFF text, written by hand.
fn write_off(mesh: &TriMesh) -> String {
    let mut out =
        format!("OFF\n# written by detect_cli\n{} {} 0\n", mesh.positions.len(), mesh.triangles.len());
    for p in &mesh.positions {
        writeln!(out, "{} {} {}", p.x, p.y, p.z).unwrap();
    }
    for [a, b, c] in &mesh.triangles {
        writeln!(out, "3 {a} {b} {c}").unwrap();
    }
    out
}

/// `mesh` as an unwelded OBJ triangle soup: every triangle has its own three vertices.
fn write_soup_obj(mesh: &TriMesh) -> String {
    let mut out = String::from("# triangle soup\n");
    for t in &mesh.triangles {
        for &i in t {
            let p = mesh.positions[i as usize];
            writeln!(out, "v {} {} {}", p.x, p.y, p.z).unwrap();
        }
    }
    for k in 0..mesh.triangles.len() {
        writeln!(out, "f {} {} {}", 3 * k + 1, 3 * k + 2, 3 * k + 3).unwrap();
    }
    out
}

/// Runs `raycontact-bench detect` with `args`.
fn detect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_raycontact-bench"))
        .arg("detect")
        .args(args)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("the binary runs")
}

/// Stderr of a run, as text.
fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `detect` expecting success; returns the parsed JSON and stderr.
fn detect_json(args: &[&str]) -> (Value, String) {
    let out = detect(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "detect {args:?} failed:\n{err}");
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{}", String::from_utf8_lossy(&out.stdout)));
    (json, err)
}

/// Runs `detect` expecting exit code 2 and a one-line error containing every needle.
fn expect_error(args: &[&str], needles: &[&str]) {
    let out = detect(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "detect {args:?}: expected exit code 2, stderr:\n{err}");
    assert!(out.stdout.is_empty(), "no JSON on error");
    assert!(!err.contains("panicked"), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(lines.len(), 1, "one error line expected:\n{err}");
    for needle in needles {
        assert!(lines[0].contains(needle), "`{needle}` missing from: {}", lines[0]);
    }
}

/// Checks the document's shape; returns its contacts.
fn check_document(json: &Value) -> &Vec<Value> {
    assert_eq!(json["schema"], "raycontact.detect/1");
    assert!(json["backend"].is_string());
    let contacts = json["contacts"].as_array().expect("contacts");
    assert_eq!(json["contact_count"].as_u64(), Some(contacts.len() as u64));
    assert_eq!(json["pairs_tested"], 1);
    assert!(json["bytes_read_back"].is_u64());
    let timings = json["timings"].as_array().expect("timings");
    assert!(!timings.is_empty());
    for t in timings {
        assert!(t["stage"].is_string() && t["dispatches"].is_u64(), "{t}");
        assert!(t["bytes_read"].is_u64() && t["bytes_written"].is_u64(), "{t}");
        assert!(t["gpu_ms"].is_null() || t["gpu_ms"].is_f64(), "{t}");
        assert!(t["cpu_ms"].is_null() || t["cpu_ms"].is_f64(), "{t}");
    }
    let bodies = json["bodies"].as_array().expect("bodies");
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["name"], "A");
    assert_eq!(bodies[1]["name"], "B");
    for c in contacts {
        let (s, t) = (c["source_body"].as_str().unwrap(), c["target_body"].as_str().unwrap());
        assert_ne!(s, t);
        assert_eq!(c["direction"].as_str().unwrap(), format!("{s}->{t}"));
        assert!(c["source_vertex"].is_u64() && c["target_triangle"].is_u64(), "{c}");
        assert_eq!(c["barycentric"].as_array().unwrap().len(), 2);
        for key in ["source_point", "target_point", "normal"] {
            assert_eq!(c[key].as_array().unwrap().len(), 3, "{key}");
        }
        for key in ["depth", "ray_length", "weight"] {
            assert!(c[key].is_number(), "{key}: {c}");
        }
        let flags = c["flags"].as_u64().unwrap();
        let names: Vec<&str> =
            c["flag_names"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
        assert_eq!(names.contains(&"collision"), flags & 1 != 0, "{c}");
        assert_eq!(names.contains(&"inward_ray"), flags & 4 != 0, "{c}");
        assert_eq!(names.len() as u32, (flags as u32).count_ones(), "{c}");
    }
    contacts
}

/// (source body, source vertex, target body) -> target triangle.
fn contact_set(contacts: &[Value]) -> BTreeMap<(String, u64, String), u64> {
    contacts
        .iter()
        .map(|c| {
            let key = (
                c["source_body"].as_str().unwrap().to_string(),
                c["source_vertex"].as_u64().unwrap(),
                c["target_body"].as_str().unwrap().to_string(),
            );
            (key, c["target_triangle"].as_u64().unwrap())
        })
        .collect()
}

/// Two overlapping spheres (A from an OBJ, B from an OFF, moved by the CLI) on the GPU and on
/// the CPU backend: the same contacts, in both directions.
#[test]
fn overlapping_spheres_gpu_matches_cpu() {
    let dir = TempDir::new("overlap");
    let sphere = icosphere(1.0, 2);
    let a = dir.write("a.obj", &write_obj(&sphere));
    let b = dir.write("b.off", &write_off(&sphere));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let common = [a, b, "--translate-b", "1.5,0,0", "--rotate-b", "0,1,0,30"];

    let out_path = dir.0.join("gpu.json");
    let mut gpu_args = common.to_vec();
    gpu_args.extend(["--out", out_path.to_str().unwrap()]);
    let out = detect(&gpu_args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "--out writes nothing on stdout");
    let gpu: Value = serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap()).unwrap();
    let gpu_contacts = check_document(&gpu);
    assert!(gpu["adapter"]["name"].is_string(), "{}", gpu["adapter"]);
    assert!(gpu["backend"].as_str().unwrap().starts_with("GPU"), "{}", gpu["backend"]);

    let mut cpu_args = common.to_vec();
    cpu_args.push("--cpu");
    let (cpu, _) = detect_json(&cpu_args);
    let cpu_contacts = check_document(&cpu);
    assert!(cpu["adapter"].is_null());
    assert!(cpu["backend"].as_str().unwrap().starts_with("CPU backend"), "{}", cpu["backend"]);

    assert!(!gpu_contacts.is_empty());
    for contacts in [gpu_contacts, cpu_contacts] {
        for dir in ["A->B", "B->A"] {
            assert!(contacts.iter().any(|c| c["direction"] == dir), "no {dir} contact");
        }
    }

    let (g, c) = (contact_set(gpu_contacts), contact_set(cpu_contacts));
    let differing = g.keys().chain(c.keys()).collect::<std::collections::BTreeSet<_>>();
    let differing = differing.into_iter().filter(|k| g.get(*k) != c.get(*k)).count();
    assert!(differing <= 1, "{differing} contacts differ: GPU {} vs CPU {}", g.len(), c.len());

    let body_b = &gpu["bodies"][1];
    assert_eq!(body_b["file"], b);
    assert_eq!(body_b["kind"], "volumetric");
    assert!(body_b["half_thickness"].is_null());
    assert_eq!(body_b["boundary_edges"], 0);
    assert_eq!(body_b["welded_vertices"], 0);
    assert_eq!(body_b["triangles"].as_u64(), Some(sphere.triangles.len() as u64));
    assert_eq!(body_b["vertices"].as_u64(), Some(sphere.positions.len() as u64));
    assert_eq!(body_b["transform"]["translation"], serde_json::json!([1.5, 0.0, 0.0]));
    assert_eq!(body_b["transform"]["rotation_axis_angle_degrees"], serde_json::json!([0.0, 1.0, 0.0, 30.0]));
    assert_eq!(body_b["transform"]["scale"], 1.0);
    // A vertex of A inside B is at most ~0.5 deep.
    for contact in gpu_contacts {
        let depth = contact["depth"].as_f64().unwrap();
        assert!((0.0..0.6).contains(&depth), "{contact}");
    }
}

/// Spheres three radii apart: no contacts (CPU backend and GPU).
#[test]
fn separated_spheres_have_no_contacts() {
    let dir = TempDir::new("separated");
    let a = dir.write("s.obj", &write_obj(&icosphere(1.0, 2)));
    let a = a.to_str().unwrap();
    for backend in [None, Some("--cpu")] {
        let mut args = vec![a, a, "--translate-b", "-3,0,0", "--scale-a", "0.9"];
        args.extend(backend);
        let (json, _) = detect_json(&args);
        assert!(check_document(&json).is_empty(), "{args:?}");
        assert_eq!(json["contact_count"], 0);
    }
}

/// A triangle soup is welded (reported on stderr) into the same sphere.
#[test]
fn triangle_soup_is_welded_and_reported() {
    let dir = TempDir::new("soup");
    let sphere = icosphere(1.0, 2);
    let soup = dir.write("soup.obj", &write_soup_obj(&sphere));
    let a = dir.write("a.obj", &write_obj(&sphere));
    let merged = 3 * sphere.triangles.len() - sphere.positions.len();
    let (json, err) =
        detect_json(&[a.to_str().unwrap(), soup.to_str().unwrap(), "--translate-b", "0,1.5,0", "--cpu"]);
    assert!(err.contains("mesh B") && err.contains("soup.obj"), "{err}");
    assert!(err.contains(&format!("welded {merged} vertices")), "{err}");
    assert!(!err.contains("mesh A"), "nothing to weld in A: {err}");
    let body = &json["bodies"][1];
    assert_eq!(body["welded_vertices"].as_u64(), Some(merged as u64));
    assert_eq!(body["vertices"].as_u64(), Some(sphere.positions.len() as u64));
    assert_eq!(body["boundary_edges"], 0, "welded shut");
    assert!(!check_document(&json).is_empty());
}

/// An open sheet declared volumetric gets a warning naming its boundary edges; as cloth, none.
#[test]
fn open_mesh_declared_volumetric_is_warned_about() {
    let dir = TempDir::new("open");
    let sheet = grid_sheet(2.0, 2.0, 4, 4);
    let boundary = sheet.boundary_edge_count();
    assert_eq!(boundary, 16);
    let a = dir.write("sheet.obj", &write_obj(&sheet));
    let b = dir.write("ball.obj", &write_obj(&icosphere(0.5, 2)));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());

    let (json, err) = detect_json(&[a, b, "--translate-b", "0,0,0.3", "--cpu"]);
    let warning = err.lines().find(|l| l.contains("warning")).unwrap_or_else(|| panic!("no warning:\n{err}"));
    assert!(
        warning.contains("sheet.obj") && warning.contains(&format!("{boundary} boundary edges")),
        "{warning}"
    );
    assert_eq!(json["bodies"][0]["boundary_edges"].as_u64(), Some(boundary as u64));

    let (json, err) = detect_json(&[a, b, "--translate-b", "0,0,0.3", "--kind-a", "cloth:0.01", "--cpu"]);
    assert!(!err.contains("warning"), "{err}");
    assert_eq!(json["bodies"][0]["kind"], "cloth");
    assert_eq!(json["bodies"][0]["half_thickness"], 0.01);
}

/// Two spheres 0.05 apart (A from an OBJ, B from an OFF): no contacts without a prediction
/// distance; with `--prediction 0.2`, predictions in both directions (the outward rays of the
/// facing vertices), each with minus the gap as its depth, on the GPU and on the CPU backend;
/// the distance is in the JSON.
#[test]
fn predictions_appear_with_prediction() {
    let dir = TempDir::new("prediction");
    let sphere = icosphere(1.0, 3);
    let a = dir.write("a.obj", &write_obj(&sphere));
    let b = dir.write("b.off", &write_off(&sphere));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    // The closest vertices (at ±x) are 0.05 apart.
    let common = [a, b, "--translate-b", "2.05,0,0"];

    let (json, _) = detect_json(&[&common[..], &["--cpu"]].concat());
    assert!(check_document(&json).is_empty(), "no contacts without a prediction distance");
    assert_eq!(json["prediction_distance"], 0.0);

    for backend in [None, Some("--cpu")] {
        let mut args = common.to_vec();
        args.extend(["--prediction", "0.2"]);
        args.extend(backend);
        let (json, _) = detect_json(&args);
        assert_eq!(json["prediction_distance"], 0.2, "{args:?}");
        let contacts = check_document(&json);
        for dir in ["A->B", "B->A"] {
            assert!(
                contacts.iter().any(|c| c["direction"] == dir),
                "{args:?}: no {dir} prediction in {contacts:?}"
            );
        }
        for c in contacts {
            assert_eq!(c["flag_names"], serde_json::json!(["prediction", "outward_ray"]), "{args:?}: {c}");
            let depth = c["depth"].as_f64().unwrap();
            assert!((-0.2..0.0).contains(&depth), "{args:?}: a gap within the distance: {c}");
        }
        // The facing vertices (A's at +x, B's at -x) see the gap straight ahead: L is the
        // distance to the plane of a triangle around the other vertex, tilted a little.
        let facing = |body: &str, x: f64| {
            contacts.iter().find(|c| {
                c["source_body"] == body && (c["source_point"][0].as_f64().unwrap() - x).abs() < 1e-5
            })
        };
        for (body, x) in [("A", 1.0), ("B", 1.05)] {
            let c = facing(body, x)
                .unwrap_or_else(|| panic!("{args:?}: no prediction from {body}'s vertex at x = {x}"));
            assert!((-0.05..-0.045).contains(&c["depth"].as_f64().unwrap()), "{args:?}: {c}");
        }
    }
}

/// Bad inputs: exit code 2 and one line naming the file or the option.
#[test]
fn bad_inputs_exit_with_code_2() {
    let dir = TempDir::new("errors");
    let good = dir.write("good.obj", &write_obj(&icosphere(1.0, 1)));
    let empty = dir.write("empty.obj", "# nothing here\nv 0 0 0\n");
    let out_of_range = dir.write("range.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n");
    let bad_off = dir.write("bad.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n");
    let missing = dir.0.join("missing.obj");
    let g = good.to_str().unwrap();

    expect_error(&[missing.to_str().unwrap(), g, "--cpu"], &["mesh A", "missing.obj"]);
    expect_error(&[g, empty.to_str().unwrap(), "--cpu"], &["mesh B", "empty.obj", "no triangles"]);
    expect_error(&[out_of_range.to_str().unwrap(), g, "--cpu"], &["range.obj", "line 4", "out of range"]);
    expect_error(&[g, bad_off.to_str().unwrap(), "--cpu"], &["bad.off", "out of range"]);
    expect_error(&[g, g, "--rotate-a", "0,0,0,45", "--cpu"], &["--rotate-a", "axis", "zero"]);
    expect_error(&[g, g, "--rotate-a", "1,0,45", "--cpu"], &["--rotate-a", "4 comma-separated"]);
    expect_error(&[g, g, "--translate-b", "1,x,0", "--cpu"], &["--translate-b", "`x`"]);
    expect_error(&[g, g, "--scale-b", "0", "--cpu"], &["--scale-b", "> 0"]);
    expect_error(&[g, g, "--scale-a", "-2", "--cpu"], &["--scale-a", "> 0"]);
    expect_error(&[g, g, "--kind-a", "cloth:-1", "--cpu"], &["--kind-a", "half-thickness"]);
    expect_error(&[g, g, "--weld-tolerance", "-1", "--cpu"], &["--weld-tolerance"]);
    expect_error(&[g, g, "--prediction", "-0.5", "--cpu"], &["--prediction", ">= 0"]);
    expect_error(&[g, g, "--prediction", "nan", "--cpu"], &["--prediction", "not finite"]);
    expect_error(&[g, g, "--prediction", "far", "--cpu"], &["--prediction", "`far`"]);
    expect_error(&[g, Path::new("mesh.stl").to_str().unwrap(), "--cpu"], &["mesh B", "mesh.stl"]);
    expect_error(
        &[g, g, "--adapter", "no such adapter anywhere"],
        &["no GPU adapter", "no such adapter anywhere"],
    );
}

/// `detect --help` documents the JSON.
#[test]
fn help_documents_the_schema() {
    let out = detect(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "raycontact.detect/1",
        "docs/detect-json.md",
        "--rotate-a",
        "--kind-b",
        "--weld-tolerance",
        "--prediction",
        "prediction_distance",
    ] {
        assert!(text.contains(needle), "`{needle}` missing from --help:\n{text}");
    }
}
