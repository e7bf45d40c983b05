//! [`FrameData`]: what one frame builds (normals, boxes, sorted keys, BVH nodes), in the GPU's
//! layout. The GPU backend reads it back ([`Scene::frame_data`](crate::Scene::frame_data)) and
//! the CPU backend builds it with the CPU twins ([`crate::cpu`]).

use glam::Vec3;

use crate::body::Packing;
use crate::layout::{BodyState, Node, TriBox};

/// Everything one frame builds: the outputs of every per-frame kernel, in the GPU's layout.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameData {
    /// Unit vertex normals of all packed vertices (zero for a vertex with no area around it).
    pub normals: Vec<Vec3>,
    /// Box and degenerate flag of each packed triangle.
    pub tri_boxes: Vec<TriBox>,
    /// Box, leaf count and degenerate count of each packed body.
    pub body_state: Vec<BodyState>,
    /// Sorted Morton keys, per body segment.
    pub keys: Vec<u32>,
    /// Packed triangle index of each sorted key.
    pub values: Vec<u32>,
    /// BVH nodes: body `b` owns `2 * tri_count` slots from `node_offset`, of which the first
    /// `2 * leaf_count - 1` are used.
    pub nodes: Vec<Node>,
    /// Parent of each node (body-local), [`NONE`](crate::layout::NONE) for a root.
    pub parents: Vec<u32>,
}

impl FrameData {
    /// Runs every per-frame stage on the CPU, as the GPU frame does.
    pub fn build(packing: &Packing, positions: &[Vec3]) -> Self {
        let mut f = FrameData::default();
        f.rebuild(packing, positions, |_, _| {});
        f
    }

    /// The used nodes of packed body `b`: `2 * leaf_count - 1` of them (none when the body has
    /// no leaf).
    pub fn body_nodes(&self, packing: &Packing, b: usize) -> &[Node] {
        let off = packing.bodies[b].node_offset as usize;
        &self.nodes[off..off + used_nodes(self.body_state[b].leaf_count)]
    }

    /// The used parent links of packed body `b`, as [`Self::body_nodes`].
    pub fn body_parents(&self, packing: &Packing, b: usize) -> &[u32] {
        let off = packing.bodies[b].node_offset as usize;
        &self.parents[off..off + used_nodes(self.body_state[b].leaf_count)]
    }
}

/// Nodes of a tree with `leaves` leaves.
pub fn used_nodes(leaves: u32) -> usize {
    (2 * leaves as usize).saturating_sub(1)
}
