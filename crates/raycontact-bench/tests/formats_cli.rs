//! `raycontact-bench detect` and `--scene files` on PLY and STL files, as a process: the same
//! contacts as from OBJ, STL corners merged on reading, and errors naming the file and element.

use std::path::PathBuf;
use std::process::{Command, Output};

use raycontact::meshes::{PlyEncoding, StlEncoding, icosphere, write_obj, write_ply, write_stl};
use serde_json::Value;

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("raycontact-formats-cli-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// Writes `bytes` to `name` in the directory; returns its path as text.
    fn write(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_raycontact-bench"))
        .args(args)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("the binary runs")
}

/// `detect A B` of two overlapping spheres on the CPU backend; the JSON document.
fn detect(a: &str, b: &str) -> Value {
    let out = bench(&["detect", a, b, "--translate-b", "1.5,0,0", "--rotate-b", "0,1,0,30", "--cpu"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "detect {a} {b} failed:\n{err}");
    assert!(!err.contains("welded"), "nothing left to weld: {err}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn detect_on_ply_and_stl_matches_obj() {
    let dir = TempDir::new("detect");
    let sphere = icosphere(1.0, 2);
    let obj = dir.write("a.obj", write_obj(&sphere).as_bytes());
    let reference = detect(&obj, &obj);
    let count = reference["contact_count"].as_u64().unwrap();
    assert!(count > 0);
    let files = [
        dir.write("ascii.ply", &write_ply(&sphere, PlyEncoding::Ascii)),
        dir.write("le.ply", &write_ply(&sphere, PlyEncoding::BinaryLittleEndian)),
        dir.write("be.ply", &write_ply(&sphere, PlyEncoding::BinaryBigEndian)),
        dir.write("ascii.stl", &write_stl(&sphere, StlEncoding::Ascii)),
        dir.write("binary.STL", &write_stl(&sphere, StlEncoding::Binary)),
    ];
    for file in &files {
        let doc = detect(file, &files[4]);
        assert_eq!(doc["contact_count"].as_u64(), Some(count), "{file}");
        for body in doc["bodies"].as_array().unwrap() {
            assert_eq!(body["vertices"].as_u64(), Some(sphere.positions.len() as u64), "{file}: {body}");
            assert_eq!(body["triangles"].as_u64(), Some(sphere.triangles.len() as u64), "{file}: {body}");
            assert_eq!(body["welded_vertices"].as_u64(), Some(0), "{file}: {body}");
            assert_eq!(body["boundary_edges"].as_u64(), Some(0), "{file}: {body}");
        }
    }
}

/// Exit code 2 and one error line containing every needle.
fn expect_error(args: &[&str], needles: &[&str]) {
    let out = bench(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: stderr:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line:\n{err}");
    for needle in needles {
        assert!(err.contains(needle), "`{needle}` missing from:\n{err}");
    }
}

#[test]
fn errors_name_the_file_and_the_element() {
    let dir = TempDir::new("errors");
    let mut sphere = icosphere(1.0, 1);
    let good = dir.write("good.ply", &write_ply(&sphere, PlyEncoding::Ascii));
    let stl = write_stl(&sphere, StlEncoding::Binary);
    let truncated = dir.write("cut.stl", &stl[..stl.len() - 10]);
    sphere.triangles[3][1] = 1000;
    let range = dir.write("range.ply", &write_ply(&sphere, PlyEncoding::BinaryLittleEndian));
    expect_error(
        &["detect", &good, &range, "--cpu"],
        &["mesh B", "range.ply", "face 3 (byte offset", "1000", "out of range"],
    );
    expect_error(
        &["detect", &truncated, &good, "--cpu"],
        &["mesh A", "cut.stl", "facet 79", "unexpected end of file"],
    );
}

#[test]
fn files_scene_reads_ply_and_stl() {
    let dir = TempDir::new("files");
    let a = dir.write("a.ply", &write_ply(&icosphere(1.0, 2), PlyEncoding::BinaryLittleEndian));
    let b = dir.write("b.stl", &write_stl(&icosphere(0.5, 2), StlEncoding::Ascii));
    let out = bench(&[
        "--scene",
        "files",
        "--files",
        &a,
        &b,
        "--translate-b",
        "1.2,0,0",
        "--size",
        "tiny",
        "--frames",
        "2",
        "--cpu",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("a.ply + b.stl"), "{stdout}");
}
