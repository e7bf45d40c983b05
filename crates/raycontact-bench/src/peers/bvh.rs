//! The peer of the `bvh` benchmark: parry3d's BVH built from the triangle boxes, timed.

use std::time::Instant;

use glam::Vec3;
use parry3d::bounding_volume::Aabb;
use parry3d::partitioning::Bvh;
use raycontact::meshes::TriMesh;

/// parry3d's BVH build strategies (binned SAH, PLOC).
pub use parry3d::partitioning::BvhBuildStrategy;

/// Builds a parry3d BVH of `mesh` at every frame of `positions` but the first two (the warm-up
/// frames of the benchmark), boxes of the triangles included. Returns the time of each build, ms.
pub fn parry_build(mesh: &TriMesh, positions: &[Vec<Vec3>], strategy: BvhBuildStrategy) -> Vec<f64> {
    let mut ms = Vec::new();
    for p in &positions[2..] {
        let start = Instant::now();
        let boxes: Vec<Aabb> = mesh
            .triangles
            .iter()
            .map(|tri| {
                let [a, b, c] = tri.map(|v| p[v as usize]);
                Aabb::new(a.min(b).min(c), a.max(b).max(c))
            })
            .collect();
        let bvh = Bvh::from_leaves(strategy, &boxes);
        ms.push(start.elapsed().as_secs_f64() * 1e3);
        assert_eq!(bvh.leaf_count() as usize, mesh.triangles.len());
    }
    ms
}
