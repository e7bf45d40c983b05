//! The scene suite, run as a process: every scene for one or two frames at the tiny size, the
//! JSON checked against the `raycontact.bench/6` schema (`suite_cli/schema.rs`, strict: a field
//! missing, of the wrong type or not in the schema fails), GPU and CPU reference contact counts
//! compared frame by frame, the plot, `--cpu`, `--help` and bad options.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use raycontact::meshes::{icosphere, torus, write_obj};
use serde_json::Value;

#[path = "suite_cli/schema.rs"]
mod schema;
use schema::{FULL_IMPLS, IMPLS, OPT_IN_IMPLS, SCENES, T, WALK_SCENES, check, schema};

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    /// A fresh directory named after the test.
    fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("raycontact-suite-cli-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// A path in the directory.
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `raycontact-bench` with `args`.
fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_raycontact-bench"))
        .args(args)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("the binary runs")
}

/// Stdout and stderr of a run, for failure messages.
fn texts(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs the suite with `args` plus `--json`, checks the exit status and the schema, returns the
/// document and the run's output.
fn run_json(dir: &TempDir, args: &[&str]) -> (Value, Output) {
    let json = dir.path("out.json");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--json", json.to_str().unwrap(), "--no-progress"]);
    let out = bench(&all);
    assert!(out.status.success(), "{}", texts(&out));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    if let Err(e) = check(&doc, &schema(), "$") {
        panic!("the JSON does not match raycontact.bench/6: {e}\n{}", texts(&out));
    }
    (doc, out)
}

/// Two small mesh files for the `files` scene.
fn write_files(dir: &TempDir) -> (PathBuf, PathBuf) {
    let a = dir.path("a.obj");
    let b = dir.path("b.obj");
    std::fs::write(&a, write_obj(&torus(1.0, 0.35, 16, 8))).unwrap();
    std::fs::write(&b, write_obj(&icosphere(0.5, 2))).unwrap();
    (a, b)
}

fn instances(doc: &Value) -> &Vec<Value> {
    doc["instances"].as_array().unwrap()
}

fn implementation<'a>(inst: &'a Value, id: &str) -> Option<&'a Value> {
    inst["implementations"].as_array().unwrap().iter().find(|i| i["id"] == id)
}

#[test]
fn every_scene_tiny_matches_the_schema_and_gpu_agrees_with_cpu() {
    let dir = TempDir::new("all");
    let (a, b) = write_files(&dir);
    let plot = dir.path("plot.svg");
    let (doc, out) = run_json(
        &dir,
        &[
            "--size",
            "tiny",
            "--frames",
            "2",
            "--files",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--translate-b",
            "1.2,0,0",
            "--plot",
            plot.to_str().unwrap(),
            // The trees each frame walks, as the ray figures infer them (below).
            "--trees-in-frame",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Every scene ran, each with every implementation.
    let ran: Vec<&str> = instances(&doc).iter().map(|i| i["scene"].as_str().unwrap()).collect();
    for scene in SCENES {
        assert!(ran.contains(scene), "scene {scene} missing from the JSON: {ran:?}");
        assert!(stdout.contains(&format!("== {scene}")), "scene {scene} missing from the table\n{stdout}");
    }
    assert!(doc["machine"]["gpu"].is_object());
    assert_eq!(doc["settings"]["background_trees"], false, "--trees-in-frame");
    for inst in instances(&doc) {
        let name = format!("{} {}", inst["scene"], inst["variant"]);
        assert_eq!(inst["frames"], 2, "{name}");
        let gpu = implementation(inst, "gpu").unwrap();
        let cpu = implementation(inst, "cpu-rayon").unwrap();
        let cpu1 = implementation(inst, "cpu-1").unwrap();
        // The cloth scenes predict, the others do not.
        let cloth = ["cloth-layers", "eight-sheets"].contains(&inst["scene"].as_str().unwrap());
        assert_eq!(inst["prediction_distance"].as_f64().unwrap() > 0.0, cloth, "{name}");
        if cloth {
            let c = &cpu["contacts"]["by_class"];
            assert!(
                c["prediction"].as_f64().unwrap() > 0.0 && c["outward"].as_f64().unwrap() > 0.0,
                "{name}"
            );
            assert!(inst["rays"]["outward_rays"].as_u64().unwrap() > 0, "{name}: no outward ray counted");
        }
        let walks = WALK_SCENES.contains(&inst["scene"].as_str().unwrap());
        for id in IMPLS {
            // `gpu-auto` and `cpu-auto` run only when named.
            let expected = !OPT_IN_IMPLS.contains(id) && (walks || FULL_IMPLS.contains(id));
            let Some(i) = implementation(inst, id) else {
                assert!(!expected, "{name}: no {id}");
                continue;
            };
            assert!(expected, "{name}: {id} ran");
            assert_eq!(i["frame_ms"]["per_frame"].as_array().unwrap().len(), 2, "{name} {id}");
            assert_eq!(i["contacts"]["per_frame"].as_array().unwrap().len(), 2, "{name} {id}");
            assert_eq!(i["walking"].is_object(), id.ends_with("-walk"), "{name} {id}");
        }
        // parry3d casts the same rays, classified by the same rules: the same contacts but for
        // rays through an edge or a vertex (its ray-triangle test is not watertight).
        for id in ["parry-1", "parry-rayon", "parry-refit-1", "parry-refit-rayon"] {
            let p = implementation(inst, id).unwrap();
            let allowed = 2.0f64.max(0.01 * cpu["contacts"]["mean"].as_f64().unwrap());
            let differ = p["differ_from_reference"]["max"].as_f64().unwrap();
            assert!(differ <= allowed, "{name}: {id} differs by {differ} contacts");
        }
        if walks {
            let (gw, cw) =
                (implementation(inst, "gpu-walk").unwrap(), implementation(inst, "cpu-walk").unwrap());
            assert_eq!(gw["walking"]["full"], "gpu", "{name}");
            assert_eq!(cw["walking"]["full"], "cpu-rayon", "{name}");
            // The GPU walks as its CPU twin does.
            assert_eq!(
                gw["contacts"]["per_frame"], cw["contacts"]["per_frame"],
                "{name}: walking GPU vs CPU"
            );
            assert_eq!(gw["walking"]["per_frame_iterative"], cw["walking"]["per_frame_iterative"], "{name}");
            assert_eq!(gw["walking"]["outcomes"], cw["walking"]["outcomes"], "{name}");
            // The scripted motion is slow enough for iterative passes, and they find contacts.
            assert!(cw["walking"]["iterative_frames"].as_u64().unwrap() > 0, "{name}: no iterative pass");
            assert!(cw["contacts"]["by_class"]["walked"].as_f64().unwrap() > 0.0, "{name}: nothing walked");
        }
        // Refitted trees find a rebuild's contacts, on both backends; the refits are reported.
        for id in ["gpu-refit", "cpu-refit"] {
            let r = implementation(inst, id).unwrap();
            assert_eq!(r["differ_from_reference"]["max"], 0, "{name}: {id} contact set");
            assert_eq!(r["bvh"]["policy"], "refit", "{name}: {id}");
            assert_eq!(r["bvh"]["refitted"], 2, "{name}: {id} refits every timed frame");
        }
        assert_eq!(cpu["bvh"]["rebuilt"], 2, "{name}");
        assert!(
            implementation(inst, "cpu-refit").unwrap()["bvh"]["degradation_max"].as_f64().unwrap() >= 0.5
        );
        assert!(cpu["ray_stage_rays_per_s_per_core"].is_number(), "{name}");
        assert!(implementation(inst, "parry-1").unwrap()["bvh"].is_null(), "{name}");
        assert_eq!(gpu["contacts"]["per_frame"], cpu["contacts"]["per_frame"], "{name}: GPU vs CPU counts");
        assert_eq!(cpu1["contacts"]["per_frame"], cpu["contacts"]["per_frame"], "{name}: 1 thread vs rayon");
        assert_eq!(gpu["differ_from_reference"]["max"], 0, "{name}: GPU contact set");
        assert!(gpu["gpu"]["dispatches_per_frame"].as_f64().unwrap() > 0.0, "{name}");
        // Without iterative detection or a refit policy every GPU frame is a rebuild.
        let rebuild = &gpu["frame_kinds"]["rebuild"];
        assert_eq!(rebuild["frames"], 2, "{name}: {}", gpu["frame_kinds"]);
        assert_eq!(rebuild["dispatches_per_frame"], gpu["gpu"]["dispatches_per_frame"], "{name}");
        assert!(rebuild["worst_ms"].as_f64().unwrap() >= rebuild["median_ms"].as_f64().unwrap(), "{name}");
        assert!(gpu["setup_ms"].as_f64().unwrap() > 0.0, "{name}");
        assert!(gpu["gpu"]["bytes_read_back_per_frame"].as_f64().unwrap() > 0.0, "{name}");
        // The H100 floor of the full passes: its parts add up to it, and the fixed part is
        // there; the iterative passes (which walk) have none.
        for id in ["gpu", "gpu-refit"] {
            let floor = &implementation(inst, id).unwrap()["gpu"]["h100_floor_ms"];
            let parts =
                ["fixed", "bound_bytes", "traversal", "read_back"].map(|k| floor[k].as_f64().unwrap());
            let total = floor["total"].as_f64().unwrap();
            assert!((parts.iter().sum::<f64>() - total).abs() < 1e-9, "{name}: {id} {floor}");
            assert!(parts[0] > 0.0 && parts.iter().all(|&p| p >= 0.0), "{name}: {id} {floor}");
        }
        // The floor's traversal is over each implementation's own trees, read back after its
        // run, for the reference's rays: `gpu`'s are the trees the instance's ray figures infer
        // from the CPU reference's frame (its LBVHs, the binned-SAH trees of the bodies at
        // rest), node for node.
        let rays = &inst["rays"];
        let walked = &gpu["gpu"]["trees_walked"];
        for k in ["nodes_per_ray_gpu_walk", "nodes_per_ray_gpu_line_walk", "triangles_per_ray"] {
            assert_eq!(walked[k], rays[k], "{name}: gpu's own trees, {k}");
        }
        for id in ["gpu", "gpu-refit"] {
            let g = &implementation(inst, id).unwrap()["gpu"];
            let bytes = g["trees_walked"]["bytes_per_ray_gpu_line_walk"].as_f64().unwrap();
            let rays_per_frame = rays["rays_per_frame"].as_f64().unwrap();
            let traversal = g["h100_floor_ms"]["traversal"].as_f64().unwrap();
            // 5.5e6 bytes per µs: the model's L2 bandwidth.
            assert!((traversal - rays_per_frame * bytes / 5.5e6 / 1e3).abs() < 1e-12, "{name}: {id}");
        }
        // The host's steps around each GPU frame's work: each full pass records, submits and
        // waits for its readback, and every frame's steps lie within its wall time, so the
        // median of their sums is at most the median frame.
        for id in ["gpu", "gpu-refit"] {
            let i = implementation(inst, id).unwrap();
            let host = &i["gpu"]["host_ms"];
            for k in ["record", "submit", "wait"] {
                assert!(host[k].as_f64().unwrap() > 0.0, "{name}: {id} {host}");
            }
            for k in ["copy", "order"] {
                assert!(host[k].as_f64().unwrap() >= 0.0, "{name}: {id} {host}");
            }
            let total = host["total"].as_f64().unwrap();
            assert!(total <= i["frame_ms"]["median"].as_f64().unwrap(), "{name}: {id} {host}");
        }
        if let Some(walk) = implementation(inst, "gpu-walk") {
            assert!(walk["gpu"]["h100_floor_ms"].is_null(), "{name}: gpu-walk");
            assert!(walk["gpu"]["trees_walked"].is_null(), "{name}: gpu-walk");
        }
        let timing = gpu["stage_timing"].as_str().unwrap();
        let timestamps = gpu["gpu"]["timestamps_per_frame"].as_f64().unwrap();
        if doc["machine"]["gpu"]["timestamps"] == true {
            assert_eq!(timing, "gpu-timestamps", "{name}");
            // Two a timed pass, a pass a stage that ran.
            assert!(timestamps >= 2.0, "{name}: {timestamps} timestamps");
        } else {
            assert_eq!(timing, "none", "{name}");
            assert_eq!(timestamps, 0.0, "{name}");
        }
        assert_eq!(cpu["stage_timing"], "cpu-wall", "{name}");
    }
    // Scenes with contacts do find some (the scenes are set up to interpenetrate).
    for scene in
        ["hermann-tori", "resting-pile", "slow-pair", "cloth-layers", "eight-sheets", "mesh-scaling", "files"]
    {
        let found: f64 = instances(&doc)
            .iter()
            .filter(|i| i["scene"] == scene)
            .map(|i| implementation(i, "cpu-rayon").unwrap()["contacts"]["mean"].as_f64().unwrap())
            .sum();
        assert!(found > 0.0, "{scene}: no contacts");
    }
    assert_eq!(doc["agreement"]["count_mismatches"], 0);
    assert_eq!(doc["agreement"]["unreached_mismatches"], 0);
    // The scaling scenes have their fits and their plot.
    let scaling: Vec<&str> =
        doc["scaling"].as_array().unwrap().iter().map(|s| s["scene"].as_str().unwrap()).collect();
    assert_eq!(scaling, ["tori-scaling", "mesh-scaling"]);
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("tori-scaling") && svg.contains("mesh-scaling"));
}

#[test]
fn cpu_alone_needs_no_adapter() {
    let dir = TempDir::new("cpu");
    let (doc, _) = run_json(&dir, &["--cpu", "--size", "tiny", "--frames", "1", "--scene", "hermann-tori"]);
    assert!(doc["machine"]["gpu"].is_null());
    assert_eq!(doc["settings"]["cpu_only"], true);
    assert_eq!(doc["settings"]["background_trees"], false, "no GPU scene");
    let inst = &instances(&doc)[0];
    assert!(implementation(inst, "gpu").is_none());
    assert!(implementation(inst, "cpu-1").is_some() && implementation(inst, "parry-1").is_some());
}

#[test]
fn intersections_time_their_stages_beside_the_rays() {
    let dir = TempDir::new("intersections");
    let (doc, out) = run_json(
        &dir,
        &["--no-parry", "--size", "tiny", "--scene", "hermann-tori", "--intersections", "full"],
    );
    assert_eq!(doc["settings"]["intersections"], "full");
    assert_eq!(doc["settings"]["background_trees"], true, "the library's default");
    let inst = &instances(&doc)[0];
    for id in ["gpu", "cpu-1", "cpu-rayon"] {
        let i = implementation(inst, id).unwrap_or_else(|| panic!("{id}"));
        for stage in ["rays", "crossings", "contour", "analysis"] {
            assert!(i["stages_ms"][stage].is_number(), "{id}: {stage}");
        }
        let x = &i["intersections"];
        assert!(x["crossings_vs_rays"].is_number(), "{id}");
        assert!(
            x["crossings_per_frame"].as_array().unwrap().iter().all(|c| c.as_u64().unwrap() > 0),
            "{id}: the tori interpenetrate"
        );
    }
    // The GPU finds what the CPU reference finds, every frame.
    let (g, c) = (implementation(inst, "gpu").unwrap(), implementation(inst, "cpu-rayon").unwrap());
    assert_eq!(g["intersections"]["crossings_per_frame"], c["intersections"]["crossings_per_frame"]);
    assert_eq!(g["intersections"]["loops_per_frame"], c["intersections"]["loops_per_frame"]);
    assert!(texts(&out).contains("cross/rays"));
}

#[test]
fn scenes_and_options_can_be_chosen() {
    let dir = TempDir::new("choose");
    let (doc, _) = run_json(
        &dir,
        &[
            "--cpu",
            "--no-parry",
            "--scene",
            "tori-scaling,mesh-scaling",
            "--tori",
            "2,3",
            "--triangles",
            "500",
        ],
    );
    let params: Vec<f64> = instances(&doc).iter().map(|i| i["parameter"].as_f64().unwrap()).collect();
    assert_eq!(params.len(), 3);
    assert_eq!(&params[..2], &[2.0, 3.0]);
    assert_eq!(doc["settings"]["parry"], false);
    assert!(doc["settings"]["implementations"].is_null());
    assert!(implementation(&instances(&doc)[0], "parry-1").is_none());
}

#[test]
fn implementations_can_be_chosen() {
    // cpu-rayon, the reference, runs in any case; the others only when asked for.
    let dir = TempDir::new("implementations");
    let args = ["--cpu", "--size", "tiny", "--frames", "1", "--scene", "resting-pile"];
    let (doc, _) = run_json(&dir, &[&args[..], &["--implementations", "cpu-walk,parry-refit-1"]].concat());
    assert_eq!(doc["settings"]["implementations"], serde_json::json!(["cpu-walk", "parry-refit-1"]));
    let inst = &instances(&doc)[0];
    let ran: Vec<&str> =
        inst["implementations"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert_eq!(ran, ["cpu-rayon", "cpu-walk", "parry-refit-1"]);
    let out = bench(&[&args[..], &["--implementations", "cpu-2"]].concat());
    assert_eq!(out.status.code(), Some(2), "{}", texts(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the ids are"), "{}", texts(&out));
}

#[test]
fn auto_runs_when_named_on_both_backends_alike() {
    // `gpu-auto` and `cpu-auto` (not in the default suite): `BvhUpdate::Auto` at its default
    // bound, a rebuild's contacts, the same decision on both backends every frame (the GPU's
    // taken on its host mirror of the trees, whose time the BVH line reports).
    let dir = TempDir::new("auto");
    let args = ["--size", "tiny", "--frames", "3", "--scene", "hermann-tori,cloth-layers", "--no-parry"];
    let (doc, out) = run_json(&dir, &[&args[..], &["--implementations", "gpu-auto,cpu-auto"]].concat());
    let stdout = String::from_utf8_lossy(&out.stdout);
    for inst in instances(&doc) {
        let name = inst["scene"].as_str().unwrap();
        let ran: Vec<&str> =
            inst["implementations"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap()).collect();
        assert_eq!(ran, ["gpu-auto", "cpu-rayon", "cpu-auto"], "{name}");
        let (g, c) = (implementation(inst, "gpu-auto").unwrap(), implementation(inst, "cpu-auto").unwrap());
        for i in [g, c] {
            assert_eq!(i["bvh"]["policy"], "auto", "{name}");
            assert_eq!(i["differ_from_reference"]["max"], 0, "{name}: {}", i["id"]);
            let frames = i["bvh"]["rebuilt"].as_u64().unwrap() + i["bvh"]["refitted"].as_u64().unwrap();
            assert_eq!(frames, 3, "{name}: every timed frame rebuilt or refitted");
        }
        assert_eq!(g["bvh"]["per_frame"], c["bvh"]["per_frame"], "{name}: the same decisions");
        assert_eq!(g["bvh"]["degradation_per_frame"], c["bvh"]["degradation_per_frame"], "{name}");
    }
    assert!(stdout.contains("BVH gpu-auto   auto:") && stdout.contains("host BVH work median"), "{stdout}");
    assert!(stdout.contains("BVH cpu-auto   auto:") && stdout.contains("GPU auto frame:"), "{stdout}");
}

#[test]
fn interleaved_and_sequential_runs_find_the_same_contacts() {
    // The order in which the implementations' frames are timed, and whether their workers are
    // pinned to cores, change no figure but the times: the same implementations, in the same
    // order, with the same contacts every frame (the walking one's comparison with its full
    // passes included).
    let dir = TempDir::new("order");
    let args = ["--cpu", "--size", "tiny", "--frames", "3", "--scene", "resting-pile", "--no-parry"];
    let (interleaved, out) = run_json(&dir, &args);
    assert_eq!(interleaved["settings"]["order"], "interleaved");
    assert_eq!(interleaved["settings"]["pinned"], false);
    assert!(String::from_utf8_lossy(&out.stdout).contains("timing: interleaved"), "{}", texts(&out));
    let (sequential, out) = run_json(&dir, &[&args[..], &["--sequential", "--pin"]].concat());
    assert_eq!(sequential["settings"]["order"], "sequential");
    // Pinned, or the report says why not.
    let header = String::from_utf8_lossy(&out.stdout);
    let pinned = sequential["settings"]["pinned"].as_bool().unwrap();
    assert!(pinned || header.contains("--pin asked, not done"), "{}", texts(&out));
    let (a, b) = (&instances(&interleaved)[0], &instances(&sequential)[0]);
    let ids = |i: &Value| -> Vec<String> {
        i["implementations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(a), ids(b));
    assert!(ids(a).contains(&"cpu-walk".to_string()), "{:?}", ids(a));
    for id in ids(a) {
        let (x, y) = (implementation(a, &id).unwrap(), implementation(b, &id).unwrap());
        for field in ["contacts", "differ_from_reference"] {
            assert_eq!(x[field], y[field], "{id}: {field}");
        }
        for field in ["differ_from_full", "outcomes", "walked_per_frame", "per_frame_iterative"] {
            assert_eq!(x["walking"][field], y["walking"][field], "{id}: walking.{field}");
        }
        assert_eq!(x["frame_ms"]["per_frame"].as_array().unwrap().len(), 3, "{id}");
    }
}

#[test]
fn help_explains_scenes_and_figures() {
    let out = bench(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for word in SCENES.iter().chain(IMPLS).chain(&[
        "--json",
        "--plot",
        "--frames",
        "--adapter",
        "--cpu",
        "nodes/ray",
        "prediction distance",
        "walking",
    ]) {
        assert!(text.contains(word), "--help lacks {word}\n{text}");
    }
}

#[test]
fn bad_options_fail_with_a_message() {
    for args in [
        &["--scene", "files", "--cpu"][..],
        &["--scene", "nope"][..],
        &["--frames", "0", "--cpu"][..],
        &["--scene", "files", "--files", "/nonexistent/a.obj", "/nonexistent/b.obj", "--cpu"][..],
    ] {
        let out = bench(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", texts(&out));
        assert!(!out.stderr.is_empty(), "{args:?}");
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"), "{args:?}: {}", texts(&out));
    }
}

#[test]
fn schema_document_lists_every_field() {
    // Every field name of the schema appears in docs/bench-json.md.
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/bench-json.md"))
        .expect("docs/bench-json.md");
    fn names(t: &T, out: &mut Vec<&'static str>) {
        match t {
            T::Obj(fields) => {
                for (n, ft) in fields {
                    out.push(n);
                    names(ft, out);
                }
            }
            T::Nullable(i) | T::Arr(i) | T::MapOf(_, i) => names(i, out),
            _ => {}
        }
    }
    let mut all = Vec::new();
    names(&schema(), &mut all);
    for n in all {
        assert!(doc.contains(&format!("`{n}`")), "docs/bench-json.md does not describe `{n}`");
    }
}
