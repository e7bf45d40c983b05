//! Welding: merging the vertices of a mesh that are (nearly) at the same place.

use std::collections::HashMap;

use glam::Vec3;

use super::TriMesh;

impl TriMesh {
    /// Merges vertices that are at most `tolerance` apart, using a hash grid with
    /// cells of size `tolerance`.
    ///
    /// Each vertex is merged into the nearest already-kept vertex within
    /// `tolerance` (keeping the kept vertex's position), or kept itself. A
    /// `tolerance` of zero (or negative, or NaN) merges only exact duplicates.
    /// Triangles that collapse (two equal indices after merging) are dropped;
    /// unreferenced vertices are kept. Vertex order is preserved otherwise.
    ///
    /// Returns the welded mesh and the number of vertices merged away
    /// (`self.positions.len() - welded.positions.len()`).
    pub fn weld(&self, tolerance: f32) -> (TriMesh, usize) {
        let mut kept: Vec<Vec3> = Vec::new();
        let mut remap: Vec<u32> = Vec::with_capacity(self.positions.len());
        if tolerance > 0.0 {
            const NONE: u32 = u32::MAX;
            let inv_cell = 1.0 / tolerance;
            let tol2 = tolerance * tolerance;
            // Head of a singly linked list of kept vertices per grid cell.
            let mut heads: HashMap<[i32; 3], u32> = HashMap::new();
            let mut next: Vec<u32> = Vec::new();
            for &p in &self.positions {
                let cell = (p * inv_cell).floor().to_array().map(|c| c as i32);
                let mut best: Option<(f32, u32)> = None;
                for dz in -1..=1 {
                    for dy in -1..=1 {
                        for dx in -1..=1 {
                            let key = [
                                cell[0].saturating_add(dx),
                                cell[1].saturating_add(dy),
                                cell[2].saturating_add(dz),
                            ];
                            let mut k = heads.get(&key).copied().unwrap_or(NONE);
                            while k != NONE {
                                let d2 = kept[k as usize].distance_squared(p);
                                if d2 <= tol2 && best.is_none_or(|(bd, _)| d2 < bd) {
                                    best = Some((d2, k));
                                }
                                k = next[k as usize];
                            }
                        }
                    }
                }
                let index = match best {
                    Some((_, k)) => k,
                    None => {
                        let k = kept.len() as u32;
                        kept.push(p);
                        next.push(heads.insert(cell, k).unwrap_or(NONE));
                        k
                    }
                };
                remap.push(index);
            }
        } else {
            let mut seen: HashMap<[u32; 3], u32> = HashMap::with_capacity(self.positions.len());
            for &p in &self.positions {
                // `+ 0.0` maps -0.0 to 0.0 so both signs of zero are merged.
                let key = (p + Vec3::ZERO).to_array().map(f32::to_bits);
                let index = *seen.entry(key).or_insert_with(|| {
                    kept.push(p);
                    (kept.len() - 1) as u32
                });
                remap.push(index);
            }
        }
        let triangles = self
            .triangles
            .iter()
            .map(|t| t.map(|i| remap[i as usize]))
            .filter(|&[a, b, c]| a != b && b != c && a != c)
            .collect();
        let merged = self.positions.len() - kept.len();
        (TriMesh { positions: kept, triangles }, merged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meshes::icosphere;
    use crate::meshes::testing::assert_closed;

    #[test]
    fn weld_merges_duplicates_and_drops_collapsed_triangles() {
        // Two triangles sharing an edge, with the shared vertices duplicated.
        let soup = TriMesh {
            positions: vec![
                Vec3::ZERO,
                Vec3::X,
                Vec3::Y,
                Vec3::X,
                Vec3::new(1.0, 1.0, 0.0),
                Vec3::new(0.0, 1.0, -0.0),
            ],
            triangles: vec![[0, 1, 2], [3, 4, 5]],
        };
        assert_eq!(soup.boundary_edge_count(), 6);
        let (welded, merged) = soup.weld(0.0);
        assert_eq!(merged, 2);
        assert_eq!(welded.positions.len(), 4);
        assert_eq!(welded.triangles, vec![[0, 1, 2], [1, 3, 2]]);
        assert_eq!(welded.boundary_edge_count(), 4);

        // Near-duplicates merge with a tolerance, not without.
        let mut near = soup.clone();
        near.positions[3] += Vec3::splat(1e-4);
        assert_eq!(near.weld(0.0).1, 1);
        let (welded, merged) = near.weld(1e-3);
        assert_eq!(merged, 2);
        assert_eq!(welded.positions[1], Vec3::X, "keeps the first position");

        // A sliver collapses and is dropped.
        let sliver = TriMesh {
            positions: vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 0.01, 0.0)],
            triangles: vec![[0, 1, 2]],
        };
        let (welded, merged) = sliver.weld(0.05);
        assert_eq!(merged, 1);
        assert!(welded.triangles.is_empty());

        // A vertex between two kept ones merges into the nearer.
        let line = TriMesh { positions: vec![Vec3::ZERO, Vec3::X * 0.15, Vec3::X * 0.1], triangles: vec![] };
        let (welded, _) = line.weld(0.12);
        assert_eq!(welded.positions.len(), 2);

        // Welding a split generator restores a closed mesh.
        let sphere = icosphere(1.0, 2);
        let split = TriMesh {
            positions: sphere.triangles.iter().flat_map(|&t| sphere.corners(t)).collect(),
            triangles: (0..sphere.triangles.len() as u32).map(|i| [3 * i, 3 * i + 1, 3 * i + 2]).collect(),
        };
        let (welded, merged) = split.weld(1e-5);
        assert_eq!(welded.positions.len(), sphere.positions.len());
        assert_eq!(merged, split.positions.len() - sphere.positions.len());
        assert_closed(&welded);
    }
}
