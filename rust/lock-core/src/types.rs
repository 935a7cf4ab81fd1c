//! The value types every layer shares: times, ids, priorities, scopes and fencing tokens.
//!
//! They depend on nothing else in the crate (validation, which can fail with a
//! [`crate::LockError`], lives in `validate.rs`), so the error, event, request and answer
//! modules can all use them without an import cycle.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Monotonic time in milliseconds, as given by the caller's clock.
pub type Millis = u64;

/// Id of a queued request, assigned by the table and carried by its final event.
pub type WaiterId = u64;

/// Longest key, in UTF-8 bytes (docs/LOCK_CORE.md, "Scopes and tree locks").
pub const MAX_KEY_BYTES: usize = 512;
/// Longest owner id, in UTF-8 bytes.
pub const MAX_OWNER_BYTES: usize = 512;
/// Longest acquisition id, in UTF-8 bytes (docs/API.md, "Acquisitions"): room for a UUID or a
/// ULID with a prefix, and small beside the 48-byte lock record that keeps its digest.
pub const MAX_ACQUISITION_BYTES: usize = 128;

/// What the table keeps of an acquisition id: its 64-bit FNV-1a digest, never 0 (0 stands for
/// "acquired without one"). The digest is the same on every node and version, so it travels in
/// the replicated state (format 4) and a promoted copy still knows which acquisition holds a
/// lock. Two ids of one owner colliding on one key is a 2^-64 chance, not a threat: an owner
/// that wanted to end its own lock could name its token.
pub fn acquisition_digest(id: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let h = id.bytes().fold(OFFSET, |h, b| (h ^ u64::from(b)).wrapping_mul(PRIME));
    h.max(1)
}

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
    /// A counting semaphore: holders share the key, each with its `permits`, and the sum
    /// stays within the key's `limit` (docs/LOCK_CORE.md, "Semaphores"). Its names are a
    /// name space of their own: semaphore `a` and lock `a` are different keys.
    Semaphore,
    /// A leader election: an exclusive lock whose owner is the leader (candidate) and whose
    /// fencing token is the term; its grant may carry a `value` (docs/LOCK_CORE.md,
    /// "Elections"). Its names are a name space of their own.
    Election,
    /// A group's membership (docs/LOCK_CORE.md, "Groups"): each member holds the group's key
    /// shared, under its lease or session, with its capabilities as the grant's `value`. A
    /// group exists from its creation to its deletion, members or not. Its names are a name
    /// space of their own.
    Group,
}

/// Longest election `value` (and group member's capabilities), in UTF-8 bytes
/// (docs/LOCK_CORE.md, "Elections", "Groups").
pub const MAX_ELECTION_VALUE_BYTES: usize = 1024;

/// Largest semaphore `limit` (and so `permits`): a `u16`, which keeps a [`Scope::Semaphore`]
/// grant's permits inside the padding of the lock record (docs/LOCK_CORE.md, "Semaphores").
pub const MAX_SEMAPHORE_LIMIT: u32 = u16::MAX as u32;

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

/// A session's id: 128 bits the caller of [`crate::LockTable::create_session`] draws from a
/// secure random source, shown as 32 lowercase hex digits.
///
/// The id is the session's only credential besides its owner's name, so it must not be
/// guessable; and the core must stay deterministic (every history replays exactly, see
/// docs/LOCK_CORE.md), so it never draws randomness itself: the bridge reads the OS's
/// (`rust/lock-jni`, `ops/sessions.rs`) and hands the id in, and tests hand in fixed ones. The
/// table only refuses an id that is already in use.
///
/// Two words rather than one `u128`, so that records holding it keep 8-byte alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId {
    hi: u64,
    lo: u64,
}

impl SessionId {
    /// Digits of the text form.
    const HEX_DIGITS: usize = 32;

    /// The id whose 128 bits are `bits`.
    pub const fn from_u128(bits: u128) -> Self {
        SessionId { hi: (bits >> 64) as u64, lo: bits as u64 }
    }

    /// The id of 16 (random) bytes, big-endian.
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        Self::from_u128(u128::from_be_bytes(bytes))
    }

    /// The id's 128 bits.
    pub const fn as_u128(self) -> u128 {
        ((self.hi as u128) << 64) | self.lo as u128
    }

    /// The id written as [`fmt::Display`] writes it: exactly 32 lowercase hex digits. Anything
    /// else (upper case, a sign, a prefix, another length) is no id at all, so a caller can
    /// never name a session by part of its id.
    pub fn parse(text: &str) -> Option<SessionId> {
        if text.len() != Self::HEX_DIGITS {
            return None;
        }
        let mut bits = 0u128;
        for b in text.bytes() {
            let digit = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                _ => return None,
            };
            bits = (bits << 4) | u128::from(digit);
        }
        Some(Self::from_u128(bits))
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}{:016x}", self.hi, self.lo)
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

    #[test]
    fn session_ids_print_as_32_lowercase_hex_digits_and_parse_back_only_so() {
        let id = SessionId::from_u128(0x6f1c_2a9e_4b7d_0351_8ce2_f09a_7b64_d1e5);
        assert_eq!(id.to_string(), "6f1c2a9e4b7d03518ce2f09a7b64d1e5");
        assert_eq!(SessionId::parse(&id.to_string()), Some(id));
        let small = SessionId::from_u128(1);
        assert_eq!(small.to_string(), "00000000000000000000000000000001");
        assert_eq!(SessionId::parse(&small.to_string()), Some(small));
        assert_eq!(SessionId::from_bytes([0xff; 16]).as_u128(), u128::MAX);
        for bad in [
            "",
            "1",
            "6f1c2a9e4b7d03518ce2f09a7b64d1e",
            "6f1c2a9e4b7d03518ce2f09a7b64d1e5f",
            "6F1C2A9E4B7D03518CE2F09A7B64D1E5",
            "+f1c2a9e4b7d03518ce2f09a7b64d1e5",
            " 6f1c2a9e4b7d03518ce2f09a7b64d1e",
            "0x1c2a9e4b7d03518ce2f09a7b64d1e5",
            "6f1c2a9e4b7d0351-ce2f09a7b64d1e5",
            "1099511627778",
            "6f1c2a9e4b7d03518ce2f09a7b64d1\u{e9}",
        ] {
            assert_eq!(SessionId::parse(bad), None, "{bad:?}");
        }
    }
}
