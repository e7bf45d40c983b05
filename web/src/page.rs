//! The page's entry points (wasm only): the WebGPU device created on the canvas's adapter, the
//! renderer and raycontact on that one device, and a step the page calls once a frame.

use std::cell::RefCell;
use std::rc::Rc;

use raycontact::wgpu;
use raycontact::{ContextOptions, GpuContext, Scene, Tuning};
use wasm_bindgen::prelude::*;
use web_time::Instant;

use crate::render::Renderer;
use crate::scene::SceneSpec;
use crate::sim::Sim;
use crate::trace::Recorder;

/// What a running demo holds between frames.
struct State {
    /// Kept alive with the device (the browser stops serving a device whose instance is gone).
    _instance: wgpu::Instance,
    sim: Sim,
    renderer: Renderer,
    recorder: Option<Recorder>,
}

/// The demo on a page: created by [`Demo::start`], stepped by [`Demo::step`].
#[wasm_bindgen]
pub struct Demo {
    /// Taken out while a step runs (a step is a future the page awaits).
    state: Rc<RefCell<Option<State>>>,
    info: String,
}

fn js_error(what: &str, e: impl std::fmt::Display) -> JsValue {
    JsValue::from_str(&format!("{what}: {e}"))
}

#[wasm_bindgen]
impl Demo {
    /// Starts the demo of `seed` on `canvas`: a WebGPU adapter and device for the canvas,
    /// raycontact's context on that device (its pipelines created without blocking), the
    /// scene, and the renderer. With `record`, every frame's positions and counts are kept
    /// for [`Demo::trace`]. With `cpu`, raycontact detects on its CPU backend instead (in
    /// WebAssembly, on the page's thread); the page still draws with WebGPU. `tuning` picks
    /// the kernels' [`Tuning`]: `"gpu"` or `"software"`, or `""` for the adapter kind's (a
    /// test builds the other kind's kernels in the browser this way).
    pub async fn start(
        canvas: web_sys::HtmlCanvasElement,
        seed: u32,
        record: bool,
        cpu: bool,
        tuning: String,
    ) -> Result<Demo, JsValue> {
        let requested = match tuning.as_str() {
            "" => None,
            "gpu" => Some(Tuning::GPU),
            "software" => Some(Tuning::SOFTWARE),
            other => return Err(js_error("tuning", format!("{other:?} is not \"gpu\" or \"software\""))),
        };
        std::panic::set_hook(Box::new(|info| web_sys::console::error_1(&info.to_string().into())));
        let size = (canvas.width(), canvas.height());
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = wgpu::Backends::BROWSER_WEBGPU;
        let instance = wgpu::Instance::new(desc);
        let surface = instance
            .create_surface(wgpu::SurfaceTarget::Canvas(canvas))
            .map_err(|e| js_error("canvas", e))?;
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: Some(&surface),
                ..Default::default()
            })
            .await
            .map_err(|e| js_error("no WebGPU adapter", e))?;
        let adapter_info = adapter.get_info();
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("raycontact-web"),
                required_features: raycontact::required_features(),
                required_limits: device_limits(),
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|e| js_error("WebGPU device", e))?;
        // The page's own GPU errors (the renderer's; raycontact catches its own in error scopes)
        // go to the console, where web/test-browser looks for them.
        device.on_uncaptured_error(std::sync::Arc::new(|e| {
            web_sys::console::error_1(&format!("raycontact-web: uncaptured GPU error: {e}").into())
        }));
        let start = Instant::now();
        let (scene, pipelines, tuning) = if cpu {
            (Scene::new_cpu(None).map_err(|e| js_error("CPU backend", e))?, 0, None)
        } else {
            let options = ContextOptions { tuning: requested, ..ContextOptions::default() };
            let ctx = GpuContext::from_device_async_with(
                device.clone(),
                queue.clone(),
                adapter_info.clone(),
                &options,
            )
            .await
            .map_err(|e| js_error("raycontact", e))?;
            (Scene::new(&ctx), ctx.pipelines_created(), Some(ctx.tuning()))
        };
        let context_ms = start.elapsed().as_secs_f64() * 1e3;
        let spec = SceneSpec::new(seed as u64);
        let renderer = Renderer::new(&device, &queue, &adapter, surface, size, &spec.bodies)
            .map_err(|e| js_error("renderer", e))?;
        let counts: Vec<u32> = spec.bodies.iter().map(|b| b.mesh.positions.len() as u32).collect();
        let recorder = record.then(|| Recorder::new(seed as u64, &counts));
        let bodies: Vec<String> = spec
            .bodies
            .iter()
            .map(|b| {
                format!(
                    "{{\"name\":\"{}\",\"vertices\":{},\"triangles\":{}}}",
                    b.name,
                    b.mesh.positions.len(),
                    b.mesh.triangles.len()
                )
            })
            .collect();
        let limits = device.limits();
        let info = format!(
            "{{\"detection\":\"{}\",\"adapter\":{:?},\"backend\":\"{:?}\",\"device_type\":\"{:?}\",\"tuning\":{:?},\"tuning_kind\":\"{}\",\"storage_buffers_per_stage\":{},\"workgroup_storage\":{},\"pipelines\":{},\"context_ms\":{context_ms:.1},\"seed\":{seed},\"bodies\":[{}]}}",
            if cpu { "CPU backend (WebAssembly, one thread)" } else { "WebGPU" },
            adapter_info.name,
            adapter_info.backend,
            adapter_info.device_type,
            tuning.map_or_else(|| "none".to_string(), |t| format!("{t:?}")),
            match tuning {
                None => "none",
                Some(t) if t == Tuning::GPU => "gpu",
                Some(t) if t == Tuning::SOFTWARE => "software",
                Some(_) => "other",
            },
            limits.max_storage_buffers_per_shader_stage,
            limits.max_compute_workgroup_storage_size,
            pipelines,
            bodies.join(",")
        );
        let sim = Sim::new(scene, spec).map_err(|e| js_error("scene", e))?;
        let state = State { _instance: instance, sim, renderer, recorder };
        Ok(Demo { state: Rc::new(RefCell::new(Some(state))), info })
    }

    /// The adapter, the device's limits of note, the pipeline creation time and the bodies,
    /// as JSON.
    pub fn info(&self) -> String {
        self.info.clone()
    }

    /// One frame (a promise of its report as JSON: frame, contacts, collisions, predictions,
    /// the key hash, and the detection, integration and drawing times in milliseconds):
    /// detection on the current positions, the integrator's step, the frame drawn.
    pub fn step(&self) -> js_sys::Promise {
        let cell = self.state.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            let mut state = cell.borrow_mut().take().ok_or("a step is already running")?;
            let result = step(&mut state).await;
            *cell.borrow_mut() = Some(state);
            result.map(|s| JsValue::from_str(&s))
        })
    }

    /// The recorded trace (empty unless started with `record`): see `trace.rs`.
    pub fn trace(&self) -> Result<Vec<u8>, JsValue> {
        let state = self.state.borrow();
        let state = state.as_ref().ok_or("a step is running")?;
        Ok(state.recorder.as_ref().map_or(Vec::new(), |r| r.bytes().to_vec()))
    }
}

/// The step of [`Demo::step`].
async fn step(state: &mut State) -> Result<String, JsValue> {
    let before: Vec<Vec<glam::Vec3>> = match state.recorder {
        Some(_) => (0..state.sim.spec().bodies.len()).map(|b| state.sim.positions(b).to_vec()).collect(),
        None => Vec::new(),
    };
    let f = state.sim.step().await.map_err(|e| js_error("detection", e))?;
    if let Some(r) = &mut state.recorder {
        let views: Vec<&[glam::Vec3]> = before.iter().map(Vec::as_slice).collect();
        r.push(f.frame, f.counts, &views);
    }
    let start = Instant::now();
    state.renderer.set_positions(crate::scene::CLOTH, state.sim.positions(crate::scene::CLOTH));
    state.renderer.draw();
    let draw_ms = start.elapsed().as_secs_f64() * 1e3;
    let c = f.counts;
    Ok(format!(
        "{{\"frame\":{},\"contacts\":{},\"collisions\":{},\"predictions\":{},\"keys\":\"{:016x}\",\"detect_ms\":{:.2},\"integrate_ms\":{:.2},\"draw_ms\":{draw_ms:.2}}}",
        f.frame, c.contacts, c.collisions, c.predictions, c.keys, f.detect_ms, f.integrate_ms
    ))
}

/// The limits the page asks its device for: WebGPU's defaults (all the renderer needs), merged
/// with what raycontact needs (no more than those defaults), as a browser grants them without
/// asking.
fn device_limits() -> wgpu::Limits {
    wgpu::Limits::default().or_better_values_from(&raycontact::required_limits())
}
