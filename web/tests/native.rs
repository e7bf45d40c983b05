//! The demo's simulation natively on the GPU, on a device opened and used the web's way
//! ([`GpuContext::from_device_async`], `detect_async`): every frame's contacts equal the CPU
//! backend's on the same positions. (The browser itself is web/test-browser's.)

#![cfg(not(target_arch = "wasm32"))]

use raycontact::{GpuContext, Scene, wgpu};
use raycontact_web::scene::{DEFAULT_SEED, SceneSpec};
use raycontact_web::sim::Sim;

/// A device on the adapter the environment chooses (`WGPU_BACKEND`, `WGPU_ADAPTER_NAME`), with
/// the limits the page asks for: WebGPU's defaults merged with raycontact's needs.
async fn device() -> (wgpu::Device, wgpu::Queue, wgpu::AdapterInfo) {
    let backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::all());
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    let instance = wgpu::Instance::new(desc);
    let adapters = instance.enumerate_adapters(backends).await;
    let wanted = std::env::var("WGPU_ADAPTER_NAME").unwrap_or_default().to_lowercase();
    let adapter = adapters
        .into_iter()
        .find(|a| a.get_info().name.to_lowercase().contains(&wanted))
        .expect("no GPU adapter: run the tests through scripts/with-gpu (lavapipe)");
    let (device, queue) = adapter
        .request_device(&wgpu::DeviceDescriptor {
            required_features: raycontact::required_features(),
            required_limits: wgpu::Limits::default().or_better_values_from(&raycontact::required_limits()),
            ..Default::default()
        })
        .await
        .expect("a device");
    (device, queue, adapter.get_info())
}

#[test]
fn frames_on_the_gpu_equal_the_cpu_backend() {
    pollster::block_on(async {
        let (device, queue, info) = device().await;
        let ctx = GpuContext::from_device_async(device, queue, info).await.expect("raycontact's context");
        assert_eq!(ctx.pipeline_threads(), 1, "created on the calling thread");
        let mut gpu = Sim::new(Scene::new(&ctx), SceneSpec::new(DEFAULT_SEED)).unwrap();
        let mut cpu = Sim::new(Scene::new_cpu(None).unwrap(), SceneSpec::new(DEFAULT_SEED)).unwrap();
        let bodies = gpu.spec().bodies.len();
        let mut touched = 0;
        for _ in 0..32 {
            let at: Vec<Option<Vec<glam::Vec3>>> =
                (0..bodies).map(|b| Some(gpu.positions(b).to_vec())).collect();
            let f = gpu.step().await.unwrap();
            let c = cpu.detect_at(&at).await.unwrap();
            assert_eq!(f.counts, c, "frame {}", f.frame);
            touched += (f.counts.collisions > 0) as u32;
        }
        assert!(touched > 5, "the cloth reaches the bunny: {touched} frames with collisions");
    });
}
