//! Images read back from the renderer, and the `--png DIR` writer: one PNG per k-th frame,
//! named `<example>_<frame, six digits>.png` so that the files sort in frame order.

use std::path::{Path, PathBuf};

use super::{Camera, Mesh, RenderError, Renderer};

/// An RGBA8 image (sRGB), rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `4 × width × height` bytes.
    pub rgba: Vec<u8>,
}

impl Image {
    /// The pixel at (x, y) as RGBA.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let i = 4 * (y * self.width + x) as usize;
        [self.rgba[i], self.rgba[i + 1], self.rgba[i + 2], self.rgba[i + 3]]
    }

    /// Writes the image as an 8-bit RGB PNG (sRGB), compressed hard (the frames are flat-shaded
    /// enough to shrink well).
    pub fn write_png(&self, path: &Path) -> Result<(), RenderError> {
        let file = std::fs::File::create(path).map_err(RenderError::Io)?;
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
        encoder.set_compression(png::Compression::High);
        let rgb: Vec<u8> = self.rgba.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
        let mut writer = encoder.write_header().map_err(png_error)?;
        writer.write_image_data(&rgb).map_err(png_error)?;
        writer.finish().map_err(png_error)
    }
}

fn png_error(e: png::EncodingError) -> RenderError {
    match e {
        png::EncodingError::IoError(e) => RenderError::Io(e),
        other => RenderError::Io(std::io::Error::other(other.to_string())),
    }
}

/// Writes every `every`-th frame of an example as `dir/<name>_<frame>.png`.
#[derive(Debug)]
pub struct PngFrames {
    renderer: Renderer,
    dir: PathBuf,
    name: String,
    every: usize,
    camera: Camera,
    written: usize,
}

impl PngFrames {
    /// Frames of example `name` seen from `camera`, into `dir` (created if missing).
    pub fn new(
        renderer: Renderer,
        dir: &Path,
        name: &str,
        every: usize,
        camera: Camera,
    ) -> Result<Self, RenderError> {
        std::fs::create_dir_all(dir).map_err(RenderError::Io)?;
        Ok(Self {
            renderer,
            dir: dir.to_path_buf(),
            name: name.into(),
            every: every.max(1),
            camera,
            written: 0,
        })
    }

    /// Renders and writes frame `index` if it is one of every `every` (frame 0 always is).
    pub fn frame(&mut self, index: usize, meshes: &[Mesh<'_>]) -> Result<(), RenderError> {
        if !index.is_multiple_of(self.every) {
            return Ok(());
        }
        let image = self.renderer.render(&self.camera, meshes)?;
        image.write_png(&self.path(index))?;
        self.written += 1;
        Ok(())
    }

    /// The file of frame `index`.
    pub fn path(&self, index: usize) -> PathBuf {
        self.dir.join(format!("{}_{index:06}.png", self.name))
    }

    /// Files written so far.
    pub fn written(&self) -> usize {
        self.written
    }

    /// The renderer.
    pub fn renderer(&self) -> &Renderer {
        &self.renderer
    }
}
