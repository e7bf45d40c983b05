//! A floor for a detection frame's time on a real GPU, computed from the counts the benchmark
//! measures on any adapter (lavapipe included): the dispatches, the bytes of the buffers bound,
//! the bytes read back, and the rays with the nodes and triangles each one visits (the GPU
//! walk's, counted by the CPU twin). Not a measurement: where a GPU is at hand, run the suite on
//! it instead.
//!
//! The model adds up what a frame cannot avoid paying:
//! - a fixed cost per dispatch (launch, and the barrier that drains the GPU before the next
//!   dependent dispatch may start) and one per submission (submit, fence, map);
//! - every byte of every buffer bound, read or written once, at the DRAM bandwidth (a stage
//!   that touches only part of a buffer moves less; one that reads a byte twice, more);
//! - the traversal's traffic: per ray, each two nodes visited are one 32-byte sector (a step's
//!   compact child pair, `layout::Node`) and each triangle tested is four (three corners and
//!   their indices), served at the L2 bandwidth (the suite's trees and vertices fit in an H100's
//!   50 MB L2);
//! - the read-back over the host link.
//!
//! It leaves out the compute, the latency of a dependent chain of loads (a ray's walk, a
//! stage's items per invocation) and the occupancy of a stage that launches fewer workgroups
//! than the GPU has compute units: each can only add to the time. So the figure is a floor
//! for the design, not a forecast.

use raycontact::internals::wide_bvh::{TriRecord, WideNode};

use crate::results::{ImplResult, RayFigures};
use crate::stats::mean;

/// A GPU's figures for the model.
#[derive(Clone, Copy, Debug)]
pub struct GpuModel {
    /// The GPU, as the report names it.
    pub name: &'static str,
    /// Fixed cost of one dependent compute dispatch, µs.
    pub dispatch_us: f64,
    /// Fixed cost of one submission with its fence wait and buffer map, µs.
    pub submit_us: f64,
    /// Sustained DRAM bandwidth, bytes per µs.
    pub dram_bytes_per_us: f64,
    /// Sustained L2 bandwidth, bytes per µs.
    pub l2_bytes_per_us: f64,
    /// Host link bandwidth for the read-back, bytes per µs.
    pub link_bytes_per_us: f64,
}

/// An H100 SXM5 (80 GB): HBM3 at 3.35 TB/s peak, taken at 80 %; L2 at about 5.5 TB/s; PCIe Gen5
/// x16 at 64 GB/s a direction, taken at 50 GB/s. The fixed costs are assumptions: 5 µs a
/// dependent dispatch, 15 µs a submission.
pub const H100: GpuModel = GpuModel {
    name: "H100 SXM",
    dispatch_us: 5.0,
    submit_us: 15.0,
    dram_bytes_per_us: 0.8 * 3.35e6,
    l2_bytes_per_us: 5.5e6,
    link_bytes_per_us: 5.0e4,
};

/// Bytes a ray moves per node visited: a step tests two, both read from one 32-byte sector, the
/// node's compact child pair (`layout::Node`; both tunings keep them). The nodes counted are
/// the twin's walk through the nodes' own boxes, which the pairs round outwards: the walk
/// through the pairs visits a few more (0.2-0.4 % on the ray tests' meshes).
const NODE_BYTES: f64 = 16.0;
/// Bytes a ray moves per triangle tested (four sectors: the indices and three corners).
const TRIANGLE_BYTES: f64 = 128.0;

/// Bytes a ray moves through the kernels' binary layout, in the GPU walk: a sector per two nodes
/// visited (a step's child pair), four per triangle tested (what [`GpuModel::estimate`]
/// counts), with a cloth vertex's two rays walked together when `line` (the GPU tuning's walk),
/// else each on its own.
pub fn binary_bytes_per_ray(rays: &RayFigures, line: bool) -> f64 {
    let nodes = if line { rays.nodes_per_ray_gpu_line_walk } else { rays.nodes_per_ray_gpu_walk };
    walk_bytes_per_ray(nodes, rays.triangles_per_ray)
}

/// Bytes a ray of `nodes` nodes visited and `triangles` triangles tested moves through the
/// kernels' binary layout, as [`binary_bytes_per_ray`] counts them.
pub fn walk_bytes_per_ray(nodes: f64, triangles: f64) -> f64 {
    nodes * NODE_BYTES + triangles * TRIANGLE_BYTES
}

/// Bytes a ray would move through the CPU backend's 4-wide layout (`WideNode`s and
/// `TriRecord`s), in the CPU backend's walk: a wide node's 128 bytes (four sectors, whatever
/// lanes it uses) per node fetched, a record's 64 (two sectors) per triangle tested. Set beside
/// [`binary_bytes_per_ray`] to judge wide nodes for the GPU.
pub fn wide_bytes_per_ray(rays: &RayFigures) -> f64 {
    rays.wide_nodes_per_ray_cpu_walk * size_of::<WideNode>() as f64
        + rays.triangles_per_ray_cpu_walk * size_of::<TriRecord>() as f64
}

/// The counts of one frame.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameCounts {
    /// Compute dispatches.
    pub dispatches: f64,
    /// Bytes of the buffers bound, for reading and for writing.
    pub bytes_bound: f64,
    /// Bytes read back.
    pub bytes_read_back: f64,
    /// Rays cast (every trace).
    pub rays: f64,
    /// Nodes visited per ray.
    pub nodes_per_ray: f64,
    /// Triangles tested per ray.
    pub triangles_per_ray: f64,
}

/// The model's figure for a frame, by part, in ms.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Estimate {
    /// Fixed costs: dispatches and the submission.
    pub fixed_ms: f64,
    /// Bound bytes at the DRAM bandwidth.
    pub memory_ms: f64,
    /// The traversal's traffic at the L2 bandwidth.
    pub traversal_ms: f64,
    /// The read-back over the host link.
    pub read_back_ms: f64,
}

impl Estimate {
    /// The frame.
    pub fn total_ms(&self) -> f64 {
        self.fixed_ms + self.memory_ms + self.traversal_ms + self.read_back_ms
    }
}

impl GpuModel {
    /// The model's floor for a frame of `c`.
    pub fn estimate(&self, c: &FrameCounts) -> Estimate {
        let traversal = c.rays * (c.nodes_per_ray * NODE_BYTES + c.triangles_per_ray * TRIANGLE_BYTES);
        Estimate {
            fixed_ms: (c.dispatches * self.dispatch_us + self.submit_us) / 1e3,
            memory_ms: c.bytes_bound / self.dram_bytes_per_us / 1e3,
            traversal_ms: traversal / self.l2_bytes_per_us / 1e3,
            read_back_ms: c.bytes_read_back / self.link_bytes_per_us / 1e3,
        }
    }
}

/// Whether the model gives a floor for implementation `id`'s frames: the full-pass GPU
/// implementations (`gpu`, `gpu-refit`; the iterative passes walk instead of traversing).
pub fn counted(id: &str) -> bool {
    matches!(id, "gpu" | "gpu-refit")
}

/// The counts of a full-pass GPU implementation's frames ([`counted`]; `None` for any other) on
/// an instance whose rays are `rays`: the mean dispatches and read-back, the last frame's bound
/// bytes, and the rays with the GPU walk's nodes and triangles per ray, a cloth vertex's two
/// rays walked together as the GPU tuning walks them, over the trees the implementation's last
/// frame walked ([`ImplResult::trees_walked`]: `gpu-refit`'s refitted binned-SAH trees,
/// `gpu`'s LBVHs and rest trees), or where they were not counted the instance's (`rays`,
/// `gpu`'s trees as the CPU reference's frame gives them).
pub fn frame_counts(i: &ImplResult, rays: &RayFigures) -> Option<FrameCounts> {
    if !counted(i.id) || i.dispatches.is_empty() {
        return None;
    }
    let (read, written) = i.bytes_bound.unwrap_or((0, 0));
    let (nodes_per_ray, triangles_per_ray) = match i.trees_walked {
        Some(w) => (w.nodes_per_ray_line, w.triangles_per_ray),
        None => (rays.nodes_per_ray_gpu_line_walk, rays.triangles_per_ray),
    };
    Some(FrameCounts {
        dispatches: mean(&i.dispatches.iter().map(|&d| f64::from(d)).collect::<Vec<_>>()),
        bytes_bound: (read + written) as f64,
        bytes_read_back: mean(&i.bytes_read_back.iter().map(|&d| d as f64).collect::<Vec<_>>()),
        rays: rays.rays() as f64,
        nodes_per_ray,
        triangles_per_ray,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_part_is_its_count_over_its_rate() {
        let m = GpuModel {
            name: "test",
            dispatch_us: 2.0,
            submit_us: 10.0,
            dram_bytes_per_us: 1e6,
            l2_bytes_per_us: 4e6,
            link_bytes_per_us: 1e4,
        };
        let c = FrameCounts {
            dispatches: 16.0,
            bytes_bound: 3e6,
            bytes_read_back: 2e4,
            rays: 1000.0,
            nodes_per_ray: 50.0,
            triangles_per_ray: 2.0,
        };
        let e = m.estimate(&c);
        assert_eq!(e.fixed_ms, 0.042);
        assert_eq!(e.memory_ms, 0.003);
        // 1000 rays x (50 x 16 + 2 x 128) bytes = 1.056 MB at 4 MB/ms.
        assert!((e.traversal_ms - 0.000264).abs() < 1e-12);
        assert_eq!(e.read_back_ms, 0.002);
        assert!((e.total_ms() - (0.042 + 0.003 + 0.000264 + 0.002)).abs() < 1e-12);
        // No work: the fixed costs alone.
        let none = m.estimate(&FrameCounts::default());
        assert_eq!(none.total_ms(), 0.01);
    }
}
