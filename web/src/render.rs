//! The page's own small WebGPU renderer (raycontact only detects): the scene's meshes, lit and
//! double-sided, and a floor, drawn into the canvas's surface on the page's device.

use glam::Vec3;
use raycontact::wgpu;
use wgpu::util::DeviceExt;

use crate::scene::BodySpec;

const DEPTH: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
const POSITION: [wgpu::VertexAttribute; 1] = wgpu::vertex_attr_array![0 => Float32x3];
const NORMAL: [wgpu::VertexAttribute; 1] = wgpu::vertex_attr_array![1 => Float32x3];

/// A mesh on the GPU.
struct MeshGpu {
    positions: wgpu::Buffer,
    normals: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: u32,
    triangles: Vec<[u32; 3]>,
    material: wgpu::BindGroup,
}

/// The renderer: a surface, one pipeline, the meshes.
pub struct Renderer {
    device: wgpu::Device,
    queue: wgpu::Queue,
    surface: wgpu::Surface<'static>,
    pipeline: wgpu::RenderPipeline,
    camera: wgpu::BindGroup,
    depth: wgpu::TextureView,
    meshes: Vec<MeshGpu>,
    floor: MeshGpu,
}

impl Renderer {
    /// A renderer drawing `bodies` (and a floor) into `surface` of `width` × `height` pixels.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        adapter: &wgpu::Adapter,
        surface: wgpu::Surface<'static>,
        (width, height): (u32, u32),
        bodies: &[BodySpec],
    ) -> Result<Self, String> {
        let config = surface
            .get_default_config(adapter, width, height)
            .ok_or("the canvas's surface is not supported by the adapter")?;
        surface.configure(device, &config);
        let gamma = if config.format.is_srgb() { 1.0 } else { 1.0 / 2.2 };
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("raycontact-web.render"),
            source: wgpu::ShaderSource::Wgsl(include_str!("render.wgsl").into()),
        });
        let uniform_layout = |label| {
            device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(label),
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
            })
        };
        let camera_layout = uniform_layout("raycontact-web.camera");
        let material_layout = uniform_layout("raycontact-web.material");
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("raycontact-web.render"),
            bind_group_layouts: &[Some(&camera_layout), Some(&material_layout)],
            immediate_size: 0,
        });
        let vec3_buffer = |attributes| wgpu::VertexBufferLayout {
            array_stride: 12,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes,
        };
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("raycontact-web.render"),
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[Some(vec3_buffer(&POSITION)), Some(vec3_buffer(&NORMAL))],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: Some(wgpu::DepthStencilState {
                format: DEPTH,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Less),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(config.format.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        let aspect = width as f32 / height.max(1) as f32;
        let view = glam::camera::rh::view::look_at_mat4(
            Vec3::new(1.0, 1.55, 2.7),
            Vec3::new(0.15, 0.3, 0.0),
            Vec3::Y,
        );
        // WebGPU's clip space: depth in [0, 1], as Direct3D's.
        let proj = glam::camera::rh::proj::directx::perspective(40f32.to_radians(), aspect, 0.05, 30.0);
        let mut uniform = (proj * view).to_cols_array().to_vec();
        uniform.extend_from_slice(&[0.4, 1.0, 0.6, 0.0, gamma, 0.0, 0.0, 0.0]);
        let camera = uniform_group(device, &camera_layout, &uniform);
        let depth = device
            .create_texture(&wgpu::TextureDescriptor {
                label: Some("raycontact-web.depth"),
                size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: DEPTH,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            })
            .create_view(&Default::default());
        let mesh = |positions: &[Vec3], triangles: &[[u32; 3]], colors: [[f32; 3]; 2]| {
            let [f, b] = colors;
            let material =
                uniform_group(device, &material_layout, &[f[0], f[1], f[2], 1.0, b[0], b[1], b[2], 1.0]);
            let init = |label, contents: &[u8], usage| {
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents,
                    usage,
                })
            };
            let vertex = wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST;
            let normals = vertex_normals(positions, triangles);
            MeshGpu {
                positions: init("raycontact-web.positions", bytemuck::cast_slice(positions), vertex),
                normals: init("raycontact-web.normals", bytemuck::cast_slice(&normals), vertex),
                indices: init(
                    "raycontact-web.indices",
                    bytemuck::cast_slice(triangles),
                    wgpu::BufferUsages::INDEX,
                ),
                index_count: 3 * triangles.len() as u32,
                triangles: triangles.to_vec(),
                material,
            }
        };
        let meshes = bodies.iter().map(|b| mesh(&b.mesh.positions, &b.mesh.triangles, b.colors)).collect();
        let s = 40.0;
        let floor = mesh(
            &[Vec3::new(-s, 0.0, -s), Vec3::new(s, 0.0, -s), Vec3::new(s, 0.0, s), Vec3::new(-s, 0.0, s)],
            &[[0, 2, 1], [0, 3, 2]],
            [[0.55, 0.56, 0.58]; 2],
        );
        Ok(Self {
            device: device.clone(),
            queue: queue.clone(),
            surface,
            pipeline,
            camera,
            depth,
            meshes,
            floor,
        })
    }

    /// New positions of mesh `b` (its normals are recomputed).
    pub fn set_positions(&self, b: usize, positions: &[Vec3]) {
        let m = &self.meshes[b];
        self.queue.write_buffer(&m.positions, 0, bytemuck::cast_slice(positions));
        self.queue.write_buffer(
            &m.normals,
            0,
            bytemuck::cast_slice(&vertex_normals(positions, &m.triangles)),
        );
    }

    /// Draws a frame into the surface and presents it (skips it when the surface has none).
    pub fn draw(&self) {
        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t) | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            _ => return,
        };
        let view = frame.texture.create_view(&Default::default());
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("raycontact-web.render") });
        {
            let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("raycontact-web.render"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color { r: 0.12, g: 0.13, b: 0.16, a: 1.0 }),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &self.depth,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.camera, &[]);
            for m in self.meshes.iter().chain([&self.floor]) {
                pass.set_bind_group(1, &m.material, &[]);
                pass.set_vertex_buffer(0, m.positions.slice(..));
                pass.set_vertex_buffer(1, m.normals.slice(..));
                pass.set_index_buffer(m.indices.slice(..), wgpu::IndexFormat::Uint32);
                pass.draw_indexed(0..m.index_count, 0, 0..1);
            }
        }
        self.queue.submit([enc.finish()]);
        self.queue.present(frame);
    }
}

/// A bind group over a new uniform buffer holding `data`.
fn uniform_group(device: &wgpu::Device, layout: &wgpu::BindGroupLayout, data: &[f32]) -> wgpu::BindGroup {
    let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("raycontact-web.uniform"),
        contents: bytemuck::cast_slice(data),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("raycontact-web.uniform"),
        layout,
        entries: &[wgpu::BindGroupEntry { binding: 0, resource: buffer.as_entire_binding() }],
    })
}

/// Area-weighted vertex normals (for shading only).
fn vertex_normals(positions: &[Vec3], triangles: &[[u32; 3]]) -> Vec<Vec3> {
    let mut n = vec![Vec3::ZERO; positions.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| positions[i as usize]);
        let face = (b - a).cross(c - a);
        for i in t {
            n[*i as usize] += face;
        }
    }
    n
}
