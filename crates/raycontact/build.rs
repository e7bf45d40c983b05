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

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=shaders");
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let shaders = shader_dir(&manifest).unwrap_or_else(|e| panic!("raycontact: {e}"));
    println!("cargo::rustc-env=RAYCONTACT_SHADERS={}", shaders.display());

    let packaged = manifest.join("README.md");
    let readme = if packaged.is_file() { packaged } else { manifest.join("../../README.md") };
    println!("cargo::rustc-env=RAYCONTACT_README={}", readme.display());
}

/// The shader directory: `shaders` itself when it is a directory (the symlink followed, or the
/// packaged copy), or the target named by a symlink checked out as a plain file.
fn shader_dir(manifest: &Path) -> Result<PathBuf, String> {
    let link = manifest.join("shaders");
    let dir = if link.is_dir() {
        link.clone()
    } else if link.is_file() {
        let target = std::fs::read_to_string(&link).map_err(|e| format!("{}: {e}", link.display()))?;
        manifest.join(target.trim())
    } else {
        return Err(format!(
            "{} is missing: it is the symlink to the workspace's shaders/ (../../shaders)",
            link.display()
        ));
    };
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
    Ok(dir)
}
