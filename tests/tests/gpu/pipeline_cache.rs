//! The pipeline cache on disk: written after the pipelines are created, loaded by the next
//! context, and a damaged or foreign file ignored (never an error).

use std::path::{Path, PathBuf};

use raycontact::{BodyKind, ContextOptions, GpuContext, PipelineCacheDir, Scene, meshes, wgpu};

/// A fresh directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("raycontact-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn context(dir: &Path) -> GpuContext {
    let options =
        ContextOptions { pipeline_cache: PipelineCacheDir::At(dir.into()), ..ContextOptions::from_env() };
    GpuContext::with_options(options).expect("a context, whatever the cache file holds")
}

/// 64-bit FNV-1a, as raycontact's cache header hashes the data.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

#[test]
fn the_cache_is_written_loaded_and_a_bad_file_ignored() {
    let dir = TempDir::new("pipeline-cache");
    let first = context(&dir.0);
    let adapter = ContextOptions::from_env().adapter().unwrap();
    let supported = adapter.features().contains(wgpu::Features::PIPELINE_CACHE)
        && wgpu::util::pipeline_cache_key(&adapter.get_info()).is_some();
    let status = first.pipeline_cache().clone();
    if !supported {
        assert_eq!(status.path, None, "no cache without Features::PIPELINE_CACHE");
        return;
    }
    let path = status.path.clone().expect("a cache file");
    assert!(path.starts_with(&dir.0), "{}", path.display());
    assert!(!status.loaded && status.stored_bytes > 0 && path.exists(), "{status:?}");
    drop(first);

    let second = context(&dir.0);
    assert!(second.pipeline_cache().loaded, "{:?}", second.pipeline_cache());
    assert_eq!(second.pipeline_cache().path.as_ref(), Some(&path));
    drop(second);

    // Damaged: the data no longer matches its hash. Ignored, and rewritten.
    let good = std::fs::read(&path).unwrap();
    let mut damaged = good.clone();
    *damaged.last_mut().unwrap() ^= 0x55;
    std::fs::write(&path, &damaged).unwrap();
    let third = context(&dir.0);
    assert!(!third.pipeline_cache().loaded && third.pipeline_cache().stored_bytes > 0);
    assert_eq!(std::fs::read(&path).unwrap(), good, "the damaged file is replaced by a whole one");
    drop(third);

    // Foreign: raycontact's header is whole, but wgpu's says another device (its adapter key,
    // bytes 17..32 of wgpu's header, after raycontact's 24 bytes).
    let mut foreign = good.clone();
    foreign[24 + 20] ^= 0xff;
    let hash = fnv1a(&foreign[24..]);
    foreign[16..24].copy_from_slice(&hash.to_le_bytes());
    std::fs::write(&path, &foreign).unwrap();
    let fourth = context(&dir.0);
    assert!(!fourth.pipeline_cache().loaded, "{:?}", fourth.pipeline_cache());
    // The refused data left no GPU error behind: a frame on this context succeeds.
    let mut scene = Scene::new(&fourth);
    let ball = meshes::icosphere(1.0, 1);
    scene.add_body(&ball.positions, &ball.triangles, BodyKind::Volumetric).unwrap();
    scene.update().expect("no GPU error from the refused cache");
}
