//! The options every example takes, and what they set up: the GPU context (or the CPU backend),
//! the PNG writer, resident-memory readings.

use std::path::PathBuf;

use raycontact::GpuContext;

use crate::render::{Camera, PngFrames, Renderer};

/// Options common to every example.
#[derive(clap::Args, Clone, Debug)]
pub struct Common {
    /// Run the detection on raycontact's CPU backend (the kernels' CPU twins) instead of the GPU.
    #[arg(long)]
    pub cpu: bool,
    /// Frames to simulate (one step each; the example's default when absent).
    #[arg(long)]
    pub frames: Option<usize>,
    /// Seed of the initial perturbation (the same seed gives the same run).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write frames as PNG files into DIR (rendered offscreen through wgpu: on the detection's
    /// device, or with --cpu on a headless device of its own).
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
    /// With --png, write every K-th frame (frame 0 always).
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub png_every: usize,
    /// With --png, the image size.
    #[arg(long, value_name = "WxH", default_value = "640x480", value_parser = parse_size)]
    pub png_size: (u32, u32),
    /// Print one line every K frames (and the last).
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub print_every: usize,
    /// Print the resident memory (VmRSS) at the first and last frames, and the GPU buffers the
    /// scene created.
    #[arg(long)]
    pub rss: bool,
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s.split_once('x').ok_or_else(|| format!("{s:?} is not WxH"))?;
    let n = |x: &str| x.parse::<u32>().ok().filter(|n| (8..=8192).contains(n));
    match (n(w), n(h)) {
        (Some(w), Some(h)) => Ok((w, h)),
        _ => Err(format!("{s:?}: width and height from 8 to 8192")),
    }
}

/// Prints `message` as `name: message` on stderr and exits with `code`.
pub fn fail(name: &str, message: impl std::fmt::Display, code: i32) -> ! {
    eprintln!("{name}: {message}");
    std::process::exit(code)
}

impl Common {
    /// The GPU context (`None` with `--cpu`); exits with status 2 when no adapter is found.
    pub fn context(&self, name: &str) -> Option<GpuContext> {
        if self.cpu {
            return None;
        }
        match GpuContext::new() {
            Ok(c) => Some(c),
            Err(e) => fail(name, format!("{e} (run with --cpu for the CPU backend)"), 2),
        }
    }

    /// The PNG writer when `--png` is given: on `ctx`'s device, or on a headless device of its
    /// own with `--cpu`. Exits with status 2 when it cannot be made (with `--cpu` and no
    /// adapter at all: the frames cannot be rendered, so the example does not run).
    pub fn png_frames(&self, name: &str, ctx: Option<&GpuContext>, camera: Camera) -> Option<PngFrames> {
        let dir = self.png.as_ref()?;
        let (w, h) = self.png_size;
        let renderer = match ctx {
            Some(c) => Renderer::new(c.device(), c.queue(), w, h),
            None => Renderer::headless(w, h),
        };
        let renderer = match renderer {
            Ok(r) => r,
            Err(e) => fail(
                name,
                format!("--png: {e} (run without --png, or install a Vulkan driver: lavapipe does)"),
                2,
            ),
        };
        match PngFrames::new(renderer, dir, name, self.png_every, camera) {
            Ok(f) => Some(f),
            Err(e) => fail(name, format!("--png {}: {e}", dir.display()), 2),
        }
    }

    /// Whether frame `i` of `n` is printed.
    pub fn prints(&self, i: usize, n: usize) -> bool {
        i.is_multiple_of(self.print_every.max(1)) || i + 1 == n
    }
}

/// The process's resident memory in KiB (VmRSS of /proc/self/status; `None` where there is
/// none).
pub fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resident memory and GPU buffer counts at the first and the last frame, and the last frame
/// at which the scene created a GPU buffer (`--rss`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// (resident KiB, GPU buffers) after the first frame.
    pub first: Option<(Option<u64>, u64)>,
    /// (resident KiB, GPU buffers) after the last frame seen.
    pub last: Option<(Option<u64>, u64)>,
    /// The last frame after which the scene had more GPU buffers than before it.
    pub last_growth: Option<usize>,
    frames: usize,
}

impl Footprint {
    /// Records the reading after a frame (`buffers`: the scene's GPU buffers so far).
    pub fn sample(&mut self, buffers: u64) {
        let now = (resident_kib(), buffers);
        if self.last.is_some_and(|(_, b)| b != buffers) {
            self.last_growth = Some(self.frames);
        }
        self.first.get_or_insert(now);
        self.last = Some(now);
        self.frames += 1;
    }

    /// One line: resident memory and GPU buffers, first frame against last.
    pub fn line(&self) -> String {
        let kib = |x: Option<u64>| x.map_or("n/a".to_string(), |k| format!("{k} KiB"));
        let growth = self.last_growth.map_or("none created after the first frame".into(), |f| {
            format!("the last created at frame {f}")
        });
        match (self.first, self.last) {
            (Some((r0, b0)), Some((r1, b1))) => format!(
                "resident memory: {} after the first frame, {} after the last ({} frames); GPU buffers of the scene: {b0} after the first frame, {b1} after the last, {growth}",
                kib(r0),
                kib(r1),
                self.frames
            ),
            _ => "no frame".into(),
        }
    }
}
