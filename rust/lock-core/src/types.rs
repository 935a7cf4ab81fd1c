//! The value types every layer shares: times, ids, priorities, scopes and fencing tokens.
//!
//! They depend on nothing else in the crate (validation, which can fail with a
//! [`crate::LockError`], lives in `validate.rs`), so the error, event, request and answer
//! modules can all use them without an import cycle.

use serde::{Deserialize, Serialize};

/// Monotonic time in milliseconds, as given by the caller's clock.
pub type Millis = u64;

/// Id of a queued request, assigned by the table and carried by its final event.
pub type WaiterId = u64;

/// Longest key, in UTF-8 bytes (docs/LOCK_CORE.md, "Scopes and tree locks").
pub const MAX_KEY_BYTES: usize = 512;
/// Longest owner id, in UTF-8 bytes.
pub const MAX_OWNER_BYTES: usize = 512;

/// Whether a key names a single lock or a node of a lock tree.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// A plain key: one lock, no relation to other keys.
    #[default]
    Key,
    /// An absolute `/` path: the lock also takes intention modes on every ancestor.
    Tree,
}

/// A priority given by the caller: a level 0..=9 or a class name (`background` = 2,
/// `foreground` = 7). Validated by the table into a [`Priority`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum PriorityValue {
    /// A level, 0 (lowest) ..= 9 (highest).
    Level(i64),
    /// `background` or `foreground`.
    Name(String),
}

/// By hand rather than `#[serde(untagged)]`: the derived form buffers the value and, for a name,
/// first fails the integer variant, formatting an error message that is thrown away - on every
/// acquire that names its priority (it showed in the profile of the REST path).
impl<'de> Deserialize<'de> for PriorityValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = PriorityValue;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an integer 0..=9, \"background\" or \"foreground\"")
            }

            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<PriorityValue, E> {
                Ok(PriorityValue::Level(v))
            }

            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<PriorityValue, E> {
                // Out of i64 range is out of 0..=9 too; Priority::parse names the field.
                Ok(PriorityValue::Level(i64::try_from(v).unwrap_or(i64::MAX)))
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<PriorityValue, E> {
                Ok(PriorityValue::Name(v.to_owned()))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A validated priority level, 0 (lowest) ..= 9 (highest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Priority(pub u8);

impl Priority {
    /// The highest level.
    pub const MAX: Priority = Priority(9);
    /// The `background` class.
    pub const BACKGROUND: Priority = Priority(2);
    /// The `foreground` class, also the default.
    pub const FOREGROUND: Priority = Priority(7);
}

impl Default for Priority {
    fn default() -> Self {
        Priority::FOREGROUND
    }
}

/// A fencing token: the partition's epoch in the high bits and a per-partition grant counter in
/// the low bits.
///
/// Tokens are strictly increasing per key, across owner changes too (a new owner starts a
/// higher epoch), so a token can be used as an Elasticsearch external version
/// (`version_type=external_gte`) and Elasticsearch itself refuses a stale holder's write. The top
/// bit stays clear because Elasticsearch versions are non-negative `long`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FencingToken(pub u64);

impl FencingToken {
    /// Bits for the per-partition counter: about 10^12 grants per epoch.
    pub const COUNTER_BITS: u32 = 40;
    /// Largest epoch that fits below the sign bit.
    pub const MAX_EPOCH: u64 = (1 << (63 - Self::COUNTER_BITS)) - 1;
    /// Largest counter value within one epoch.
    pub const MAX_COUNTER: u64 = (1 << Self::COUNTER_BITS) - 1;

    /// Builds a token from its parts; both must be in range (checked by the caller).
    pub fn new(epoch: u64, counter: u64) -> Self {
        debug_assert!(epoch <= Self::MAX_EPOCH && counter <= Self::MAX_COUNTER);
        FencingToken(
            ((epoch & Self::MAX_EPOCH) << Self::COUNTER_BITS) | (counter & Self::MAX_COUNTER),
        )
    }

    /// The epoch (the partition's primary term) this token was issued in.
    pub fn epoch(self) -> u64 {
        self.0 >> Self::COUNTER_BITS
    }

    /// The grant counter within the epoch.
    pub fn counter(self) -> u64 {
        self.0 & Self::MAX_COUNTER
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_parts_round_trip_and_order_by_epoch_first() {
        let a = FencingToken::new(1, FencingToken::MAX_COUNTER);
        let b = FencingToken::new(2, 0);
        assert_eq!(a.epoch(), 1);
        assert_eq!(a.counter(), FencingToken::MAX_COUNTER);
        assert!(b > a, "a later epoch outranks any counter of an earlier one");
        let top = FencingToken::new(FencingToken::MAX_EPOCH, FencingToken::MAX_COUNTER);
        assert!(top.0 <= i64::MAX as u64, "tokens must fit an Elasticsearch version");
    }
}
