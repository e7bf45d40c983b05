//! A small offscreen renderer for the examples (not part of raycontact): the bodies' triangles
//! drawn with a depth buffer and simple lighting (`mesh.wgsl`) into a 4× multisampled texture,
//! resolved, copied into a buffer and read back as RGBA8 (sRGB). It runs on the device of the
//! detection (`Renderer::new` with a [`raycontact::GpuContext`]'s device and queue), or on a
//! headless device of its own ([`Renderer::headless`], for the CPU backend).
//!
//! Everything is created once: the pipeline, the targets, the readback buffer, and each mesh's
//! vertex and index buffers at its first frame (again only if a mesh grows). A frame writes the
//! vertices (position, normal, colour) with the queue, records one render pass and one copy, and
//! waits for the readback.

mod frames;

pub use frames::{Image, PngFrames};

use std::borrow::Cow;

use glam::Vec3;
use raycontact::wgpu;

/// What can go wrong while rendering.
#[derive(Debug)]
pub enum RenderError {
    /// No adapter to render with (the CPU backend's `--png` needs one).
    NoAdapter(String),
    /// A wgpu error (device request, validation, readback).
    Gpu(String),
    /// Writing a PNG file.
    Io(std::io::Error),
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenderError::NoAdapter(m) => write!(f, "no adapter to render with: {m}"),
            RenderError::Gpu(m) => write!(f, "rendering failed: {m}"),
            RenderError::Io(e) => write!(f, "writing a frame: {e}"),
        }
    }
}

impl std::error::Error for RenderError {}

const COLOR: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;
const DEPTH: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
const SAMPLES: u32 = 4;
/// Bytes of one vertex: position, normal, colour (3 × f32 each).
const VERTEX_BYTES: u64 = 36;

/// A mesh to draw: its triangles at these positions, in one colour (linear RGB).
#[derive(Clone, Copy, Debug)]
pub struct Mesh<'a> {
    /// Vertex positions.
    pub positions: &'a [Vec3],
    /// Triangles (indices into `positions`).
    pub triangles: &'a [[u32; 3]],
    /// Linear RGB colour.
    pub color: [f32; 3],
    /// Smooth shading from area-weighted vertex normals; flat (per triangle) otherwise.
    pub smooth: bool,
}

/// A pinhole camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Where it stands.
    pub eye: Vec3,
    /// What it looks at.
    pub target: Vec3,
    /// Its up direction.
    pub up: Vec3,
    /// Vertical field of view (radians).
    pub fov_y: f32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct FrameUniform {
    view_proj: [[f32; 4]; 4],
    eye: [f32; 4],
    key: [f32; 4],
    fill: [f32; 4],
    up: [f32; 4],
}

#[derive(Debug)]
struct MeshBuffers {
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
    vertex_count: usize,
    index_count: u32,
    /// The triangles the index buffer holds.
    triangles: Vec<[u32; 3]>,
}

/// The offscreen renderer.
#[derive(Debug)]
pub struct Renderer {
    device: wgpu::Device,
    queue: wgpu::Queue,
    width: u32,
    height: u32,
    pipeline: wgpu::RenderPipeline,
    uniform: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    msaa: wgpu::TextureView,
    depth: wgpu::TextureView,
    resolved: wgpu::Texture,
    resolved_view: wgpu::TextureView,
    readback: wgpu::Buffer,
    padded_row: u32,
    meshes: Vec<MeshBuffers>,
    staging: Vec<f32>,
    allocations: u64,
}

impl Renderer {
    /// A renderer of `width × height` images on `device` (the detection's, say).
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        width: u32,
        height: u32,
    ) -> Result<Self, RenderError> {
        let (width, height) = (width.max(1), height.max(1));
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let r = Self::create(device, queue, width, height);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(RenderError::Gpu(e.to_string()));
        }
        Ok(r)
    }

    /// A renderer on a headless device of its own, on the adapter `WGPU_BACKEND` and
    /// `WGPU_ADAPTER_NAME` choose ([`raycontact::ContextOptions::from_env`]); a software
    /// adapter (lavapipe) does. [`RenderError::NoAdapter`] when there is none.
    pub fn headless(width: u32, height: u32) -> Result<Self, RenderError> {
        let options = raycontact::ContextOptions::from_env();
        let backends = options.backends.unwrap_or(wgpu::Backends::all());
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = backends;
        let instance = wgpu::Instance::new(desc);
        let adapter = pollster::block_on(async {
            match options.adapter_name.filter(|n| !n.is_empty()) {
                Some(name) => {
                    let lower = name.to_lowercase();
                    instance
                        .enumerate_adapters(backends)
                        .await
                        .into_iter()
                        .find(|a| a.get_info().name.to_lowercase().contains(&lower))
                        .ok_or_else(|| RenderError::NoAdapter(format!("none whose name contains {name:?}")))
                }
                None => instance
                    .request_adapter(&wgpu::RequestAdapterOptions::default())
                    .await
                    .map_err(|e| RenderError::NoAdapter(format!("{e} (backends {backends:?})"))),
            }
        })?;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("raycontact-examples.render"),
            ..Default::default()
        }))
        .map_err(|e| RenderError::Gpu(e.to_string()))?;
        Self::new(&device, &queue, width, height)
    }

    fn create(device: &wgpu::Device, queue: &wgpu::Queue, width: u32, height: u32) -> Self {
        let mut allocations = 0;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("raycontact-examples.mesh"),
            source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(include_str!("mesh.wgsl"))),
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("raycontact-examples.frame"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("raycontact-examples.mesh"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let attributes = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Float32x3];
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("raycontact-examples.mesh"),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: VERTEX_BYTES,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &attributes,
                })],
            },
            primitive: wgpu::PrimitiveState { cull_mode: None, ..Default::default() },
            depth_stencil: Some(wgpu::DepthStencilState {
                format: DEPTH,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Less),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: wgpu::MultisampleState { count: SAMPLES, ..Default::default() },
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: COLOR,
                    blend: None,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        });
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("raycontact-examples.frame"),
            size: size_of::<FrameUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        allocations += 1;
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("raycontact-examples.frame"),
            layout: &layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() }],
        });
        let target = |label, format, samples, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
                mip_level_count: 1,
                sample_count: samples,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let attachment = wgpu::TextureUsages::RENDER_ATTACHMENT;
        let msaa =
            target("raycontact-examples.msaa", COLOR, SAMPLES, attachment).create_view(&Default::default());
        let depth =
            target("raycontact-examples.depth", DEPTH, SAMPLES, attachment).create_view(&Default::default());
        let resolved =
            target("raycontact-examples.resolved", COLOR, 1, attachment | wgpu::TextureUsages::COPY_SRC);
        let padded_row =
            (4 * width).div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("raycontact-examples.readback"),
            size: padded_row as u64 * height as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        allocations += 4;
        Self {
            device: device.clone(),
            queue: queue.clone(),
            width,
            height,
            pipeline,
            uniform,
            bind_group,
            msaa,
            depth,
            resolved_view: resolved.create_view(&Default::default()),
            resolved,
            readback,
            padded_row,
            meshes: Vec::new(),
            staging: Vec::new(),
            allocations,
        }
    }

    /// The image size.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Buffers and textures created so far (constant once every mesh has been drawn once).
    pub fn allocations(&self) -> u64 {
        self.allocations
    }

    /// Draws `meshes` (in the same order and with the same triangles every frame, for their
    /// buffers to be reused) seen from `camera`, and reads the image back.
    pub fn render(&mut self, camera: &Camera, meshes: &[Mesh<'_>]) -> Result<Image, RenderError> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let result = self.draw(camera, meshes);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(RenderError::Gpu(e.to_string()));
        }
        result
    }

    fn draw(&mut self, camera: &Camera, meshes: &[Mesh<'_>]) -> Result<Image, RenderError> {
        let aspect = self.width as f32 / self.height as f32;
        let view = glam::camera::rh::view::look_at_mat4(camera.eye, camera.target, camera.up);
        // wgpu's clip space: z in [0, 1], y up (Direct3D's convention).
        let proj = glam::camera::rh::proj::directx::perspective(camera.fov_y, aspect, 0.01, 100.0);
        let forward = (camera.target - camera.eye).normalize();
        let right = forward.cross(camera.up).normalize();
        let up = right.cross(forward);
        let key = (up * 1.0 - right * 0.6 - forward * 0.5).normalize();
        let fill = (right * 0.8 - forward * 0.4 + up * 0.2).normalize();
        let frame = FrameUniform {
            view_proj: (proj * view).to_cols_array_2d(),
            eye: camera.eye.extend(1.0).to_array(),
            key: key.extend(0.0).to_array(),
            fill: fill.extend(0.0).to_array(),
            up: camera.up.normalize().extend(0.0).to_array(),
        };
        self.queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&frame));
        for (i, m) in meshes.iter().enumerate() {
            self.upload(i, m);
        }
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("raycontact-examples.render"),
        });
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("raycontact-examples.render"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &self.msaa,
                    depth_slice: None,
                    resolve_target: Some(&self.resolved_view),
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color { r: 0.80, g: 0.84, b: 0.90, a: 1.0 }),
                        store: wgpu::StoreOp::Discard,
                    },
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &self.depth,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Discard,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.bind_group, &[]);
            for b in &self.meshes[..meshes.len()] {
                pass.set_vertex_buffer(0, b.vertices.slice(..));
                pass.set_index_buffer(b.indices.slice(..), wgpu::IndexFormat::Uint32);
                pass.draw_indexed(0..b.index_count, 0, 0..1);
            }
        }
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: &self.resolved,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &self.readback,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(self.padded_row),
                    rows_per_image: Some(self.height),
                },
            },
            wgpu::Extent3d { width: self.width, height: self.height, depth_or_array_layers: 1 },
        );
        self.queue.submit([encoder.finish()]);
        self.read_image()
    }

    /// Writes mesh `i`'s vertices (normals and colour included), creating its buffers the
    /// first time (or when it grew or its triangles changed).
    fn upload(&mut self, i: usize, m: &Mesh<'_>) {
        let fits = self
            .meshes
            .get(i)
            .is_some_and(|b| b.vertex_count == m.positions.len() && b.triangles == m.triangles);
        if !fits {
            let vertices = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("raycontact-examples.vertices"),
                size: (VERTEX_BYTES * m.positions.len() as u64).max(16),
                usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let indices = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("raycontact-examples.indices"),
                size: (12 * m.triangles.len() as u64).max(16),
                usage: wgpu::BufferUsages::INDEX | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            self.allocations += 2;
            self.queue.write_buffer(&indices, 0, bytemuck::cast_slice(m.triangles));
            let b = MeshBuffers {
                vertices,
                indices,
                vertex_count: m.positions.len(),
                index_count: 3 * m.triangles.len() as u32,
                triangles: m.triangles.to_vec(),
            };
            if i < self.meshes.len() {
                self.meshes[i] = b;
            } else {
                self.meshes.push(b);
            }
        }
        let normals = if m.smooth {
            vertex_normals(m.positions, m.triangles)
        } else {
            vec![Vec3::ZERO; m.positions.len()]
        };
        self.staging.clear();
        for (p, n) in m.positions.iter().zip(&normals) {
            self.staging
                .extend_from_slice(&[p.x, p.y, p.z, n.x, n.y, n.z, m.color[0], m.color[1], m.color[2]]);
        }
        if !self.staging.is_empty() {
            self.queue.write_buffer(&self.meshes[i].vertices, 0, bytemuck::cast_slice(&self.staging));
        }
    }

    fn read_image(&mut self) -> Result<Image, RenderError> {
        let slice = self.readback.slice(..);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| RenderError::Gpu(e.to_string()))?;
        rx.recv()
            .map_err(|_| RenderError::Gpu("the readback was dropped".into()))?
            .map_err(|e| RenderError::Gpu(e.to_string()))?;
        let mut rgba = Vec::with_capacity((4 * self.width * self.height) as usize);
        {
            let view = slice.get_mapped_range().map_err(|e| RenderError::Gpu(e.to_string()))?;
            for row in view.chunks_exact(self.padded_row as usize) {
                rgba.extend_from_slice(&row[..4 * self.width as usize]);
            }
        }
        self.readback.unmap();
        Ok(Image { width: self.width, height: self.height, rgba })
    }
}

/// Area-weighted vertex normals (zero for a vertex of no triangle of non-zero area).
fn vertex_normals(positions: &[Vec3], triangles: &[[u32; 3]]) -> Vec<Vec3> {
    let mut n = vec![Vec3::ZERO; positions.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| positions[i as usize]);
        let face = (b - a).cross(c - a);
        for i in t {
            n[*i as usize] += face;
        }
    }
    n.iter().map(|v| v.normalize_or_zero()).collect()
}
