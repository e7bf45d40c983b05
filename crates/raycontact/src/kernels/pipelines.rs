//! The compute pipelines of every kernel, created once per device from [`Kernel::source`] and
//! [`Kernel::bindings`], on a few threads at once.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use web_time::Instant;

use super::{Binding, Kernel, KernelGroups};
use crate::error::{Error, Result};
use crate::layout::Tuning;

/// Compute pipelines and bind-group layouts of every kernel, created once per device
/// ([`crate::GpuContext`] creates them with the device and holds them).
#[derive(Debug)]
pub(crate) struct Pipelines {
    entries: Vec<(Kernel, wgpu::BindGroupLayout, wgpu::ComputePipeline)>,
    /// Compute pipelines this set created (all of them in [`Pipelines::new`]: no other code
    /// path creates one).
    created: usize,
    /// Wall time [`Pipelines::new`] took.
    elapsed: Duration,
    /// Threads [`Pipelines::new`] compiled on.
    threads: usize,
    /// Per kernel, in [`Kernel::ALL`] order: how long its creation took.
    created_in: Vec<Duration>,
    /// Per kernel, in [`Kernel::ALL`] order: how long its warm-up took, once warmed up
    /// ([`Pipelines::warm_up`], which may be asked again for other groups at any time).
    warmed: Mutex<Vec<Option<Duration>>>,
    /// Bit i: kernel `Kernel::ALL[i]` has been set in a compute pass ([`Pipelines::pipeline`]):
    /// what the tests check each feature's [`KernelGroups`] against.
    dispatched: AtomicU64,
    /// The sizes the kernels were built with.
    tuning: Tuning,
}

/// What [`GpuContext::warm_up`](crate::GpuContext::warm_up) did: the kernels it warmed up (those
/// of the groups asked for that no earlier warm-up of the context had) and the wall time it
/// took.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WarmedUp {
    /// Kernels warmed up by this call.
    pub kernels: usize,
    /// Wall time of this call.
    pub time: Duration,
}

/// A kernel's position in [`Kernel::ALL`] (the order of a [`Pipelines`]' entries).
fn index(k: Kernel) -> usize {
    Kernel::ALL.iter().position(|&a| a == k).expect("every kernel is in Kernel::ALL")
}

/// How long one kernel's pipeline took to get ready ([`GpuContext::pipeline_times`](crate::GpuContext::pipeline_times)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PipelineTime {
    /// The kernel's name (`shaders/<name>.wgsl`, pipeline label `raycontact.<name>`).
    pub kernel: &'static str,
    /// Wall time of its creation (shader module, layouts, pipeline), on one of the creating
    /// threads (they run side by side, so these add up to more than the creation's wall time).
    pub create: std::time::Duration,
    /// Wall time of its warm-up: one empty dispatch submitted alone and waited for, in which a
    /// driver that compiles at the first dispatch (lavapipe) generates the machine code; `None`
    /// while not warmed up ([`ContextOptions::warm_up`](crate::ContextOptions::warm_up),
    /// [`GpuContext::warm_up`](crate::GpuContext::warm_up)).
    pub warm_up: Option<std::time::Duration>,
}

/// A kernel's bind-group layout and pipeline, and how long it took to create.
type Compiled = (wgpu::BindGroupLayout, wgpu::ComputePipeline, Duration);

/// Compiles kernel `k` on `device`, inside a validation error scope of the calling thread (wgpu's
/// error scopes are per thread), so that a bad kernel comes back as [`Error::Gpu`].
fn compile(
    device: &wgpu::Device,
    cache: Option<&wgpu::PipelineCache>,
    k: Kernel,
    tuning: &Tuning,
) -> Result<Compiled> {
    crate::blocking::block_on("pipeline creation", compile_async(device, cache, k, tuning))?
}

/// [`compile`], its error scope popped asynchronously (on the web, where nothing may block).
async fn compile_async(
    device: &wgpu::Device,
    cache: Option<&wgpu::PipelineCache>,
    k: Kernel,
    tuning: &Tuning,
) -> Result<Compiled> {
    let start = Instant::now();
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let label = k.label();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(&label),
        source: wgpu::ShaderSource::Wgsl(k.source_with(tuning).into()),
    });
    let entries: Vec<wgpu::BindGroupLayoutEntry> =
        k.bindings().iter().enumerate().map(|(i, &b)| b.layout_entry(i as u32)).collect();
    let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(&label),
        entries: &entries,
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(&label),
        bind_group_layouts: &[Some(&bgl)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(&label),
        layout: Some(&layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache,
    });
    match scope.pop().await {
        Some(e) => Err(Error::Gpu { context: "pipeline creation", message: format!("{label}: {e}") }),
        None => Ok((bgl, pipeline, start.elapsed())),
    }
}

/// Runs `work` on `threads` threads at once (on the calling thread when 1); returns the
/// threads used.
#[cfg(not(target_arch = "wasm32"))]
fn run_on(threads: usize, work: impl Fn() + Sync) -> usize {
    if threads == 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(&work);
            }
        });
    }
    threads
}

/// On the web, `work` runs on the calling thread: there are no threads to spawn, and wgpu's
/// handles are not `Send` there.
#[cfg(target_arch = "wasm32")]
fn run_on(_threads: usize, work: impl Fn()) -> usize {
    work();
    1
}

impl Pipelines {
    /// Threads to compile on: one per available core, at most one per kernel.
    pub fn default_threads() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get()).min(Kernel::ALL.len())
    }

    /// Compiles every kernel on `device` on `threads` threads (at least one; wgpu's `Device` is
    /// `Send + Sync`, and drivers compile pipelines of one device concurrently), the longest
    /// sources first so that the slow kernels do not end up last on one thread. With `cache`,
    /// the driver reads and fills that pipeline cache. The kernels are built with `tuning`.
    pub fn new(
        device: &wgpu::Device,
        cache: Option<&wgpu::PipelineCache>,
        threads: usize,
        tuning: Tuning,
    ) -> Result<Self> {
        let start = Instant::now();
        let mut order: Vec<Kernel> = Kernel::ALL.to_vec();
        order.sort_by_key(|k| std::cmp::Reverse(k.source().len()));
        let next = AtomicUsize::new(0);
        let done: Mutex<Vec<(Kernel, Result<Compiled>)>> = Mutex::new(Vec::new());
        let threads = threads.clamp(1, order.len());
        let work = || {
            while let Some(&k) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                let r = compile(device, cache, k, &tuning);
                done.lock().unwrap_or_else(|p| p.into_inner()).push((k, r));
            }
        };
        let threads = run_on(threads, work);
        Self::collect(done.into_inner().unwrap_or_else(|p| p.into_inner()), start, threads, tuning)
    }

    /// [`Pipelines::new`] without blocking or threads (the web's way): every kernel compiled on
    /// the calling thread, each error scope awaited.
    pub async fn new_async(
        device: &wgpu::Device,
        cache: Option<&wgpu::PipelineCache>,
        tuning: Tuning,
    ) -> Result<Self> {
        let start = Instant::now();
        let mut done = Vec::with_capacity(Kernel::ALL.len());
        for k in Kernel::ALL {
            done.push((k, compile_async(device, cache, k, &tuning).await));
        }
        Self::collect(done, start, 1, tuning)
    }

    /// The set, in kernel order, from what was compiled (the first error, if any).
    fn collect(
        mut done: Vec<(Kernel, Result<Compiled>)>,
        start: Instant,
        threads: usize,
        tuning: Tuning,
    ) -> Result<Self> {
        done.sort_by_key(|&(k, _)| index(k));
        let mut entries = Vec::with_capacity(done.len());
        let mut created_in = Vec::with_capacity(done.len());
        for (k, r) in done {
            let (bgl, pipeline, create) = r?;
            entries.push((k, bgl, pipeline));
            created_in.push(create);
        }
        Ok(Self {
            created: entries.len(),
            warmed: Mutex::new(vec![None; entries.len()]),
            entries,
            elapsed: start.elapsed(),
            threads,
            created_in,
            dispatched: AtomicU64::new(0),
            tuning,
        })
    }

    /// Dispatches the pipeline of every kernel of `groups` not warmed up yet once over zero
    /// workgroups (nothing runs), on scratch buffers, each in a submission of its own that is
    /// waited for (so that its time is its own): drivers that generate the machine code at a
    /// pipeline's first dispatch rather than at its creation (lavapipe: llvmpipe builds its
    /// compute-shader variant when a grid is launched) do it here, not in the first frame that
    /// runs the kernel. Calls from several threads warm up one after the other.
    pub fn warm_up(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        groups: KernelGroups,
    ) -> Result<WarmedUp> {
        let begin = Instant::now();
        let mut warmed = self.warmed.lock().unwrap_or_else(|p| p.into_inner());
        // Longest sources first, as in creation; each pipeline alone.
        let mut order: Vec<usize> = (0..self.entries.len())
            .filter(|&i| warmed[i].is_none() && groups.runs(self.entries[i].0))
            .collect();
        if order.is_empty() {
            return Ok(WarmedUp { kernels: 0, time: begin.elapsed() });
        }
        order.sort_by_key(|&i| std::cmp::Reverse(self.entries[i].0.source().len()));
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let most = order.iter().map(|&i| self.entries[i].0.bindings().len()).max().unwrap_or(0);
        let size = device.limits().max_uniform_buffer_binding_size.min(1 << 16);
        let scratch: Vec<wgpu::Buffer> = (0..most)
            .map(|_| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("raycontact.warm_up"),
                    size,
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::UNIFORM,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let wait = || {
            device
                .poll(wgpu::PollType::wait_indefinitely())
                .map(|_| ())
                .map_err(|e| Error::Gpu { context: "pipeline warm-up", message: e.to_string() })
        };
        // Each kernel warmed up stays so if a later one fails; the error scope is popped either way.
        let mut run = || -> Result<()> {
            for &i in &order {
                let (k, _, ref pipeline) = self.entries[i];
                let start = Instant::now();
                let resources: Vec<wgpu::BindingResource<'_>> =
                    k.bindings().iter().zip(&scratch).map(|(_, b)| b.as_entire_binding()).collect();
                let group = self.bind_group(device, k, &resources);
                let offsets: Vec<u32> =
                    k.bindings().iter().filter(|b| **b == Binding::UniformDynamic).map(|_| 0).collect();
                let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("raycontact.warm_up"),
                });
                {
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("raycontact.warm_up"),
                        timestamp_writes: None,
                    });
                    pass.set_pipeline(pipeline);
                    pass.set_bind_group(0, &group, &offsets);
                    pass.dispatch_workgroups(0, 0, 0);
                }
                queue.submit([encoder.finish()]);
                wait()?;
                warmed[i] = Some(start.elapsed());
            }
            Ok(())
        };
        let ran = run();
        let popped = crate::blocking::block_on("pipeline warm-up", scope.pop())?;
        ran?;
        match popped {
            Some(e) => Err(Error::Gpu { context: "pipeline warm-up", message: e.to_string() }),
            None => Ok(WarmedUp { kernels: order.len(), time: begin.elapsed() }),
        }
    }

    /// The sizes the kernels were built with.
    pub fn tuning(&self) -> Tuning {
        self.tuning
    }

    /// Per kernel, in [`Kernel::ALL`] order, how long its creation and warm-up took (waiting for
    /// a warm-up in progress on another thread).
    pub fn times(&self) -> Vec<PipelineTime> {
        let warmed = self.warmed.lock().unwrap_or_else(|p| p.into_inner());
        self.entries
            .iter()
            .zip(&self.created_in)
            .zip(warmed.iter())
            .map(|(((k, _, _), &create), &warm_up)| PipelineTime { kernel: k.name(), create, warm_up })
            .collect()
    }

    /// The kernels set in a compute pass since the last call ([`Pipelines::pipeline`]), in
    /// [`Kernel::ALL`] order; the record starts again empty.
    pub fn take_dispatched(&self) -> Vec<Kernel> {
        let bits = self.dispatched.swap(0, Ordering::Relaxed);
        Kernel::ALL.iter().enumerate().filter(|(i, _)| bits & (1 << i) != 0).map(|(_, &k)| k).collect()
    }

    /// Compute pipelines this set has created.
    pub fn created(&self) -> usize {
        self.created
    }

    /// Wall time the creation of every pipeline took.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// Threads the pipelines were compiled on.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The bind-group layout and pipeline of kernel `k`.
    pub fn get(&self, k: Kernel) -> (&wgpu::BindGroupLayout, &wgpu::ComputePipeline) {
        let (_, bgl, p) = &self.entries[index(k)];
        (bgl, p)
    }

    /// The pipeline of kernel `k`, for a compute pass to set: recorded as dispatched
    /// ([`Pipelines::take_dispatched`]).
    pub fn pipeline(&self, k: Kernel) -> &wgpu::ComputePipeline {
        self.dispatched.fetch_or(1 << index(k), Ordering::Relaxed);
        self.get(k).1
    }

    /// A bind group of kernel `k` over `resources`, in binding order.
    pub fn bind_group(
        &self,
        device: &wgpu::Device,
        k: Kernel,
        resources: &[wgpu::BindingResource<'_>],
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = resources
            .iter()
            .enumerate()
            .map(|(i, r)| wgpu::BindGroupEntry { binding: i as u32, resource: r.clone() })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&k.label()),
            layout: self.get(k).0,
            entries: &entries,
        })
    }
}
