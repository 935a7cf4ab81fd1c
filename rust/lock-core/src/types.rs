//! Value types shared by the table, the partition and the bridge: keys, owners, modes, fencing
//! tokens and the request/answer records that cross the JNI bridge as JSON.

use serde::{Deserialize, Serialize};

use crate::error::LockError;

/// Monotonic time in milliseconds, as given by the caller's clock.
pub type Millis = u64;

/// Longest key, in UTF-8 bytes (DESIGN.md §4).
pub const MAX_KEY_BYTES: usize = 512;
/// Longest owner id, in UTF-8 bytes.
pub const MAX_OWNER_BYTES: usize = 512;

/// How a lock is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// One holder at a time.
    Exclusive,
    /// Any number of shared holders, no exclusive one.
    Shared,
}

impl Mode {
    /// Whether a holder in `self` may coexist with a holder in `other`.
    pub fn compatible_with(self, other: Mode) -> bool {
        matches!((self, other), (Mode::Shared, Mode::Shared))
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
        FencingToken((epoch << Self::COUNTER_BITS) | counter)
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

/// An acquire as the bridge hands it over. Fields other than `key` and `owner` have defaults so
/// that later semantics (waits, leases, priorities) extend this record instead of replacing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcquireRequest {
    pub key: String,
    pub owner: String,
    #[serde(default = "default_mode")]
    pub mode: Mode,
}

fn default_mode() -> Mode {
    Mode::Exclusive
}

/// A release: only a holder may release, and when a token is given it must be the holder's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseRequest {
    pub key: String,
    pub owner: String,
    #[serde(default)]
    pub fencing_token: Option<FencingToken>,
}

/// A granted lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub key: String,
    pub owner: String,
    pub mode: Mode,
    pub fencing_token: FencingToken,
    /// Milliseconds the grant waited in the queue (0 for an immediate grant).
    pub waited_ms: Millis,
    /// True when the owner already held the lock and got its existing grant back.
    pub reentrant: bool,
}

/// The answer to a release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Released {
    pub key: String,
    pub owner: String,
    pub fencing_token: FencingToken,
}

/// One holder of a key, as shown by lookups and conflict errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HolderInfo {
    pub owner: String,
    pub mode: Mode,
    pub fencing_token: FencingToken,
    /// Milliseconds since the grant.
    pub held_ms: Millis,
}

/// Everything known about one key. A free key has no holders.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyInfo {
    pub key: String,
    pub holders: Vec<HolderInfo>,
}

/// Checks a key: 1..=512 bytes of UTF-8 (guaranteed by `&str`) with no control characters.
pub fn validate_key(key: &str) -> Result<(), LockError> {
    validate_id("key", key, MAX_KEY_BYTES)
}

/// Checks an owner id: the same rules as a key.
pub fn validate_owner(owner: &str) -> Result<(), LockError> {
    validate_id("owner", owner, MAX_OWNER_BYTES)
}

fn validate_id(field: &'static str, value: &str, max: usize) -> Result<(), LockError> {
    if value.trim().is_empty() {
        return Err(LockError::invalid(field, "must not be empty or blank"));
    }
    if value.len() > max {
        return Err(LockError::invalid(
            field,
            format!("must be at most {max} bytes, got {}", value.len()),
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(LockError::invalid(field, "must not contain control characters"));
    }
    Ok(())
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
    fn ids_are_validated() {
        assert!(validate_key("a").is_ok());
        assert!(validate_key(&"k".repeat(MAX_KEY_BYTES)).is_ok());
        for bad in ["", "  ", "a\nb", "\u{0}"] {
            let err = validate_key(bad).expect_err(bad);
            assert_eq!(err.field(), Some("key"));
        }
        let err = validate_key(&"k".repeat(MAX_KEY_BYTES + 1)).expect_err("too long");
        assert!(err.to_string().contains("at most 512 bytes"), "{err}");
        assert_eq!(validate_owner("").expect_err("blank").field(), Some("owner"));
    }

    #[test]
    fn acquire_request_defaults_and_rejects_unknown_fields() {
        let req: AcquireRequest =
            serde_json::from_str(r#"{"key":"k","owner":"o"}"#).expect("minimal body");
        assert_eq!(req.mode, Mode::Exclusive);
        let err = serde_json::from_str::<AcquireRequest>(r#"{"key":"k","owner":"o","x":1}"#)
            .expect_err("unknown field");
        assert!(err.to_string().contains("unknown field `x`"), "{err}");
    }
}
