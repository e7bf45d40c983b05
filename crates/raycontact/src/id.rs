//! [`BodyId`]: the handle of a body, named by every error about a body.

use std::fmt;

/// Handle of a body in a [`Scene`](crate::Scene). Stays invalid once the body is removed, even
/// if its slot is reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyId {
    pub(crate) index: u32,
    pub(crate) generation: u32,
}

impl BodyId {
    /// The slot of the body: small, dense, reused after removal.
    pub fn index(self) -> u32 {
        self.index
    }
}

impl fmt::Display for BodyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.index)?;
        if self.generation > 0 {
            write!(f, "(gen {})", self.generation)?;
        }
        Ok(())
    }
}
