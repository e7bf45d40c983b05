//! The device limits and features raycontact needs, derived from the kernel table
//! ([`Kernel::bindings`], [`Kernel::workgroup_bytes`], [`Kernel::uniform_bytes`]) and the layout's
//! constants: what [`required_limits`] asks of a device and [`check`] verifies.
//!
//! Every kernel fits WebGPU's default limits (`wgpu::Limits::default()`): at most
//! [`MAX_STORAGE_BUFFERS`] storage buffers and one uniform buffer per kernel, at most 16 KiB of
//! workgroup memory, [`WG_SIZE`] invocations per workgroup. No feature is needed: timestamps
//! (`TIMESTAMP_QUERY`) are used when the device has them, and no kernel uses subgroups.

use super::{Binding, Kernel};
use crate::error::{Error, Result};
use crate::layout::{MAX_GROUPS_X, Tuning, UNIFORM_STRIDE, WG_SIZE};

/// Storage buffers a kernel may bind: WebGPU's default `maxStorageBuffersPerShaderStage`.
pub const MAX_STORAGE_BUFFERS: u32 = wgpu::Limits::defaults().max_storage_buffers_per_shader_stage;

/// What one kernel uses of a device's limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelLimits {
    /// Storage buffers (`max_storage_buffers_per_shader_stage`).
    pub storage_buffers: u32,
    /// Uniform buffers (`max_uniform_buffers_per_shader_stage`).
    pub uniform_buffers: u32,
    /// Uniform buffers bound with a dynamic offset
    /// (`max_dynamic_uniform_buffers_per_pipeline_layout`).
    pub dynamic_uniform_buffers: u32,
    /// Bindings of its one bind group (`max_bindings_per_bind_group`).
    pub bindings: u32,
    /// Bytes of its uniform binding (`max_uniform_buffer_binding_size`).
    pub uniform_bytes: u32,
    /// Bytes of workgroup memory (`max_compute_workgroup_storage_size`).
    pub workgroup_bytes: u32,
    /// Invocations per workgroup, all along x (`max_compute_invocations_per_workgroup`,
    /// `max_compute_workgroup_size_x`).
    pub invocations: u32,
}

impl Kernel {
    /// The most the kernel uses of a device's limits under any valid [`Tuning`], from its
    /// bindings and layout constants: [`Kernel::limits_with`] a barrier group of [`WG_SIZE`],
    /// the widest (what a device must allow before the tuning is chosen).
    pub fn limits(self) -> KernelLimits {
        self.limits_with(&Tuning { barrier_group: WG_SIZE, ..Tuning::GPU })
    }

    /// What the kernel built with `tuning` uses of a device's limits.
    pub fn limits_with(self, tuning: &Tuning) -> KernelLimits {
        let count = |f: fn(&Binding) -> bool| self.bindings().iter().filter(|b| f(b)).count() as u32;
        KernelLimits {
            storage_buffers: count(|b| matches!(b, Binding::Storage | Binding::StorageMut)),
            uniform_buffers: count(|b| matches!(b, Binding::Uniform | Binding::UniformDynamic)),
            dynamic_uniform_buffers: count(|b| *b == Binding::UniformDynamic),
            bindings: self.bindings().len() as u32,
            uniform_bytes: self.uniform_bytes(),
            workgroup_bytes: self.workgroup_bytes(tuning),
            invocations: self.workgroup_size(tuning),
        }
    }
}

/// The most any kernel uses of each of its limits.
fn most() -> KernelLimits {
    Kernel::ALL.iter().map(|k| k.limits()).fold(KernelLimits::default(), |a, b| KernelLimits {
        storage_buffers: a.storage_buffers.max(b.storage_buffers),
        uniform_buffers: a.uniform_buffers.max(b.uniform_buffers),
        dynamic_uniform_buffers: a.dynamic_uniform_buffers.max(b.dynamic_uniform_buffers),
        bindings: a.bindings.max(b.bindings),
        uniform_bytes: a.uniform_bytes.max(b.uniform_bytes),
        workgroup_bytes: a.workgroup_bytes.max(b.workgroup_bytes),
        invocations: a.invocations.max(b.invocations),
    })
}

/// The limits raycontact's kernels need of a device: merge them into your device request
/// (`wgpu::Limits::or_better_values_from`), or use them as they are.
///
/// Every limit the kernels and the host use is derived from the kernel table and is at or below
/// WebGPU's default (`wgpu::Limits::default()` satisfies them all); every other limit (textures,
/// vertex buffers, render targets, ...) is at its least demanding value. The buffer sizes are
/// WebGPU's defaults (`max_buffer_size` 256 MiB, `max_storage_buffer_binding_size` 128 MiB):
/// enough for about 1.4 million triangles (the BVH nodes with their child pairs, 96 bytes per
/// triangle, are the largest buffer); a scene that outgrows the device's limits is refused with
/// [`Error::TooLarge`] naming the buffer. For larger scenes, ask the adapter's own buffer limits:
///
/// ```no_run
/// # async fn device(adapter: &wgpu::Adapter) -> Result<(), Box<dyn std::error::Error>> {
/// let mut limits = raycontact::required_limits();
/// limits.max_buffer_size = adapter.limits().max_buffer_size;
/// limits.max_storage_buffer_binding_size = adapter.limits().max_storage_buffer_binding_size;
/// let (device, queue) = adapter
///     .request_device(&wgpu::DeviceDescriptor {
///         required_features: raycontact::required_features(),
///         required_limits: wgpu::Limits::default().or_better_values_from(&limits),
///         ..Default::default()
///     })
///     .await?;
/// let ctx = raycontact::GpuContext::from_device(device, queue, adapter.get_info())?;
/// # Ok(()) }
/// ```
pub fn required_limits() -> wgpu::Limits {
    let most = most();
    let defaults = wgpu::Limits::defaults();
    let storage = wgpu::Limits {
        max_bind_groups: 1,
        max_bindings_per_bind_group: most.bindings,
        max_dynamic_uniform_buffers_per_pipeline_layout: most.dynamic_uniform_buffers,
        max_storage_buffers_per_shader_stage: most.storage_buffers,
        max_uniform_buffers_per_shader_stage: most.uniform_buffers,
        max_buffers_and_acceleration_structures_per_shader_stage: Kernel::ALL
            .iter()
            .map(|k| k.limits().storage_buffers + k.limits().uniform_buffers)
            .max()
            .unwrap_or(0),
        max_uniform_buffer_binding_size: most.uniform_bytes as u64,
        max_storage_buffer_binding_size: defaults.max_storage_buffer_binding_size,
        max_buffer_size: defaults.max_buffer_size,
        // The sort's per-pass uniforms sit UNIFORM_STRIDE apart; the ray queries bind storage
        // buffers at offsets aligned to the device's own alignment (256 is the largest alignment
        // WebGPU allows, so every device meets both).
        min_uniform_buffer_offset_alignment: UNIFORM_STRIDE as u32,
        min_storage_buffer_offset_alignment: defaults.min_storage_buffer_offset_alignment,
        // The bind groups one scene creates (each kernel's, for both ping-pong sides): only
        // D3D12 reads this, to size its descriptor heap.
        max_non_sampler_bindings: Kernel::ALL.iter().map(|k| 2 * k.limits().bindings).sum(),
        ..least()
    };
    wgpu::Limits {
        max_compute_workgroup_storage_size: most.workgroup_bytes,
        max_compute_invocations_per_workgroup: most.invocations,
        max_compute_workgroup_size_x: most.invocations,
        max_compute_workgroup_size_y: 1,
        max_compute_workgroup_size_z: 1,
        // Larger dispatches spill into y (`layout::dispatch_size`).
        max_compute_workgroups_per_dimension: MAX_GROUPS_X,
        ..storage
    }
}

/// The features raycontact needs of a device: none. `TIMESTAMP_QUERY` is used when the device
/// has it (per-stage GPU times; without it [`crate::FrameStats`] has wall times only), and no
/// kernel uses subgroups.
pub fn required_features() -> wgpu::Features {
    wgpu::Features::empty()
}

/// Checks a device's (or an adapter's) limits and features against [`required_limits`] and
/// [`required_features`]: [`Error::Limit`] names the first limit that falls short, with the
/// value needed and the value the device has.
pub(crate) fn check(adapter: &str, limits: &wgpu::Limits, features: wgpu::Features) -> Result<()> {
    let mut short = None;
    required_limits().check_limits_with_fail_fn(limits, true, |limit, needed, has| {
        short = Some(Error::Limit { adapter: adapter.to_string(), limit, needed, device: has });
    });
    if let Some(e) = short {
        return Err(e);
    }
    let missing = required_features() - features;
    if !missing.is_empty() {
        return Err(Error::Unsupported {
            adapter: adapter.to_string(),
            what: format!("features {missing:?}"),
        });
    }
    Ok(())
}

/// Every limit at its least demanding value: 0 for a maximum, 256 (the largest WebGPU allows)
/// for an alignment.
const fn least() -> wgpu::Limits {
    wgpu::Limits {
        max_texture_dimension_1d: 0,
        max_texture_dimension_2d: 0,
        max_texture_dimension_3d: 0,
        max_texture_array_layers: 0,
        max_bind_groups: 0,
        max_bind_groups_plus_vertex_buffers: 0,
        max_bindings_per_bind_group: 0,
        max_dynamic_uniform_buffers_per_pipeline_layout: 0,
        max_dynamic_storage_buffers_per_pipeline_layout: 0,
        max_sampled_textures_per_shader_stage: 0,
        max_samplers_per_shader_stage: 0,
        max_storage_buffers_per_shader_stage: 0,
        max_storage_textures_per_shader_stage: 0,
        max_uniform_buffers_per_shader_stage: 0,
        max_binding_array_elements_per_shader_stage: 0,
        max_binding_array_acceleration_structure_elements_per_shader_stage: 0,
        max_binding_array_sampler_elements_per_shader_stage: 0,
        max_uniform_buffer_binding_size: 0,
        max_storage_buffer_binding_size: 0,
        max_vertex_buffers: 0,
        max_buffer_size: 0,
        max_vertex_attributes: 0,
        max_vertex_buffer_array_stride: 0,
        max_inter_stage_shader_variables: 0,
        min_uniform_buffer_offset_alignment: 256,
        min_storage_buffer_offset_alignment: 256,
        max_color_attachments: 0,
        max_color_attachment_bytes_per_sample: 0,
        max_compute_workgroup_storage_size: 0,
        max_compute_invocations_per_workgroup: 0,
        max_compute_workgroup_size_x: 0,
        max_compute_workgroup_size_y: 0,
        max_compute_workgroup_size_z: 0,
        max_compute_workgroups_per_dimension: 0,
        max_immediate_size: 0,
        max_non_sampler_bindings: 0,
        max_task_workgroup_total_count: 0,
        max_task_workgroups_per_dimension: 0,
        max_mesh_workgroup_total_count: 0,
        max_mesh_workgroups_per_dimension: 0,
        max_task_invocations_per_workgroup: 0,
        max_task_invocations_per_dimension: 0,
        max_mesh_invocations_per_workgroup: 0,
        max_mesh_invocations_per_dimension: 0,
        max_task_payload_size: 0,
        max_mesh_output_vertices: 0,
        max_mesh_output_primitives: 0,
        max_mesh_output_layers: 0,
        max_mesh_multiview_view_count: 0,
        max_blas_primitive_count: 0,
        max_blas_geometry_count: 0,
        max_tlas_instance_count: 0,
        max_acceleration_structures_per_shader_stage: 0,
        max_buffers_and_acceleration_structures_per_shader_stage: 0,
        max_multiview_view_count: 0,
        max_ray_dispatch_count: 0,
        max_ray_recursion_depth: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webgpu_defaults_meet_the_requirements() {
        let mut short = Vec::new();
        required_limits().check_limits_with_fail_fn(&wgpu::Limits::default(), false, |name, need, has| {
            short.push((name, need, has))
        });
        assert!(short.is_empty(), "above WebGPU's defaults: {short:?}");
        assert!(check("defaults", &wgpu::Limits::default(), wgpu::Features::empty()).is_ok());
    }

    #[test]
    fn a_device_short_of_storage_buffers_is_refused_by_name() {
        let limits = wgpu::Limits { max_storage_buffers_per_shader_stage: 7, ..wgpu::Limits::default() };
        match check("small", &limits, wgpu::Features::empty()) {
            Err(Error::Limit { limit, needed, device, .. }) => {
                assert_eq!((limit, needed, device), ("max_storage_buffers_per_shader_stage", 8, 7));
            }
            other => panic!("{other:?}"),
        }
    }
}
