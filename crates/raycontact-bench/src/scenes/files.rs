//! The `files` scene: two mesh files, B turning about its centre.

use std::path::PathBuf;

use glam::{Affine3A, Vec3};
use raycontact::meshes::{self, TriMesh};

use super::motion::{Deform, animate, frames_for, volumetric};
use super::{Instance, SceneName, SceneOptions};

/// Loads a mesh file as `detect` does (OBJ, OFF, PLY or STL, exact duplicates welded).
pub fn load_file(path: &std::path::Path) -> Result<TriMesh, String> {
    let mesh = meshes::load_mesh(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (welded, _) = mesh.weld(0.0);
    if welded.triangles.is_empty() {
        return Err(format!("{}: the mesh has no triangles", path.display()));
    }
    Ok(welded)
}

pub(super) fn files(opts: &SceneOptions) -> Result<Vec<Instance>, String> {
    let Some((pa, pb)) = &opts.files else {
        return Err("scene `files` needs --files A B".into());
    };
    let frames = frames_for(opts, 1, 10, 30);
    let a = load_file(pa)?;
    let b = load_file(pb)?.transformed(Affine3A::from_translation(opts.translate_b));
    let centre = b.positions.iter().fold(Vec3::ZERO, |s, p| s + *p) / b.positions.len() as f32;
    let name = |p: &PathBuf| p.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let bodies = vec![volumetric(name(pa), a, false), volumetric(name(pb), b, true)];
    let mut turn = Deform::still(centre);
    turn.axis = Vec3::Y;
    turn.spin = 0.01;
    let positions = animate(&bodies, &[None, Some(turn)], frames);
    Ok(vec![Instance {
        scene: SceneName::Files,
        variant: format!("{} + {}", name(pa), name(pb)),
        parameter: None,
        bodies,
        positions,
        pairs: Some(vec![(0, 1)]),
        prediction: 0.0,
        walking: None,
    }])
}
