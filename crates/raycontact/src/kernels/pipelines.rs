//! The compute pipelines of every kernel, created once per device from [`Kernel::source`] and
//! [`Kernel::bindings`].

use super::{Binding, Kernel};

/// Compute pipelines and bind-group layouts of every kernel, created once per device
/// ([`crate::GpuContext`] holds them).
#[derive(Debug)]
pub(crate) struct Pipelines {
    entries: Vec<(Kernel, wgpu::BindGroupLayout, wgpu::ComputePipeline)>,
}

/// The bind-group layout entry of binding `i` of a kernel.
fn layout_entry(i: usize, b: Binding) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding: i as u32,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: match b {
                Binding::Uniform | Binding::UniformDynamic => wgpu::BufferBindingType::Uniform,
                Binding::Storage => wgpu::BufferBindingType::Storage { read_only: true },
                Binding::StorageMut => wgpu::BufferBindingType::Storage { read_only: false },
            },
            has_dynamic_offset: b == Binding::UniformDynamic,
            min_binding_size: None,
        },
        count: None,
    }
}

impl Pipelines {
    /// Compiles every kernel on `device`.
    pub fn new(device: &wgpu::Device) -> Self {
        let entries = Kernel::ALL
            .iter()
            .map(|&k| {
                let label = k.label();
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&label),
                    source: wgpu::ShaderSource::Wgsl(k.source().into()),
                });
                let entries: Vec<wgpu::BindGroupLayoutEntry> =
                    k.bindings().iter().enumerate().map(|(i, &b)| layout_entry(i, b)).collect();
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
                    cache: None,
                });
                (k, bgl, pipeline)
            })
            .collect();
        Self { entries }
    }

    /// The bind-group layout and pipeline of kernel `k`.
    pub fn get(&self, k: Kernel) -> (&wgpu::BindGroupLayout, &wgpu::ComputePipeline) {
        let (_, bgl, p) = self.entries.iter().find(|(e, _, _)| *e == k).expect("every kernel has a pipeline");
        (bgl, p)
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
