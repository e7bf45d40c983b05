//! Where a scene runs: the public description ([`Backend`]) and the scene's engine, the GPU
//! backend ([`crate::gpu`]) or the CPU backend ([`crate::cpu_backend`]).

use std::fmt;

use crate::cpu_backend::CpuScene;
use crate::gpu::GpuScene;

/// Where a scene runs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// WGSL kernels on a wgpu adapter.
    Gpu {
        /// The adapter's name.
        adapter: String,
        /// Whether it is a software adapter (lavapipe and the like).
        software: bool,
    },
    /// The CPU twins of the kernels, run natively with rayon.
    Cpu {
        /// Worker threads (1 = single-threaded).
        threads: usize,
    },
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Backend::Gpu { adapter, software: true } => write!(f, "GPU: {adapter} (software adapter)"),
            Backend::Gpu { adapter, software: false } => write!(f, "GPU: {adapter}"),
            Backend::Cpu { threads: 1 } => write!(f, "CPU backend (single-threaded)"),
            Backend::Cpu { threads } => write!(f, "CPU backend (rayon, {threads} threads)"),
        }
    }
}

/// A scene's engine. (The public name [`Backend`] describes it; this holds it.)
#[derive(Debug)]
pub(crate) enum Engine {
    /// On a wgpu device.
    Gpu(Box<GpuScene>),
    /// On the CPU backend.
    Cpu(Box<CpuScene>),
}

impl Engine {
    /// The public description.
    pub fn describe(&self) -> Backend {
        match self {
            Engine::Gpu(g) => {
                Backend::Gpu { adapter: g.ctx().adapter_name().to_string(), software: g.ctx().is_software() }
            }
            Engine::Cpu(c) => Backend::Cpu { threads: c.threads() },
        }
    }
}
