//! How a lock is held: the five modes of Gray's multi-granularity locking, their
//! compatibility table and their lattice (join, covers, intention).
//!
//! Kept apart from the request records because it is the one table every lock rule reads:
//! the queue scan (`table/queue.rs`), the deadlock search and the invariants all ask
//! [`Mode::compatible_with`] or [`Mode::compat_mask`]. The rules are written up in
//! docs/LOCK_CORE.md.

use serde::{Deserialize, Serialize};

/// How a lock is held.
///
/// The intention modes are for tree locks: a lock on `/a/b/c` puts an intention mode on `/a` and
/// `/a/b` ([`Mode::intention`]). The modes form a lattice `IS < IX, S < SIX < X` (IX and S are
/// incomparable, their join is SIX); see [`Mode::join`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// One holder at a time (X).
    #[default]
    #[serde(alias = "x", alias = "X")]
    Exclusive,
    /// Any number of shared holders, no exclusive one (S).
    #[serde(alias = "s", alias = "S")]
    Shared,
    /// Intention to take shared locks below this node (IS).
    #[serde(alias = "is", alias = "IS")]
    IntentionShared,
    /// Intention to take exclusive locks below this node (IX).
    #[serde(alias = "ix", alias = "IX")]
    IntentionExclusive,
    /// Shared on this node plus intention exclusive below it (SIX).
    #[serde(alias = "six", alias = "SIX")]
    SharedIntentionExclusive,
}

/// Every mode, in the order of [`Mode::bit`].
pub const ALL_MODES: [Mode; 5] = [
    Mode::IntentionShared,
    Mode::IntentionExclusive,
    Mode::Shared,
    Mode::SharedIntentionExclusive,
    Mode::Exclusive,
];

impl Mode {
    /// Gray's multi-granularity compatibility matrix, as a bitmask per mode over
    /// [`ALL_MODES`] order (IS, IX, S, SIX, X):
    ///
    /// |     | IS | IX | S | SIX | X |
    /// |-----|----|----|---|-----|---|
    /// | IS  | ✓  | ✓  | ✓ | ✓   |   |
    /// | IX  | ✓  | ✓  |   |     |   |
    /// | S   | ✓  |    | ✓ |     |   |
    /// | SIX | ✓  |    |   |     |   |
    /// | X   |    |    |   |     |   |
    pub const fn compat_mask(self) -> u8 {
        match self {
            Mode::IntentionShared => 0b01111,
            Mode::IntentionExclusive => 0b00011,
            Mode::Shared => 0b00101,
            Mode::SharedIntentionExclusive => 0b00001,
            Mode::Exclusive => 0,
        }
    }

    /// This mode's bit in a compatibility mask.
    pub const fn bit(self) -> u8 {
        match self {
            Mode::IntentionShared => 1,
            Mode::IntentionExclusive => 2,
            Mode::Shared => 4,
            Mode::SharedIntentionExclusive => 8,
            Mode::Exclusive => 16,
        }
    }

    /// Whether a holder in `self` may coexist with a holder in `other` (of another owner).
    pub const fn compatible_with(self, other: Mode) -> bool {
        self.compat_mask() & other.bit() != 0
    }

    /// The least mode at least as strong as both (the lattice join).
    pub fn join(self, other: Mode) -> Mode {
        use Mode::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Exclusive, _) | (_, Exclusive) => Exclusive,
            (SharedIntentionExclusive, _) | (_, SharedIntentionExclusive) => {
                SharedIntentionExclusive
            }
            (IntentionExclusive, Shared) | (Shared, IntentionExclusive) => SharedIntentionExclusive,
            (IntentionShared, b) => b,
            (a, IntentionShared) => a,
            // Every remaining pair is equal, handled above; stay safe anyway.
            _ => Exclusive,
        }
    }

    /// Whether holding `self` already gives everything `other` gives.
    pub fn covers(self, other: Mode) -> bool {
        self.join(other) == self
    }

    /// The intention mode a tree lock in `self` puts on every ancestor of its node.
    pub const fn intention(self) -> Mode {
        match self {
            Mode::IntentionShared | Mode::Shared => Mode::IntentionShared,
            _ => Mode::IntentionExclusive,
        }
    }

    /// The short name (X, S, IS, IX, SIX).
    pub const fn short(self) -> &'static str {
        match self {
            Mode::Exclusive => "X",
            Mode::Shared => "S",
            Mode::IntentionShared => "IS",
            Mode::IntentionExclusive => "IX",
            Mode::SharedIntentionExclusive => "SIX",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gray's matrix, spelled out pair by pair, must equal the bitmasks and be symmetric.
    #[test]
    fn compatibility_matrix_is_grays() {
        use Mode::*;
        let yes = [
            (IntentionShared, IntentionShared),
            (IntentionShared, IntentionExclusive),
            (IntentionShared, Shared),
            (IntentionShared, SharedIntentionExclusive),
            (IntentionExclusive, IntentionExclusive),
            (Shared, Shared),
        ];
        for a in ALL_MODES {
            for b in ALL_MODES {
                let expected = yes.contains(&(a, b)) || yes.contains(&(b, a));
                assert_eq!(a.compatible_with(b), expected, "{a:?} vs {b:?}");
                assert_eq!(a.compatible_with(b), b.compatible_with(a), "symmetric");
            }
        }
    }

    #[test]
    fn join_is_the_lattice_join() {
        use Mode::*;
        assert_eq!(IntentionExclusive.join(Shared), SharedIntentionExclusive);
        assert_eq!(IntentionShared.join(Shared), Shared);
        assert_eq!(Shared.join(Exclusive), Exclusive);
        for a in ALL_MODES {
            for b in ALL_MODES {
                let j = a.join(b);
                assert_eq!(j, b.join(a));
                assert!(j.covers(a) && j.covers(b));
                // The join conflicts with at least everything either side conflicts with.
                assert_eq!(j.compat_mask() & !(a.compat_mask() & b.compat_mask()), 0);
            }
        }
        assert_eq!(Exclusive.intention(), IntentionExclusive);
        assert_eq!(Shared.intention(), IntentionShared);
    }
}
