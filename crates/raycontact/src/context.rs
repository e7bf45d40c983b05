//! The GPU context: a `wgpu::Device` and `Queue`, headless or the caller's.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use web_time::Instant;

use crate::kernels::{Pipelines, limits};

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
    /// benchmark turns it on so that no timed frame compiles.
    pub warm_up: bool,
}

impl ContextOptions {
    /// Options from `WGPU_BACKEND`, `WGPU_ADAPTER_NAME` and `WGPU_POWER_PREF`.
    pub fn from_env() -> Self {
        Self {
            backends: wgpu::Backends::from_env(),
            adapter_name: std::env::var("WGPU_ADAPTER_NAME").ok(),
            power_preference: wgpu::PowerPreference::from_env(),
            pipeline_threads: None,
            warm_up: false,
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
        let threads = options.pipeline_threads.unwrap_or_else(Pipelines::default_threads);
        Self::open(&adapter, threads, options.warm_up).await
    }

    /// A device on a given adapter, with every limit the adapter offers (so that scenes may use
    /// buffers as large as it allows) and the features raycontact uses when present
    /// (`TIMESTAMP_QUERY`). [`Error::Limit`] when the adapter falls short of
    /// [`crate::required_limits`]. Every pipeline is created before this returns, on one thread
    /// per available core (not warmed up: see [`ContextOptions::warm_up`]).
    pub async fn from_adapter(adapter: &wgpu::Adapter) -> Result<Self> {
        Self::open(adapter, Pipelines::default_threads(), false).await
    }

    async fn open(adapter: &wgpu::Adapter, threads: usize, warm_up: bool) -> Result<Self> {
        let info = adapter.get_info();
        let limits = adapter.limits();
        let features = limits::required_features() | (adapter.features() & wgpu::Features::TIMESTAMP_QUERY);
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
        Self::wrap(device, queue, info, threads, warm_up).await
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
        limits::check(&adapter_info.name, &device.limits(), device.features())?;
        Self::wrap_borrowed(device, queue, adapter_info, Pipelines::default_threads(), false)
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
        limits::check(&adapter_info.name, &device.limits(), device.features())?;
        Self::borrowed_async(device, queue, adapter_info).await
    }

    /// The context on a device, its pipelines created on the calling thread, without blocking.
    async fn borrowed_async(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: wgpu::AdapterInfo,
    ) -> Result<Self> {
        let start = Instant::now();
        let pipelines = Pipelines::new_async(&device, None).await?;
        Ok(Self::assemble(device, queue, info, pipelines, start, false))
    }

    /// An owned device's context: its uncaptured errors collected, its pipelines created (on
    /// the web on the calling thread, without blocking or warm-up).
    async fn wrap(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: wgpu::AdapterInfo,
        threads: usize,
        warm_up: bool,
    ) -> Result<Self> {
        let errors: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            log::error!("raycontact: uncaptured GPU error: {e}");
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(e.to_string());
        }));
        #[cfg(not(target_arch = "wasm32"))]
        let mut ctx = Self::wrap_borrowed(device, queue, info, threads, warm_up)?;
        #[cfg(target_arch = "wasm32")]
        let mut ctx = {
            let _ = (threads, warm_up);
            Self::borrowed_async(device, queue, info).await?
        };
        ctx.errors = errors;
        Ok(ctx)
    }

    fn wrap_borrowed(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: wgpu::AdapterInfo,
        threads: usize,
        warm_up: bool,
    ) -> Result<Self> {
        let start = Instant::now();
        let pipelines = Pipelines::new(&device, None, threads)?;
        if warm_up {
            pipelines.warm_up(&device, &queue)?;
        }
        Ok(Self::assemble(device, queue, info, pipelines, start, warm_up))
    }

    /// The context around its pipelines, whose creation began at `start`.
    fn assemble(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: wgpu::AdapterInfo,
        pipelines: Pipelines,
        start: Instant,
        warm_up: bool,
    ) -> Self {
        // Timestamps are read back blocking: not on the web, where nothing may block.
        let timestamps =
            device.features().contains(wgpu::Features::TIMESTAMP_QUERY) && !cfg!(target_arch = "wasm32");
        let pipeline_time = start.elapsed();
        log::info!(
            "raycontact: {} pipelines created in {:.3} s on {} thread(s), warmed up: {warm_up}; {:.3} s in all",
            pipelines.created(),
            pipelines.elapsed().as_secs_f64(),
            pipelines.threads(),
            pipeline_time.as_secs_f64()
        );
        Self {
            device,
            queue,
            info,
            timestamps,
            errors: Arc::new(Mutex::new(Vec::new())),
            pipelines: Arc::new(pipelines),
            pipeline_time,
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
        crate::blocking::block_on(label, self.read_mapped_async(buffer, label, offset, size, true))?
    }

    /// [`Self::read_mapped`] as a future. With `blocking`, it waits for the GPU in place (the
    /// future is then ready at once); otherwise it polls the device each time it is polled and
    /// yields in between, never blocking the thread.
    pub(crate) async fn read_mapped_async(
        &self,
        buffer: &wgpu::Buffer,
        label: &'static str,
        offset: u64,
        size: u64,
        blocking: bool,
    ) -> Result<Vec<u8>> {
        if size == 0 {
            return Ok(Vec::new());
        }
        let slice = buffer.slice(offset..offset + size);
        let (tx, rx) = futures_intrusive::channel::shared::oneshot_channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        if blocking {
            self.wait("readback")?;
        }
        let mapped = self
            .polled(rx.receive())
            .await
            .ok_or(Error::Readback { buffer: label, message: "map callback dropped".into() })?;
        mapped.map_err(|e| Error::Readback { buffer: label, message: e.to_string() })?;
        let bytes = {
            let view = slice
                .get_mapped_range()
                .map_err(|e| Error::Readback { buffer: label, message: e.to_string() })?;
            view.to_vec()
        };
        buffer.unmap();
        self.take_error("readback")?;
        Ok(bytes)
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
