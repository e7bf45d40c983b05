//! The GPU context: a `wgpu::Device` and `Queue`, headless or the caller's.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use web_time::Instant;

use crate::kernels::{
    DiskCache, KernelGroups, PipelineCacheDir, PipelineCacheStatus, PipelineTime, Pipelines, WarmedUp, limits,
};
use crate::layout::Tuning;

use crate::error::{Error, Result};

/// How [`GpuContext::with_options`] picks an adapter. `None` fields take wgpu's defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContextOptions {
    /// Backends to consider (all when `None`).
    pub backends: Option<wgpu::Backends>,
    /// Pick the first adapter whose name contains this, case-insensitive.
    pub adapter_name: Option<String>,
    /// Power preference when no name is given (high performance when `None`).
    pub power_preference: Option<wgpu::PowerPreference>,
    /// Threads that compile the pipelines when the context is created (one per available core,
    /// at most one per kernel, when `None`; `Some(1)` compiles on the calling thread).
    pub pipeline_threads: Option<usize>,
    /// Also run every pipeline once (over zero workgroups) when the context is created (see
    /// [`GpuContext::pipeline_creation_time`]). Off by default: a driver that generates machine
    /// code only at a pipeline's first dispatch (Mesa's lavapipe does) then does it at creation,
    /// for every kernel, instead of in the first frames for the kernels a scene uses. A
    /// benchmark turns it on so that no timed frame compiles. [`GpuContext::warm_up`] warms up
    /// only the kernels of the features an application uses, at a time it chooses.
    pub warm_up: bool,
    /// Where compiled pipelines are kept across runs (wgpu's pipeline cache, on Vulkan): the
    /// platform's cache directory by default, a directory of the caller's, or none
    /// ([`PipelineCacheDir`]). [`ContextOptions::from_env`] reads `RAYCONTACT_PIPELINE_CACHE`.
    pub pipeline_cache: PipelineCacheDir,
    /// Work per invocation of the per-triangle kernels; by default chosen by the adapter's kind
    /// ([`Tuning::for_device_type`]: big tiles on a software adapter, one triangle per invocation
    /// on a GPU). Results do not depend on it.
    pub tuning: Option<Tuning>,
}

impl ContextOptions {
    /// Options from `WGPU_BACKEND`, `WGPU_ADAPTER_NAME`, `WGPU_POWER_PREF` and
    /// `RAYCONTACT_PIPELINE_CACHE` (see [`PipelineCacheDir::from_env`]).
    pub fn from_env() -> Self {
        Self {
            backends: wgpu::Backends::from_env(),
            adapter_name: std::env::var("WGPU_ADAPTER_NAME").ok(),
            power_preference: wgpu::PowerPreference::from_env(),
            pipeline_threads: None,
            warm_up: false,
            pipeline_cache: PipelineCacheDir::from_env(),
            tuning: None,
        }
    }

    /// The adapter these options choose (blocking), for an application that creates its own
    /// device on it (with [`crate::required_limits`]) and hands it to
    /// [`GpuContext::from_device`]. Errors: [`Error::NoAdapter`].
    pub fn adapter(&self) -> Result<wgpu::Adapter> {
        crate::blocking::block_on("ContextOptions::adapter", self.adapter_async())?
    }

    /// [`ContextOptions::adapter`], asynchronously.
    pub async fn adapter_async(&self) -> Result<wgpu::Adapter> {
        if wgpu::Instance::enabled_backend_features().is_empty() {
            // wgpu::Instance::new panics in this build: say so as the typed error instead.
            return Err(Error::NoAdapter {
                detail: " (raycontact was built without a wgpu backend: enable one of its features \
                         `vulkan`, `metal`, `dx12`, `gl` or `webgpu`)"
                    .into(),
            });
        }
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        let backends = self.backends.unwrap_or(wgpu::Backends::all());
        desc.backends = backends;
        let instance = wgpu::Instance::new(desc);
        match self.adapter_name.as_ref().filter(|n| !n.is_empty()) {
            Some(wanted) => {
                let adapters = instance.enumerate_adapters(backends).await;
                let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
                let lower = wanted.to_lowercase();
                adapters.into_iter().find(|a| a.get_info().name.to_lowercase().contains(&lower)).ok_or_else(
                    || Error::NoAdapter {
                        detail: format!(" whose name contains {wanted:?} (adapters present: {names:?})"),
                    },
                )
            }
            None => instance
                .request_adapter(&wgpu::RequestAdapterOptions {
                    power_preference: self.power_preference.unwrap_or(wgpu::PowerPreference::HighPerformance),
                    force_fallback_adapter: false,
                    ..Default::default()
                })
                .await
                .map_err(|e| Error::NoAdapter { detail: format!(" ({e}; backends {backends:?})") }),
        }
    }
}

/// A device and queue that raycontact runs on, with what it learnt of the adapter.
///
/// Every compute pipeline raycontact can use is created with the context (on a few threads at
/// once), so that no frame ever waits for a shader to compile: see
/// [`GpuContext::pipeline_creation_time`]. Cloning is cheap: wgpu's handles are reference counted.
///
/// ```no_run
/// let ctx = raycontact::GpuContext::new()?;
/// println!("running on {}", ctx.adapter_name());
/// # Ok::<(), raycontact::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct GpuContext {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    timestamps: bool,
    errors: Arc<Mutex<Vec<String>>>,
    pipelines: Arc<Pipelines>,
    pipeline_time: Duration,
    pipeline_cache: PipelineCacheStatus,
}

impl GpuContext {
    /// A headless device on the adapter chosen by the environment (blocking).
    ///
    /// `WGPU_BACKEND` (e.g. `vulkan`, `metal`, `dx12`, `gl`) limits the backends and
    /// `WGPU_ADAPTER_NAME` picks the first adapter whose name contains it (case-insensitive);
    /// otherwise the default adapter of `WGPU_POWER_PREF` (high performance by default). The
    /// choice is logged at `info` level. Every pipeline is created before this returns. Errors:
    /// [`Error::NoAdapter`] (with how to install a software adapter), [`Error::Limit`] when the
    /// adapter falls short of [`crate::required_limits`], [`Error::Gpu`] when a pipeline cannot
    /// be created.
    pub fn new() -> Result<Self> {
        crate::blocking::block_on("GpuContext::new", Self::new_async())?
    }

    /// [`GpuContext::new`], asynchronously.
    pub async fn new_async() -> Result<Self> {
        Self::with_options_async(ContextOptions::from_env()).await
    }

    /// A headless device on the adapter that `options` choose (blocking).
    ///
    /// ```
    /// use raycontact::{ContextOptions, Error, GpuContext};
    /// let options = ContextOptions { adapter_name: Some("no such adapter".into()), ..Default::default() };
    /// match GpuContext::with_options(options) {
    ///     Err(Error::NoAdapter { .. }) => {}
    ///     other => panic!("{other:?}"),
    /// }
    /// ```
    pub fn with_options(options: ContextOptions) -> Result<Self> {
        crate::blocking::block_on("GpuContext::with_options", Self::with_options_async(options))?
    }

    /// [`GpuContext::with_options`], asynchronously.
    pub async fn with_options_async(options: ContextOptions) -> Result<Self> {
        let adapter = options.adapter_async().await?;
        Self::open(&adapter, &options).await
    }

    /// [`GpuContext::with_options`] on an adapter the caller already has (blocking): one that
    /// [`ContextOptions::adapter`] chose, say, and the caller looked at first (to pick a
    /// [`Tuning`] by its kind), without asking the system for it again. The options' adapter
    /// choice (`backends`, `adapter_name`, `power_preference`) is not read.
    ///
    /// ```no_run
    /// use raycontact::{ContextOptions, GpuContext, Tuning};
    /// let mut options = ContextOptions::from_env();
    /// let adapter = options.adapter()?;
    /// options.tuning = Some(Tuning::for_device_type(adapter.get_info().device_type));
    /// let ctx = GpuContext::with_options_on(&adapter, &options)?;
    /// # Ok::<(), raycontact::Error>(())
    /// ```
    pub fn with_options_on(adapter: &wgpu::Adapter, options: &ContextOptions) -> Result<Self> {
        crate::blocking::block_on("GpuContext::with_options_on", Self::open(adapter, options))?
    }

    /// [`GpuContext::with_options_on`], asynchronously.
    pub async fn with_options_on_async(adapter: &wgpu::Adapter, options: &ContextOptions) -> Result<Self> {
        Self::open(adapter, options).await
    }

    /// A device on a given adapter, with every limit the adapter offers (so that scenes may use
    /// buffers as large as it allows) and the features raycontact uses when present
    /// (`TIMESTAMP_QUERY`). [`Error::Limit`] when the adapter falls short of
    /// [`crate::required_limits`]. Every pipeline is created before this returns, on one thread
    /// per available core (not warmed up: see [`ContextOptions::warm_up`]).
    pub async fn from_adapter(adapter: &wgpu::Adapter) -> Result<Self> {
        let options = ContextOptions { pipeline_cache: PipelineCacheDir::from_env(), ..Default::default() };
        Self::open(adapter, &options).await
    }

    async fn open(adapter: &wgpu::Adapter, options: &ContextOptions) -> Result<Self> {
        let info = adapter.get_info();
        let limits = adapter.limits();
        let mut optional = wgpu::Features::TIMESTAMP_QUERY;
        if options.pipeline_cache.directory().is_some() {
            optional |= wgpu::Features::PIPELINE_CACHE;
        }
        let features = limits::required_features() | (adapter.features() & optional);
        limits::check(&info.name, &limits, adapter.features())?;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("raycontact"),
                required_features: features,
                required_limits: limits,
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|source| Error::RequestDevice { adapter: info.name.clone(), source })?;
        log::info!(
            "raycontact: adapter {:?} ({:?}, {:?}, driver {:?} {:?}), timestamps: {}",
            info.name,
            info.device_type,
            info.backend,
            info.driver,
            info.driver_info,
            features.contains(wgpu::Features::TIMESTAMP_QUERY)
        );
        Self::wrap(device, queue, info, options).await
    }

    /// Runs on a device and queue that the caller already owns (a renderer's, say). The device
    /// must meet [`crate::required_limits`] (WebGPU's default limits do: a device created with
    /// `wgpu::Limits::default()` is fine) and have [`crate::required_features`] (none);
    /// [`Error::Limit`] names the first limit it falls short of, with the value needed and the
    /// value it has. `TIMESTAMP_QUERY` is used when the device has it. raycontact installs no
    /// error handler on a borrowed device: it wraps its own work in error scopes and returns what
    /// they catch as [`Error::Gpu`]. Every pipeline is created before this returns, on one
    /// thread per available core (not warmed up: see [`ContextOptions::warm_up`]).
    pub fn from_device(
        device: wgpu::Device,
        queue: wgpu::Queue,
        adapter_info: wgpu::AdapterInfo,
    ) -> Result<Self> {
        let options = ContextOptions { pipeline_cache: PipelineCacheDir::from_env(), ..Default::default() };
        Self::from_device_with(device, queue, adapter_info, &options)
    }

    /// [`GpuContext::from_device`] with the pipeline options of `options` (threads, warm-up,
    /// pipeline cache; the adapter-selection fields are not used). The pipeline cache needs a
    /// device created with `Features::PIPELINE_CACHE`; without it there is none.
    pub fn from_device_with(
        device: wgpu::Device,
        queue: wgpu::Queue,
        adapter_info: wgpu::AdapterInfo,
        options: &ContextOptions,
    ) -> Result<Self> {
        limits::check(&adapter_info.name, &device.limits(), device.features())?;
        Self::wrap_borrowed(device, queue, adapter_info, options)
    }

    /// [`GpuContext::from_device`] without blocking: the pipelines are created on the calling
    /// thread, one after the other, and their error scopes awaited. This is the way on the web
    /// (`wasm32` with the `webgpu` feature), where nothing may block and there are no threads;
    /// it works natively too.
    pub async fn from_device_async(
        device: wgpu::Device,
        queue: wgpu::Queue,
        adapter_info: wgpu::AdapterInfo,
    ) -> Result<Self> {
        Self::from_device_async_with(device, queue, adapter_info, &ContextOptions::default()).await
    }

    /// [`GpuContext::from_device_async`] with the kernels built for `options.tuning` (by
    /// default the adapter kind's, [`Tuning::for_device_type`]); the other fields of `options`
    /// are not used (no threads, cache or warm-up here). [`Error::InvalidInput`] for a tuning
    /// that is not [`Tuning::is_valid`].
    pub async fn from_device_async_with(
        device: wgpu::Device,
        queue: wgpu::Queue,
        adapter_info: wgpu::AdapterInfo,
        options: &ContextOptions,
    ) -> Result<Self> {
        limits::check(&adapter_info.name, &device.limits(), device.features())?;
        Self::borrowed_async(device, queue, adapter_info, options).await
    }

    /// The context on a device, its pipelines created on the calling thread, without blocking
    /// (nor a pipeline cache or warm-up).
    async fn borrowed_async(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: wgpu::AdapterInfo,
        options: &ContextOptions,
    ) -> Result<Self> {
        let start = Instant::now();
        let tuning = tuning_of(options, &info)?;
        let pipelines = Pipelines::new_async(&device, None, tuning).await?;
        Ok(Self::assemble(device, queue, info, pipelines, start, false, PipelineCacheStatus::default()))
    }

    /// An owned device's context: its uncaptured errors collected, its pipelines created (on
    /// the web on the calling thread, without blocking or warm-up).
    async fn wrap(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: wgpu::AdapterInfo,
        options: &ContextOptions,
    ) -> Result<Self> {
        let errors: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            log::error!("raycontact: uncaptured GPU error: {e}");
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(e.to_string());
        }));
        #[cfg(not(target_arch = "wasm32"))]
        let mut ctx = Self::wrap_borrowed(device, queue, info, options)?;
        #[cfg(target_arch = "wasm32")]
        let mut ctx = Self::borrowed_async(device, queue, info, options).await?;
        ctx.errors = errors;
        Ok(ctx)
    }

    fn wrap_borrowed(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: wgpu::AdapterInfo,
        options: &ContextOptions,
    ) -> Result<Self> {
        let threads = options.pipeline_threads.unwrap_or_else(Pipelines::default_threads);
        let warm_up = options.warm_up;
        let start = Instant::now();
        let tuning = tuning_of(options, &info)?;
        let disk = DiskCache::open(&device, &info, &options.pipeline_cache, &tuning);
        let pipelines = Pipelines::new(&device, disk.as_ref().map(DiskCache::cache), threads, tuning)?;
        if warm_up {
            pipelines.warm_up(&device, &queue, KernelGroups::ALL)?;
        }
        let pipeline_cache = disk.map(|d| d.store()).unwrap_or_default();
        Ok(Self::assemble(device, queue, info, pipelines, start, warm_up, pipeline_cache))
    }

    /// The context around its pipelines, whose creation began at `start`.
    fn assemble(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: wgpu::AdapterInfo,
        pipelines: Pipelines,
        start: Instant,
        warm_up: bool,
        pipeline_cache: PipelineCacheStatus,
    ) -> Self {
        // Timestamps are read back blocking: not on the web, where nothing may block.
        let timestamps =
            device.features().contains(wgpu::Features::TIMESTAMP_QUERY) && !cfg!(target_arch = "wasm32");
        let pipeline_time = start.elapsed();
        log::info!(
            "raycontact: {} pipelines created in {:.3} s on {} thread(s), warmed up: {warm_up}; {:.3} s in all; pipeline cache: {}",
            pipelines.created(),
            pipelines.elapsed().as_secs_f64(),
            pipelines.threads(),
            pipeline_time.as_secs_f64(),
            match &pipeline_cache.path {
                Some(p) =>
                    format!("{} ({})", p.display(), if pipeline_cache.loaded { "loaded" } else { "new" }),
                None => "none".into(),
            }
        );
        Self {
            device,
            queue,
            info,
            timestamps,
            errors: Arc::new(Mutex::new(Vec::new())),
            pipelines: Arc::new(pipelines),
            pipeline_time,
            pipeline_cache,
        }
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The adapter's description.
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    /// The adapter's name.
    pub fn adapter_name(&self) -> &str {
        &self.info.name
    }

    /// Whether the adapter is a software one (lavapipe, WARP, SwiftShader).
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// Whether GPU timestamps are available (never on the web: they are read back blocking).
    pub fn has_timestamps(&self) -> bool {
        self.timestamps
    }

    /// How long making every compute pipeline ready took when the context was created (wall
    /// time): creating them (on [`GpuContext::pipeline_threads`] threads), then one warm-up
    /// dispatch of each over zero workgroups, since some drivers generate the machine code only
    /// at a pipeline's first dispatch (lavapipe does: there the warm-up is most of this time).
    /// This is the compile stall that the first frames would otherwise meet; no pipeline is
    /// created after the context (see [`GpuContext::pipelines_created`]).
    pub fn pipeline_creation_time(&self) -> Duration {
        self.pipeline_time
    }

    /// Per kernel, how long its pipeline took to create and (with [`ContextOptions::warm_up`] or
    /// [`GpuContext::warm_up`]) to warm up, in [`Kernel`](crate::internals::kernels::Kernel)
    /// order (waiting for a [`GpuContext::warm_up`] in progress on another thread).
    pub fn pipeline_times(&self) -> Vec<PipelineTime> {
        self.pipelines.times()
    }

    /// Runs each pipeline of `groups` that no earlier warm-up of this context ran once, over zero
    /// workgroups, and waits for it: a driver that generates a pipeline's machine code only at
    /// its first dispatch (Mesa's lavapipe) does it here, instead of in the first frame that runs
    /// the kernel (a detection's kernels in the first detection, [`KernelGroups::ITERATIVE`]'s
    /// when the scene first walks, and so on). On a driver that compiles at creation it costs a
    /// submission per kernel. Every context's clones share what was warmed up. Errors:
    /// [`Error::Gpu`] (a pipeline the device rejects, or the wait failing); on the web, where
    /// nothing may block (and browsers compile at creation), [`Error::WouldBlock`].
    ///
    /// On lavapipe (a 2-core AMD EPYC VM, Mesa's own shader cache off; `raycontact-bench
    /// pipelines --no-cache --warm-up GROUPS`, 3 runs): every kernel 5.6–5.8 s,
    /// [`KernelGroups::DETECTION`] 2.13–2.16 s, with [`KernelGroups::ITERATIVE`] 3.16–3.21 s.
    /// [`Scene::warm_up`](crate::Scene::warm_up) warms up the groups a scene's settings run.
    pub fn warm_up(&self, groups: KernelGroups) -> Result<WarmedUp> {
        self.pipelines.warm_up(&self.device, &self.queue, groups)
    }

    /// The pipeline cache the context was created with: its file, whether the pipelines came
    /// from its data, and what was written back ([`ContextOptions::pipeline_cache`]).
    pub fn pipeline_cache(&self) -> &PipelineCacheStatus {
        &self.pipeline_cache
    }

    /// The work per invocation the kernels were built with ([`ContextOptions::tuning`]).
    pub fn tuning(&self) -> Tuning {
        self.pipelines.tuning()
    }

    /// Threads the pipelines were compiled on (see [`ContextOptions::pipeline_threads`]).
    pub fn pipeline_threads(&self) -> usize {
        self.pipelines.threads()
    }

    /// Compute pipelines this context has created: one per kernel, all of them when the context
    /// was created. The count never changes afterwards; tests check that frames create none.
    pub fn pipelines_created(&self) -> usize {
        self.pipelines.created()
    }

    /// The compute pipelines of every kernel, created with the context.
    pub(crate) fn pipelines(&self) -> Arc<Pipelines> {
        self.pipelines.clone()
    }

    /// Runs `f` inside validation and out-of-memory error scopes, so that a GPU error raised by
    /// raycontact's own work comes back as [`Error::Gpu`] (on a borrowed device as on an owned
    /// one) instead of reaching the device's uncaptured-error handler.
    pub(crate) async fn scoped_async<T>(
        &self,
        context: &'static str,
        f: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = f.await;
        let v = validation.pop().await;
        let o = oom.pop().await;
        match v.or(o) {
            Some(e) => Err(Error::Gpu { context, message: e.to_string() }),
            None => out,
        }
    }

    /// [`Self::scoped_async`] for blocking work.
    pub(crate) fn scoped<T>(&self, context: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = f();
        let v = crate::blocking::block_on(context, validation.pop())?;
        let o = crate::blocking::block_on(context, oom.pop())?;
        match v.or(o) {
            Some(e) => Err(Error::Gpu { context, message: e.to_string() }),
            None => out,
        }
    }

    /// Blocks until the GPU is idle, then reports any GPU error raised since the last check.
    pub(crate) fn wait(&self, context: &'static str) -> Result<()> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Gpu { context, message: e.to_string() })?;
        self.take_error(context)
    }

    /// Reports a GPU error raised since the last check.
    pub(crate) fn take_error(&self, context: &'static str) -> Result<()> {
        let mut errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        match errors.drain(..).next() {
            Some(message) => Err(Error::Gpu { context, message }),
            None => Ok(()),
        }
    }

    /// Reads `size` bytes of `buffer` (which must have `MAP_READ`) from `offset`, after waiting
    /// for the GPU.
    pub(crate) fn read_mapped(
        &self,
        buffer: &wgpu::Buffer,
        label: &'static str,
        offset: u64,
        size: u64,
    ) -> Result<Vec<u8>> {
        let read = self.map_read_async(buffer, label, offset, size, true, |bytes| bytes.to_vec());
        crate::blocking::block_on(label, read)?
    }

    /// Maps `size` bytes of `buffer` (which must have `MAP_READ`) from `offset` and returns what
    /// `read` makes of them, so that a caller takes what it needs straight from the mapping (one
    /// copy, no intermediate `Vec<u8>`); the buffer is unmapped before it returns. With
    /// `blocking`, it waits for the GPU in place (the future is then ready at once); otherwise it
    /// polls the device each time it is polled and yields in between, never blocking the thread.
    pub(crate) async fn map_read_async<R>(
        &self,
        buffer: &wgpu::Buffer,
        label: &'static str,
        offset: u64,
        size: u64,
        blocking: bool,
        read: impl FnOnce(&[u8]) -> R,
    ) -> Result<R> {
        if size == 0 {
            return Ok(read(&[]));
        }
        self.map_for_read(buffer.slice(offset..offset + size), label, blocking).await?;
        let result = match buffer.get_mapped_range(offset..offset + size) {
            Ok(view) => Ok(read(&view)),
            Err(e) => Err(Error::Readback { buffer: label, message: e.to_string() }),
        };
        buffer.unmap();
        self.take_error("readback")?;
        result
    }

    /// Maps `slice` (of a buffer with `MAP_READ`, more than 0 bytes) for reading and waits for
    /// the mapping, as [`Self::map_read_async`] does; the caller then takes views of it
    /// ([`wgpu::Buffer::get_mapped_range`]) and unmaps the buffer. A GPU error raised by then
    /// outside the caller's error scopes (taken as [`Self::wait`] takes them) is returned with the
    /// buffer unmapped again (left mapped, the next frame's copy into it would fail too), as is
    /// a failed wait (its pending mapping cancelled).
    pub(crate) async fn map_for_read(
        &self,
        slice: wgpu::BufferSlice<'_>,
        label: &'static str,
        blocking: bool,
    ) -> Result<()> {
        let (tx, rx) = futures_intrusive::channel::shared::oneshot_channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        if blocking {
            if let Err(e) = self.device.poll(wgpu::PollType::wait_indefinitely()) {
                slice.buffer().unmap();
                return Err(Error::Gpu { context: "readback", message: e.to_string() });
            }
        }
        let mapped = self
            .polled(rx.receive())
            .await
            .ok_or(Error::Readback { buffer: label, message: "map callback dropped".into() })?;
        mapped.map_err(|e| Error::Readback { buffer: label, message: e.to_string() })?;
        if let Err(e) = self.take_error("readback") {
            slice.buffer().unmap();
            return Err(e);
        }
        Ok(())
    }

    /// Awaits `fut`, polling the device (without blocking) each time the future is polled.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) async fn polled<F: std::future::Future>(&self, fut: F) -> F::Output {
        let mut fut = std::pin::pin!(fut);
        std::future::poll_fn(|cx| {
            let _ = self.device.poll(wgpu::PollType::Poll);
            match fut.as_mut().poll(cx) {
                std::task::Poll::Ready(v) => std::task::Poll::Ready(v),
                std::task::Poll::Pending => {
                    cx.waker().wake_by_ref();
                    std::task::Poll::Pending
                }
            }
        })
        .await
    }

    /// Awaits `fut`. In the browser the device needs no polling (and must not be spun on: a
    /// future that woke itself at once would keep the page's event loop from ever delivering
    /// the buffer mapping it waits for): its own callbacks wake the future.
    #[cfg(target_arch = "wasm32")]
    pub(crate) async fn polled<F: std::future::Future>(&self, fut: F) -> F::Output {
        fut.await
    }
}

/// The tuning `options` ask for, or the adapter kind's; [`Error::InvalidInput`] when it is not
/// one the kernels can be built with.
fn tuning_of(options: &ContextOptions, info: &wgpu::AdapterInfo) -> Result<Tuning> {
    let tuning = options.tuning.unwrap_or_else(|| Tuning::for_device_type(info.device_type));
    if !tuning.is_valid() {
        return Err(Error::InvalidInput { what: format!("{tuning:?}: {}", Tuning::requirements()) });
    }
    Ok(tuning)
}
