//! Contacts of a frame by class, from their flags.

use raycontact::internals::layout::contact_flags;

/// Contacts of a frame by class (from the contact flags; the classes overlap).
#[derive(Clone, Copy, Debug, Default)]
pub struct Classes {
    /// `COLLISION`.
    pub collision: f64,
    /// `PREDICTION`.
    pub prediction: f64,
    /// `INWARD_RAY`.
    pub inward: f64,
    /// `OUTWARD_RAY`.
    pub outward: f64,
    /// `INVERTED`.
    pub inverted: f64,
    /// `WALKED`.
    pub walked: f64,
}

impl Classes {
    /// Counts the contacts with these flags by class.
    pub fn of(flags: impl Iterator<Item = u32>) -> Self {
        let mut c = Classes::default();
        for f in flags {
            let on = |bit: u32| if f & bit != 0 { 1.0 } else { 0.0 };
            c.collision += on(contact_flags::COLLISION);
            c.prediction += on(contact_flags::PREDICTION);
            c.inward += on(contact_flags::INWARD_RAY);
            c.outward += on(contact_flags::OUTWARD_RAY);
            c.inverted += on(contact_flags::INVERTED);
            c.walked += on(contact_flags::WALKED);
        }
        c
    }

    /// Adds another count.
    pub fn add(&mut self, o: &Classes) {
        self.collision += o.collision;
        self.prediction += o.prediction;
        self.inward += o.inward;
        self.outward += o.outward;
        self.inverted += o.inverted;
        self.walked += o.walked;
    }

    /// Every class times `s` (a sum over frames into a mean per frame).
    pub fn scaled(&self, s: f64) -> Classes {
        Classes {
            collision: self.collision * s,
            prediction: self.prediction * s,
            inward: self.inward * s,
            outward: self.outward * s,
            inverted: self.inverted * s,
            walked: self.walked * s,
        }
    }
}
