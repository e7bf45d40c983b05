//! The pipeline cache kept on disk across runs: wgpu's [`wgpu::PipelineCache`] (Vulkan's
//! `VkPipelineCache`), loaded before the pipelines are created and written back after, in a
//! directory the caller chooses ([`PipelineCacheDir`]).
//!
//! One file per adapter, driver and kernel set, named
//! `<wgpu::util::pipeline_cache_key>-<driver>-<raycontact version>-<kernels hash>.bin`; writing
//! it removes the files of the same adapter and driver that another version or kernel set left.
//! The file is the cache data behind raycontact's own header (a magic, the data's length and its
//! FNV-1a hash), written to a temporary file in the same directory and renamed over the old one,
//! so that a reader sees a whole file or none. A file that fails the header (truncated, damaged,
//! not ours) is ignored with a warning; data that wgpu refuses (written for another device or
//! driver: wgpu checks its own header, with the driver's cache UUID on Vulkan) leaves an empty
//! cache, with a warning. Neither is ever an error: the pipelines are then compiled from source.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::Kernel;
use crate::layout::Tuning;

/// Where a [`GpuContext`](crate::GpuContext) keeps its compiled pipelines across runs, on
/// adapters whose backend supports wgpu's pipeline cache (Vulkan: `Features::PIPELINE_CACHE`);
/// elsewhere, and on a device without that feature, there is no cache.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PipelineCacheDir {
    /// The platform's cache directory: `$XDG_CACHE_HOME/raycontact/pipelines` when
    /// `XDG_CACHE_HOME` is an absolute path, else `$HOME/.cache/raycontact/pipelines` (on macOS
    /// `$HOME/Library/Caches/raycontact/pipelines`, on Windows
    /// `%LOCALAPPDATA%\raycontact\pipelines`); no cache when none of these is set.
    #[default]
    Default,
    /// This directory (created when missing).
    At(PathBuf),
    /// No pipeline cache.
    Off,
}

impl PipelineCacheDir {
    /// From `RAYCONTACT_PIPELINE_CACHE`: unset or empty for [`PipelineCacheDir::Default`], `off`
    /// (or `0`, `none`, `false`) for [`PipelineCacheDir::Off`], any other value a directory.
    pub fn from_env() -> Self {
        match std::env::var_os("RAYCONTACT_PIPELINE_CACHE") {
            None => PipelineCacheDir::Default,
            Some(v) if v.is_empty() => PipelineCacheDir::Default,
            Some(v) => match v.to_str().map(str::to_ascii_lowercase).as_deref() {
                Some("off" | "0" | "none" | "false") => PipelineCacheDir::Off,
                _ => PipelineCacheDir::At(PathBuf::from(v)),
            },
        }
    }

    /// The directory this names, `None` for [`PipelineCacheDir::Off`] or when the platform's
    /// cache directory is unknown.
    pub fn directory(&self) -> Option<PathBuf> {
        match self {
            PipelineCacheDir::Off => None,
            PipelineCacheDir::At(p) => Some(p.clone()),
            PipelineCacheDir::Default => default_directory(),
        }
    }
}

/// The platform's cache directory for raycontact's pipelines (see [`PipelineCacheDir::Default`]).
fn default_directory() -> Option<PathBuf> {
    let env = |k: &str| std::env::var_os(k).map(PathBuf::from).filter(|p| p.is_absolute());
    let base = if cfg!(windows) {
        env("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        env("HOME").map(|h| h.join("Library").join("Caches"))
    } else {
        env("XDG_CACHE_HOME").or_else(|| env("HOME").map(|h| h.join(".cache")))
    };
    base.map(|b| b.join("raycontact").join("pipelines"))
}

/// Magic of raycontact's cache file header.
const MAGIC: [u8; 8] = *b"RCPLCACH";
/// Bytes of the header: the magic, the data's length and its FNV-1a hash.
const HEADER: usize = 24;

/// 64-bit FNV-1a.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// A file name part of only `[A-Za-z0-9_.]`.
fn slug(s: &str) -> String {
    let s: String = s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect();
    s.chars().take(48).collect()
}

/// The cache data wrapped in raycontact's header.
fn wrap(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + data.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(data).to_le_bytes());
    out.extend_from_slice(data);
    out
}

/// The cache data of a file's bytes, or why they are not a whole cache file of ours.
fn unwrap(file: &[u8]) -> Result<&[u8], &'static str> {
    if file.len() < HEADER || file[..8] != MAGIC {
        return Err("not a raycontact pipeline cache");
    }
    let word = |at: usize| u64::from_le_bytes(file[at..at + 8].try_into().expect("8 bytes"));
    let data = &file[HEADER..];
    if word(8) != data.len() as u64 {
        return Err("truncated or extended");
    }
    if word(16) != fnv1a(data) {
        return Err("damaged (its hash does not match)");
    }
    Ok(data)
}

/// A pipeline cache loaded from (and stored to) a file.
#[derive(Debug)]
pub(crate) struct DiskCache {
    cache: wgpu::PipelineCache,
    path: PathBuf,
    /// The data it was created with (to skip writing the same bytes back).
    loaded: Option<Vec<u8>>,
}

/// What the cache did, for the context's figures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PipelineCacheStatus {
    /// The cache file, when there is a cache.
    pub path: Option<PathBuf>,
    /// Whether the pipelines were created from a cache file's data that the driver accepted.
    pub loaded: bool,
    /// Bytes of cache data written back after the pipelines were created (0 when nothing
    /// changed or there is no cache).
    pub stored_bytes: u64,
}

impl DiskCache {
    /// The cache of `dir` for this device, or `None` (logged) when the device has no
    /// `PIPELINE_CACHE`, the backend has no cache key, or `dir` names no directory.
    pub fn open(
        device: &wgpu::Device,
        info: &wgpu::AdapterInfo,
        dir: &PipelineCacheDir,
        tuning: &Tuning,
    ) -> Option<Self> {
        if !device.features().contains(wgpu::Features::PIPELINE_CACHE) {
            log::debug!("raycontact: no pipeline cache (the device lacks Features::PIPELINE_CACHE)");
            return None;
        }
        let key = wgpu::util::pipeline_cache_key(info)?;
        let Some(dir) = dir.directory() else {
            log::debug!("raycontact: no pipeline cache directory");
            return None;
        };
        let prefix = format!("{key}-{}-", slug(&format!("{} {}", info.driver, info.driver_info)));
        let path = dir.join(format!(
            "{prefix}{}-{:016x}.bin",
            slug(env!("CARGO_PKG_VERSION")),
            kernels_hash(tuning)
        ));
        let loaded = match std::fs::read(&path) {
            Ok(bytes) => match unwrap(&bytes) {
                Ok(data) => Some(data.to_vec()),
                Err(why) => {
                    log::warn!("raycontact: ignoring pipeline cache {}: {why}", path.display());
                    None
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                log::warn!("raycontact: ignoring pipeline cache {}: {e}", path.display());
                None
            }
        };
        let mut cache = create(device, loaded.as_deref());
        let mut loaded = loaded;
        if cache.is_none() && loaded.is_some() {
            log::warn!(
                "raycontact: ignoring pipeline cache {}: the driver or wgpu refused its data (another device or driver)",
                path.display()
            );
            loaded = None;
            cache = create(device, None);
        }
        Some(DiskCache { cache: cache?, path, loaded })
    }

    /// The wgpu cache, for pipeline creation.
    pub fn cache(&self) -> &wgpu::PipelineCache {
        &self.cache
    }

    /// Writes the cache's data back when it changed (atomically: a temporary file renamed over
    /// the old one) and removes this adapter's and driver's files of other versions or kernel
    /// sets. Failures are logged, never errors. Returns the status.
    pub fn store(&self) -> PipelineCacheStatus {
        let mut status = PipelineCacheStatus {
            path: Some(self.path.clone()),
            loaded: self.loaded.is_some(),
            stored_bytes: 0,
        };
        let Some(data) = self.cache.get_data() else { return status };
        if self.loaded.as_deref() == Some(&data[..]) {
            return status;
        }
        match write_atomically(&self.path, &wrap(&data)) {
            Ok(()) => {
                status.stored_bytes = data.len() as u64;
                log::info!(
                    "raycontact: pipeline cache {} written ({} bytes)",
                    self.path.display(),
                    data.len()
                );
                remove_stale(&self.path);
            }
            Err(e) => log::warn!("raycontact: could not write pipeline cache {}: {e}", self.path.display()),
        }
        status
    }
}

/// A pipeline cache on `device` with `data` (from a cache file of ours), or `None` when wgpu
/// refused it.
#[allow(unsafe_code)]
fn create(device: &wgpu::Device, data: Option<&[u8]>) -> Option<wgpu::PipelineCache> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    // SAFETY: `data` is either `None` or bytes that `PipelineCache::get_data` returned on a device
    // with the same `wgpu::util::pipeline_cache_key`, driver and kernel set (the file name says
    // so), written whole (renamed into place) and read back unchanged (its length and FNV-1a hash
    // checked by `unwrap`). wgpu checks its own header on top (device, driver cache UUID, wgpu's
    // format), and Vulkan drivers check theirs. This is as much as wgpu's contract can be met for
    // data kept on disk (its documentation says so); `PipelineCacheDir::Off` opts out.
    let cache = unsafe {
        device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
            label: Some("raycontact.pipeline_cache"),
            data,
            fallback: true,
        })
    };
    match crate::blocking::block_on("pipeline cache", scope.pop()) {
        Ok(Some(e)) => {
            log::debug!("raycontact: pipeline cache refused: {e}");
            None
        }
        Ok(None) => Some(cache),
        Err(e) => {
            log::debug!("raycontact: pipeline cache not checked: {e}");
            None
        }
    }
}

/// A hash of every kernel's assembled source: a new kernel set gets a new cache file.
fn kernels_hash(tuning: &Tuning) -> u64 {
    let mut all = String::new();
    for k in Kernel::ALL {
        all.push_str(&k.source_with(tuning));
    }
    fnv1a(all.as_bytes())
}

/// Writes `bytes` to a temporary file next to `path` and renames it over `path`.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let tmp = dir.join(format!(
        ".{}.{}.{nanos}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("cache"),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Removes the cache files of the same adapter and driver as `path` (the same name up to the
/// version) but another version or kernel set.
fn remove_stale(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else { return };
    // `<key>-<driver>-<version>-<hash>.bin`: the prefix ends at the driver's dash.
    let mut parts = name.rsplitn(3, '-');
    let (_, _, Some(prefix)) = (parts.next(), parts.next(), parts.next()) else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let other = e.file_name();
        let Some(other) = other.to_str() else { continue };
        if other != name && other.ends_with(".bin") && other.starts_with(&format!("{prefix}-")) {
            let rest = &other[prefix.len() + 1..];
            // Exactly `<version>-<hash>.bin` after the prefix (not a longer driver name).
            if rest.matches('-').count() == 1 {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_file_round_trips_and_damage_is_caught() {
        let data = b"some cache data".to_vec();
        let file = wrap(&data);
        assert_eq!(unwrap(&file), Ok(&data[..]));
        let mut flipped = file.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(unwrap(&flipped).is_err());
        assert!(unwrap(&file[..file.len() - 1]).is_err());
        assert!(unwrap(b"short").is_err());
        let mut foreign = file.clone();
        foreign[0] = b'X';
        assert!(unwrap(&foreign).is_err());
    }

    #[test]
    fn the_directory_follows_the_option() {
        assert_eq!(PipelineCacheDir::Off.directory(), None);
        assert_eq!(PipelineCacheDir::At("/x".into()).directory(), Some(PathBuf::from("/x")));
    }

    #[test]
    fn stale_files_of_the_same_driver_are_removed() {
        let dir = std::env::temp_dir().join(format!("raycontact-cache-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let keep = dir.join("wgpu_k-drv-0.2.0-00000000000000aa.bin");
        let stale = dir.join("wgpu_k-drv-0.1.0-00000000000000bb.bin");
        let other = dir.join("wgpu_k-drv_b-0.1.0-00000000000000bb.bin");
        for p in [&keep, &stale, &other] {
            std::fs::write(p, b"x").unwrap();
        }
        remove_stale(&keep);
        assert!(keep.exists() && !stale.exists() && other.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
