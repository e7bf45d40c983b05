//! Triangle adjacency: the neighbour of every triangle across each of its edges, the topology
//! the iterative ray walk ([`crate::cpu::walk`], `shaders/shared/walk.wgsl`) moves on.
//!
//! Edge `i` of triangle `[v0, v1, v2]` is the edge *opposite* vertex `i`:
//! edge 0 = (v1, v2), edge 1 = (v2, v0), edge 2 = (v0, v1). The watertight ray–triangle test's
//! barycentric weight of vertex `i` is negative exactly when the ray's line crosses the
//! triangle's plane beyond edge `i`, so the walk crosses the edge with the index of a negative
//! weight. Edges are matched by their unordered vertex pair, so two triangles of opposite
//! winding across an edge are still neighbours.
//!
//! The entry of an edge is the body-local index of the neighbour, or [`BOUNDARY`] (the edge is
//! used by this triangle only) or [`NON_MANIFOLD`] (used by three or more triangles, or twice
//! by the same degenerate triangle).

use glam::Vec3;

use crate::layout::{BOUNDARY, EdgeGpu, NON_MANIFOLD};

/// The two vertices of edge `e` (opposite vertex `e`) of triangle `tri`.
pub fn edge_vertices(tri: [u32; 3], e: usize) -> (u32, u32) {
    (tri[(e + 1) % 3], tri[(e + 2) % 3])
}

/// The neighbour of each triangle across each of its edges (see the module documentation), by
/// one sort of the `3n` edge keys: `O(n log n)`, deterministic.
pub fn triangle_adjacency(triangles: &[[u32; 3]]) -> Vec<[u32; 3]> {
    let mut keys: Vec<(u64, u32)> = Vec::with_capacity(3 * triangles.len());
    for (t, tri) in triangles.iter().enumerate() {
        for e in 0..3 {
            let (a, b) = edge_vertices(*tri, e);
            let key = (u64::from(a.min(b)) << 32) | u64::from(a.max(b));
            keys.push((key, 3 * t as u32 + e as u32));
        }
    }
    keys.sort_unstable();
    let mut adjacency = vec![[BOUNDARY; 3]; triangles.len()];
    let mut set = |slot: u32, value: u32| adjacency[(slot / 3) as usize][(slot % 3) as usize] = value;
    for run in keys.chunk_by(|x, y| x.0 == y.0) {
        match run {
            [_] => {}
            [(_, s0), (_, s1)] if s0 / 3 != s1 / 3 => {
                set(*s0, s1 / 3);
                set(*s1, s0 / 3);
            }
            _ => {
                for (_, s) in run {
                    set(*s, NON_MANIFOLD);
                }
            }
        }
    }
    adjacency
}

/// The unique edges of a body's triangles (the segments that edge–triangle crossings trace), in
/// order of (lower vertex, higher vertex), each from its lower vertex `a` to its higher `b`,
/// body-local, with the triangles that use it: `t0` the lowest, `t1` the other one, or
/// [`BOUNDARY`] when only one triangle uses it, or [`NON_MANIFOLD`] when three or more do (or one
/// triangle twice). Edges of a degenerate triangle whose two ends are the same vertex are left
/// out. Deterministic, `O(n log n)`.
pub fn unique_edges(triangles: &[[u32; 3]]) -> Vec<EdgeGpu> {
    let mut keys: Vec<(u64, u32)> = Vec::with_capacity(3 * triangles.len());
    for (t, tri) in triangles.iter().enumerate() {
        for e in 0..3 {
            let (a, b) = edge_vertices(*tri, e);
            if a != b {
                keys.push(((u64::from(a.min(b)) << 32) | u64::from(a.max(b)), t as u32));
            }
        }
    }
    keys.sort_unstable();
    keys.chunk_by(|x, y| x.0 == y.0)
        .map(|run| {
            let (a, b) = ((run[0].0 >> 32) as u32, run[0].0 as u32);
            let t1 = match run {
                [_] => BOUNDARY,
                [(_, s0), (_, s1)] if s0 != s1 => *s1,
                _ => NON_MANIFOLD,
            };
            EdgeGpu { a, b, t0: run[0].1, t1 }
        })
        .collect()
}

/// Mean size of a body's triangles, the `averageTrianglesSize` of Eq. 1 of Lehericey et al.
/// 2013: the mean length of the three edges of every triangle (on a closed manifold mesh, the
/// mean length of its edges). 0 for no triangles.
pub fn mean_triangle_size(positions: &[Vec3], triangles: &[[u32; 3]]) -> f32 {
    if triangles.is_empty() {
        return 0.0;
    }
    let mut sum = 0.0f64;
    for tri in triangles {
        let [a, b, c] = tri.map(|i| positions.get(i as usize).copied().unwrap_or(Vec3::ZERO));
        sum += f64::from((b - c).length()) + f64::from((c - a).length()) + f64::from((a - b).length());
    }
    (sum / (3.0 * triangles.len() as f64)) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meshes;

    fn check_symmetric(tris: &[[u32; 3]], adj: &[[u32; 3]]) {
        for (t, row) in adj.iter().enumerate() {
            for (e, &n) in row.iter().enumerate() {
                if n == BOUNDARY || n == NON_MANIFOLD {
                    continue;
                }
                let (a, b) = edge_vertices(tris[t], e);
                let back = (0..3)
                    .find(|&f| {
                        let (c, d) = edge_vertices(tris[n as usize], f);
                        (c, d) == (a, b) || (c, d) == (b, a)
                    })
                    .expect("the neighbour shares the edge");
                assert_eq!(adj[n as usize][back], t as u32, "triangle {t} edge {e}");
            }
        }
    }

    fn count(adj: &[[u32; 3]], marker: u32) -> usize {
        adj.iter().flatten().filter(|&&n| n == marker).count()
    }

    #[test]
    fn closed_meshes_have_no_boundary() {
        for m in [meshes::icosphere(1.0, 3), meshes::torus(1.0, 0.3, 24, 12), meshes::uv_sphere(1.0, 16, 8)] {
            let adj = triangle_adjacency(&m.triangles);
            assert_eq!(count(&adj, BOUNDARY), 0);
            assert_eq!(count(&adj, NON_MANIFOLD), 0);
            check_symmetric(&m.triangles, &adj);
        }
    }

    #[test]
    fn sheet_boundary_edges_are_marked() {
        let m = meshes::grid_sheet(2.0, 1.0, 7, 5);
        let adj = triangle_adjacency(&m.triangles);
        assert_eq!(count(&adj, BOUNDARY), m.boundary_edge_count());
        assert_eq!(count(&adj, BOUNDARY), 2 * (7 + 5));
        assert_eq!(count(&adj, NON_MANIFOLD), 0);
        check_symmetric(&m.triangles, &adj);
        // Triangle 0 = [a, b, c] of the first quad: edge 0 (b, c) borders the next quad's
        // [b, c', c] (triangle 3), edge 1 (c, a) is the diagonal shared with [a, c, d]
        // (triangle 1), edge 2 (a, b) lies on the sheet's border.
        assert_eq!(adj[0], [3, 1, BOUNDARY]);
    }

    #[test]
    fn an_edge_of_three_triangles_is_non_manifold() {
        // Three fins on edge (0, 1), and a fourth triangle sharing edge (1, 2) with the first.
        let tris = [[0, 1, 2], [1, 0, 3], [0, 1, 4], [2, 1, 5]];
        let adj = triangle_adjacency(&tris);
        assert_eq!(adj[0][2], NON_MANIFOLD);
        assert_eq!(adj[1][2], NON_MANIFOLD);
        assert_eq!(adj[2][2], NON_MANIFOLD);
        assert_eq!(adj[0][0], 3);
        assert_eq!(adj[3][2], 0);
        assert_eq!(adj[0][1], BOUNDARY);
        check_symmetric(&tris, &adj);
    }

    #[test]
    fn a_degenerate_triangle_is_not_its_own_neighbour() {
        let tris = [[0, 0, 1]];
        let adj = triangle_adjacency(&tris);
        // Edges 0 (0, 1) and 1 (1, 0) are the same edge of the same triangle; edge 2 is (0, 0).
        assert_eq!(adj[0], [NON_MANIFOLD, NON_MANIFOLD, BOUNDARY]);
    }

    #[test]
    fn unique_edges_of_closed_and_open_meshes() {
        // A closed manifold mesh: E = 3F / 2, every edge between two triangles.
        let m = meshes::icosphere(1.0, 2);
        let edges = unique_edges(&m.triangles);
        assert_eq!(edges.len(), 3 * m.triangles.len() / 2);
        assert!(edges.iter().all(|e| e.a < e.b && e.t0 < e.t1 && e.t1 != BOUNDARY));
        assert!(edges.windows(2).all(|w| (w[0].a, w[0].b) < (w[1].a, w[1].b)));
        // A sheet: its boundary edges border one triangle.
        let s = meshes::grid_sheet(2.0, 1.0, 7, 5);
        let edges = unique_edges(&s.triangles);
        assert_eq!(edges.iter().filter(|e| e.t1 == BOUNDARY).count(), s.boundary_edge_count());
        assert_eq!(edges.len(), s.positions.len() + s.triangles.len() - 1);
        // Three fins on one edge, and a degenerate triangle's zero-length edge left out.
        let fins = unique_edges(&[[0, 1, 2], [1, 0, 3], [0, 1, 4], [5, 5, 6]]);
        assert_eq!(fins[0], EdgeGpu { a: 0, b: 1, t0: 0, t1: NON_MANIFOLD });
        assert_eq!(fins.iter().filter(|e| e.a == e.b).count(), 0);
        assert_eq!(fins.last(), Some(&EdgeGpu { a: 5, b: 6, t0: 3, t1: NON_MANIFOLD }));
    }

    #[test]
    fn mean_size_of_a_unit_grid() {
        let m = meshes::grid_sheet(4.0, 4.0, 4, 4);
        let d = 2f32.sqrt();
        assert!((mean_triangle_size(&m.positions, &m.triangles) - (2.0 + d) / 3.0).abs() < 1e-6);
        assert_eq!(mean_triangle_size(&m.positions, &[]), 0.0);
    }
}
