//! Twin of `shaders/response.wgsl`: the penalty forces of the collision contacts, summed per
//! packed vertex in fixed point with the same float operations and the same overflow rule.
//! The sum of integers does not depend on the order of the adds, so the forces equal the GPU's
//! (up to the rounding of the few float operations before the conversion).

use glam::{IVec3, Vec3};

use crate::layout::{
    BodyGpu, ContactGpu, FORCE_LOAD_LIMIT, FORCE_SLOTS, NONE, RESPONSE_ALONG_NORMAL, RESPONSE_STATE,
    ResponseParams, contact_flags,
};

/// What [`response`] computes: [`FORCE_SLOTS`] integers per packed vertex (fixed-point x, y, z,
/// then the load) and the state (overflows, contacts applied, lowest overflowing vertex).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseSums {
    /// Per packed vertex: x, y, z in fixed point, then the load (as the GPU's bits).
    pub forces: Vec<[i32; FORCE_SLOTS]>,
    /// [`RESPONSE_STATE`] counters: overflowed contributions (nonzero: some overflowed; the
    /// count depends on the order of the adds, the flagged vertices do not), collision contacts
    /// applied, the lowest packed vertex that overflowed ([`NONE`]: none), padding.
    pub state: [u32; RESPONSE_STATE],
}

impl ResponseSums {
    /// Zero forces for `vertices` packed vertices, as the GPU clears them.
    pub fn new(vertices: usize) -> Self {
        Self { forces: vec![[0; FORCE_SLOTS]; vertices], state: [0, 0, NONE, 0] }
    }

    fn add(&mut self, v: u32, f: IVec3) {
        let load = f.abs().max_element() as u32;
        let slot = &mut self.forces[v as usize];
        let before = slot[3] as u32;
        slot[3] = slot[3].wrapping_add(load as i32);
        slot[0] = slot[0].wrapping_add(f.x);
        slot[1] = slot[1].wrapping_add(f.y);
        slot[2] = slot[2].wrapping_add(f.z);
        if before > FORCE_LOAD_LIMIT - load.min(FORCE_LOAD_LIMIT) {
            self.flag(v);
        }
    }

    fn flag(&mut self, v: u32) {
        self.state[0] += 1;
        self.state[2] = self.state[2].min(v);
    }
}

/// `fixed` of `response.wgsl`: round half to even, `None` outside the `i32` range.
fn fixed(x: f32, scale: f32) -> Option<i32> {
    let s = (x * scale).round_ties_even();
    (s.abs() <= 2147483520.0).then_some(s as i32)
}

fn velocity(positions: &[Vec3], previous: &[Vec3], v: u32, inv_dt: f32) -> Vec3 {
    (positions[v as usize] - previous[v as usize]) * inv_dt
}

/// Twin of `response.wgsl` over `contacts` (a detection's, bodies by packed index), adding into
/// `sums`. `stiffness` is the `body_count × body_count` table, source-major. `positions` and
/// `previous` are two regions of the kernel's one vertex buffer
/// ([`VERTEX_REGIONS`](crate::layout::VERTEX_REGIONS)), taken here as separate slices.
#[allow(clippy::too_many_arguments)]
pub fn response(
    params: &ResponseParams,
    bodies: &[BodyGpu],
    triangles: &[u32],
    positions: &[Vec3],
    previous: &[Vec3],
    stiffness: &[f32],
    contacts: &[ContactGpu],
    sums: &mut ResponseSums,
) {
    for c in contacts.iter().filter(|c| c.flags & contact_flags::COLLISION != 0) {
        let (sb, tb) = (&bodies[c.source_body as usize], &bodies[c.target_body as usize]);
        let vs = sb.vertex_offset + c.source_vertex;
        let g = (tb.tri_offset + c.target_triangle) as usize;
        let t = [triangles[3 * g], triangles[3 * g + 1], triangles[3 * g + 2]];
        let w = Vec3::new(1.0 - c.u - c.v, c.u, c.v);
        let mut d = c.normal;
        if params.flags & RESPONSE_ALONG_NORMAL == 0 {
            let ray = (c.target_point - tb.half_thickness * c.normal)
                - (c.source_point + sb.half_thickness * c.normal);
            let len = ray.length();
            if len > 0.0 {
                d = ray / len;
                if d.dot(c.normal) < 0.0 {
                    d = -d;
                }
            }
        }
        let vel = |v: u32| velocity(positions, previous, v, params.inv_dt);
        let vt = vel(t[0]) * w.x + vel(t[1]) * w.y + vel(t[2]) * w.z;
        let closing = (vel(vs) - vt).dot(d);
        let k = stiffness[(c.source_body * params.body_count + c.target_body) as usize];
        let magnitude = (k * c.depth - params.damping * closing).max(0.0);
        let f = d * magnitude;
        let fs = match (fixed(f.x, params.scale), fixed(f.y, params.scale), fixed(f.z, params.scale)) {
            (Some(x), Some(y), Some(z)) => IVec3::new(x, y, z),
            _ => {
                sums.flag(vs);
                continue;
            }
        };
        let spread = |weight: f32| {
            let x = -fs.as_vec3() * weight;
            IVec3::new(
                x.x.round_ties_even() as i32,
                x.y.round_ties_even() as i32,
                x.z.round_ties_even() as i32,
            )
        };
        let (f1, f2) = (spread(w.y), spread(w.z));
        let f0 = -fs - f1 - f2;
        sums.add(vs, fs);
        sums.add(t[0], f0);
        sums.add(t[1], f1);
        sums.add(t[2], f2);
        sums.state[1] += 1;
    }
}
