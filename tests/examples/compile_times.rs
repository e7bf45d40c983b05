//! Cold creation time of each kernel's pipeline, one at a time on one thread: the shader module,
//! the pipeline and a dispatch over zero workgroups (llvmpipe generates its machine code at the
//! first dispatch), waited for. Run it with the driver's own cache off to time a fresh machine:
//!
//! ```sh
//! MESA_SHADER_CACHE_DISABLE=true scripts/with-gpu cargo run --release -p raycontact-tests \
//!     --example compile_times [kernel names...]
//! ```
//!
//! Prints one line per kernel and the sums, longest first: wall seconds, and the CPU seconds of
//! the whole process (all its threads, from `/proc/self/stat` where there is one: the figure
//! to compare on a machine that other work shares).

use std::time::Instant;

use raycontact::internals::kernels::{Binding, Kernel};

/// CPU seconds this process has used (user and system, all threads), or 0 where
/// `/proc/self/stat` cannot be read. Clock ticks of 1/100 s (Linux's USER_HZ).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // The fields after the command name (which is in parentheses): utime and stime are the
    // 12th and 13th of them.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest.split_whitespace().skip(11).take(2).filter_map(|x| x.parse().ok()).collect();
    f.iter().sum::<f64>() / 100.0
}

/// Creates kernel `k`'s pipeline on `device` and dispatches it over nothing; the wall and CPU
/// seconds taken.
fn time(device: &wgpu::Device, queue: &wgpu::Queue, scratch: &[wgpu::Buffer], k: Kernel) -> (f64, f64) {
    let start = Instant::now();
    let cpu = cpu_seconds();
    let label = k.label();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(&label),
        source: wgpu::ShaderSource::Wgsl(k.source().into()),
    });
    let entries: Vec<_> = k.bindings().iter().enumerate().map(|(i, &b)| b.layout_entry(i as u32)).collect();
    let bgl =
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: None, entries: &entries });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(&bgl)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(&label),
        layout: Some(&layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let resources: Vec<wgpu::BindGroupEntry> = (0..k.bindings().len())
        .map(|i| wgpu::BindGroupEntry { binding: i as u32, resource: scratch[i].as_entire_binding() })
        .collect();
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &bgl,
        entries: &resources,
    });
    let offsets: Vec<u32> =
        k.bindings().iter().filter(|b| **b == Binding::UniformDynamic).map(|_| 0).collect();
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &offsets);
        pass.dispatch_workgroups(0, 0, 0);
    }
    queue.submit([encoder.finish()]);
    device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
    (start.elapsed().as_secs_f64(), cpu_seconds() - cpu)
}

fn main() {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
        .expect("an adapter");
    let (device, queue) =
        pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .expect("a device");
    println!("adapter: {}", adapter.get_info().name);
    let scratch: Vec<wgpu::Buffer> = (0..12)
        .map(|_| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 1 << 16,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::UNIFORM,
                mapped_at_creation: false,
            })
        })
        .collect();
    let mut times: Vec<(Kernel, (f64, f64))> = Kernel::ALL
        .iter()
        .filter(|k| wanted.is_empty() || wanted.iter().any(|w| w == k.name()))
        .map(|&k| (k, time(&device, &queue, &scratch, k)))
        .collect();
    times.sort_by(|a, b| b.1.1.total_cmp(&a.1.1));
    println!("{:>20} {:>8} {:>8}", "kernel", "wall s", "cpu s");
    for (k, (wall, cpu)) in &times {
        println!("{:>20} {wall:8.2} {cpu:8.2}  ({} bytes of WGSL)", k.name(), k.source().len());
    }
    let wall: f64 = times.iter().map(|t| t.1.0).sum();
    let cpu: f64 = times.iter().map(|t| t.1.1).sum();
    println!("{:>20} {wall:8.2} {cpu:8.2}", "sum");
}
