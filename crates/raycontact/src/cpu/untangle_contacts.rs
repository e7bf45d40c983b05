//! Twin of `shaders/untangle_contacts.wgsl`: untangling contacts of cloth vertices on the wrong
//! side of a cloth.

use glam::Vec3;
use rayon::prelude::*;

use super::shared::bvh::closest_hit;
use crate::frame::FrameData;
use crate::layout::{BODY_CLOTH, ContactGpu, NONE, Ray, RegionGpu, contact_flags, decode_parent};
use crate::packing::Packing;

/// Twin of `untangle_contacts.wgsl`: for every packed vertex of a cloth whose region is on the
/// wrong side of a cloth (see the kernel), the contact that pushes it back through the nearer
/// (by re-projected length) of its two rays' hits; in vertex order (the GPU appends them in any
/// order). The rays go through the BVH with the kernel's own closest-hit walk
/// ([`closest_hit`]).
pub fn untangle_contacts(
    packing: &Packing,
    frame: &FrameData,
    positions: &[Vec3],
    regions: &[RegionGpu],
) -> Vec<ContactGpu> {
    let bodies = &packing.bodies;
    let per_body: Vec<Vec<ContactGpu>> = (0..bodies.len())
        .into_par_iter()
        .map(|s| {
            let sb = &bodies[s];
            let mut out = Vec::new();
            if sb.flags & BODY_CLOTH == 0 {
                return out;
            }
            for v in sb.vertex_offset..sb.vertex_offset + sb.vertex_count {
                let other = regions[decode_parent(regions[v as usize].parent, v) as usize].other;
                if other == 0 {
                    continue;
                }
                let o = !other as usize;
                let ob = &bodies[o];
                let n = frame.normals[v as usize];
                if ob.flags & BODY_CLOTH == 0 || n == Vec3::ZERO {
                    continue;
                }
                let p = positions[v as usize];
                let ignore = if s == o { v } else { NONE };
                let nodes = frame.body_nodes(packing, o);
                let mut best: Option<(crate::layout::RayHit, Vec3, f32, Vec3, u32)> = None;
                for (dir, flag) in [(-n, contact_flags::INWARD_RAY), (n, contact_flags::OUTWARD_RAY)] {
                    let ray = Ray::new(p, dir);
                    let hit = closest_hit(ob, nodes, positions, &packing.triangles, &ray, ignore, &[]);
                    if hit.triangle == NONE {
                        continue;
                    }
                    let g = (ob.tri_offset + hit.triangle) as usize;
                    let [a, b, c] = [0, 1, 2].map(|j| positions[packing.triangles[3 * g + j] as usize]);
                    let mm = (b - a).cross(c - a);
                    let m = if mm.length() > 0.0 { mm / mm.length() } else { Vec3::ZERO };
                    let len = hit.t * dir.dot(m).abs();
                    if best.is_none_or(|b| len < b.2) {
                        best = Some((hit, dir, len, m, flag));
                    }
                }
                let Some((hit, dir, len, m, flag)) = best else { continue };
                if m == Vec3::ZERO {
                    continue;
                }
                let normal = if dir.dot(m) < 0.0 { -m } else { m };
                out.push(ContactGpu {
                    source_body: s as u32,
                    source_vertex: v - sb.vertex_offset,
                    target_body: o as u32,
                    target_triangle: hit.triangle,
                    source_point: p - sb.half_thickness * normal,
                    u: hit.u,
                    target_point: p + hit.t * dir + ob.half_thickness * normal,
                    v: hit.v,
                    normal,
                    depth: len + sb.half_thickness + ob.half_thickness,
                    ray_length: hit.t,
                    weight: dir.dot(m).abs(),
                    flags: contact_flags::COLLISION | contact_flags::UNTANGLE | flag,
                    pair: NONE,
                    exit_triangle: NONE,
                    ..Default::default()
                });
            }
            out
        })
        .collect();
    per_body.concat()
}
