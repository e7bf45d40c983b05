//! Finds the WGSL shaders and the README for `include_str!`, in a checkout and in the package.
//!
//! The shaders live at the workspace's top-level `shaders/`. `crates/raycontact/shaders` is a
//! symlink to it: `cargo package` follows it, so the published crate holds the files themselves
//! under `shaders/`. A checkout without symlinks (Git on Windows with `core.symlinks` off) holds a
//! plain file whose text is the link's target instead; that target is followed here. The
//! directory found is checked (it must hold the kernels and their `shared/` includes) and passed
//! to the crate as `RAYCONTACT_SHADERS`; `src/kernels` includes every file from there.
//!
//! The README is the workspace's (`../../README.md`) in a checkout and `README.md` in the
//! package (cargo copies the `readme` there); its example is a doctest (`RAYCONTACT_README`).
//!
//! Both are passed **relative to the crate's directory**, and the crate joins them to the
//! `CARGO_MANIFEST_DIR` of its own compilation. Cargo keeps a build script's output while the
//! files it watches are older than its last run, and it knows a path package by its path
//! within the workspace, so two checkouts sharing one target directory share that output: an
//! absolute path would have kept compiling one checkout with the other checkout's shaders.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=shaders");
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let shaders = shader_dir(&manifest).unwrap_or_else(|e| panic!("raycontact: {e}"));
    println!("cargo::rustc-env=RAYCONTACT_SHADERS={shaders}");

    let readme = if manifest.join("README.md").is_file() { "README.md" } else { "../../README.md" };
    println!("cargo::rustc-env=RAYCONTACT_README={readme}");
}

/// The shader directory, relative to the crate's: `shaders` itself when it is a directory (the
/// symlink followed, or the packaged copy), or the target named by a symlink checked out as a
/// plain file.
fn shader_dir(manifest: &Path) -> Result<String, String> {
    let link = manifest.join("shaders");
    let relative = if link.is_dir() {
        "shaders".to_string()
    } else if link.is_file() {
        let target = std::fs::read_to_string(&link).map_err(|e| format!("{}: {e}", link.display()))?;
        target.trim().to_string()
    } else {
        return Err(format!(
            "{} is missing: it is the symlink to the workspace's shaders/ (../../shaders)",
            link.display()
        ));
    };
    let dir: PathBuf = manifest.join(&relative);
    if !dir.is_dir() {
        return Err(format!("{} (the shaders, named by {}) is no directory", dir.display(), link.display()));
    }
    for required in ["morton.wgsl", "shared/common.wgsl"] {
        if !dir.join(required).is_file() {
            return Err(format!(
                "{} holds no {required}: it is not raycontact's shader directory",
                dir.display()
            ));
        }
    }
    Ok(relative.replace('\\', "/"))
}
