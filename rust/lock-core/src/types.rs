//! Value types shared by the table, the partition and the bridge: keys, owners, modes, fencing
//! tokens and the request/answer records that cross the JNI bridge as JSON.

use serde::{Deserialize, Serialize};

use crate::error::LockError;

/// Monotonic time in milliseconds, as given by the caller's clock.
pub type Millis = u64;

/// Id of a queued request, assigned by the table and carried by its final event.
pub type WaiterId = u64;

/// Longest key, in UTF-8 bytes (DESIGN.md §4).
pub const MAX_KEY_BYTES: usize = 512;
/// Longest owner id, in UTF-8 bytes.
pub const MAX_OWNER_BYTES: usize = 512;

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

    /// Validates a caller's priority; `None` is [`Priority::FOREGROUND`].
    pub fn parse(value: Option<&PriorityValue>) -> Result<Priority, LockError> {
        match value {
            None => Ok(Priority::FOREGROUND),
            Some(PriorityValue::Level(l)) => {
                u8::try_from(*l).ok().filter(|l| *l <= Priority::MAX.0).map(Priority).ok_or_else(
                    || LockError::invalid("priority", format!("must be 0..=9, got {l}")),
                )
            }
            Some(PriorityValue::Name(n)) => match n.as_str() {
                "background" => Ok(Priority::BACKGROUND),
                "foreground" => Ok(Priority::FOREGROUND),
                other => Err(LockError::invalid(
                    "priority",
                    format!("must be 0..=9, [background] or [foreground], got [{other}]"),
                )),
            },
        }
    }
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

/// An acquire as the bridge hands it over. Only `key` and `owner` are required; every later
/// field has a default so that older callers keep working.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AcquireRequest {
    pub key: String,
    pub owner: String,
    #[serde(default)]
    pub mode: Mode,
    /// `key` (default) or `tree` (then `key` is an absolute `/` path).
    #[serde(default)]
    pub scope: Scope,
    /// 0..=9, `background` or `foreground` (default).
    #[serde(default)]
    pub priority: Option<PriorityValue>,
    /// How long to queue; 0 or absent = try-lock. Capped by [`crate::Config::max_wait_ms`].
    #[serde(default)]
    pub wait_ms: Option<Millis>,
    /// Lease length; absent = [`crate::Config::default_lease_ms`]. Capped by
    /// [`crate::Config::max_lease_ms`]. Ignored when `session` is given.
    #[serde(default)]
    pub lease_ms: Option<Millis>,
    /// Hold the lock under this session's lease instead of its own.
    #[serde(default)]
    pub session: Option<String>,
    /// The caller's correlation id, echoed in the request's final [`crate::Event`].
    #[serde(default)]
    pub request_id: u64,
}

impl AcquireRequest {
    /// An exclusive try-lock of `key` by `owner`, every other field at its default.
    pub fn new(key: impl Into<String>, owner: impl Into<String>) -> Self {
        AcquireRequest { key: key.into(), owner: owner.into(), ..Default::default() }
    }
}

/// One key of a multi-lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockItem {
    pub key: String,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub scope: Scope,
}

/// Many keys, granted all together or not at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct MultiAcquireRequest {
    pub owner: String,
    pub locks: Vec<LockItem>,
    #[serde(default)]
    pub priority: Option<PriorityValue>,
    #[serde(default)]
    pub wait_ms: Option<Millis>,
    #[serde(default)]
    pub lease_ms: Option<Millis>,
    #[serde(default)]
    pub session: Option<String>,
    #[serde(default)]
    pub request_id: u64,
}

/// A release: only a holder may release, and when a token is given it must be the holder's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ReleaseRequest {
    pub key: String,
    pub owner: String,
    #[serde(default)]
    pub fencing_token: Option<FencingToken>,
    #[serde(default)]
    pub scope: Scope,
}

/// One key of a multi-release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseItem {
    pub key: String,
    #[serde(default)]
    pub scope: Scope,
}

/// Release several keys, or (`all: true`) everything `owner` holds in the partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct MultiReleaseRequest {
    pub owner: String,
    #[serde(default)]
    pub locks: Vec<ReleaseItem>,
    #[serde(default)]
    pub all: bool,
}

/// Extend a held lock's lease. A lock held under a session renews the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RenewRequest {
    pub key: String,
    pub owner: String,
    #[serde(default)]
    pub fencing_token: Option<FencingToken>,
    #[serde(default)]
    pub scope: Scope,
    /// New lease from now; absent = the default lease.
    #[serde(default)]
    pub lease_ms: Option<Millis>,
}

/// Weaken a held lock (e.g. exclusive → shared); the token stays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct DowngradeRequest {
    pub key: String,
    pub owner: String,
    pub mode: Mode,
    #[serde(default)]
    pub fencing_token: Option<FencingToken>,
    #[serde(default)]
    pub scope: Scope,
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
    #[serde(default)]
    pub scope: Scope,
    /// Milliseconds of lease left at the time of the answer.
    #[serde(default)]
    pub lease_ms: Millis,
    /// The session holding the lock, if any.
    #[serde(default)]
    pub session: Option<String>,
}

/// What an acquire did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AcquireOutcome {
    /// Granted at once.
    Granted(Grant),
    /// Queued: the final outcome arrives as an [`crate::Event`] carrying this waiter id.
    Queued(Queued),
}

/// What [`crate::LockTable::acquire_token`] did: like [`AcquireOutcome`], without echoing the
/// key and owner the caller already has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenOutcome {
    Granted(TokenGrant),
    Queued(Queued),
}

/// A grant without the echoed names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenGrant {
    pub fencing_token: FencingToken,
    pub mode: Mode,
    pub lease_ms: Millis,
    pub reentrant: bool,
}

/// What a multi-acquire did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MultiOutcome {
    /// Every key granted at once, in request order.
    Granted(Vec<Grant>),
    /// Queued as one waiter for all keys.
    Queued(Queued),
}

/// A queued request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queued {
    pub waiter_id: WaiterId,
    pub request_id: u64,
    /// When the request times out unless granted before.
    pub deadline: Millis,
}

/// The answer to a release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Released {
    pub key: String,
    pub owner: String,
    pub fencing_token: FencingToken,
}

/// The answer to a renew.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Renewed {
    pub key: String,
    pub owner: String,
    pub fencing_token: FencingToken,
    /// Lease left from now.
    pub lease_ms: Millis,
}

/// One holder of a key, as shown by lookups and conflict errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HolderInfo {
    pub owner: String,
    pub mode: Mode,
    pub fencing_token: FencingToken,
    /// Milliseconds since the grant.
    pub held_ms: Millis,
    /// Milliseconds of lease left.
    #[serde(default)]
    pub lease_ms: Millis,
    /// True when this is an intention mode put on an ancestor by a tree lock below it.
    #[serde(default)]
    pub intention: bool,
}

/// One queued request on a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaiterInfo {
    pub waiter_id: WaiterId,
    pub owner: String,
    pub mode: Mode,
    pub priority: Priority,
    pub waited_ms: Millis,
    /// Milliseconds until the request times out.
    pub wait_left_ms: Millis,
    /// The key waited for (its first key for a multi-lock); set where the waiter is listed
    /// without its key around it, e.g. in the oldest waiters of a partition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// Everything known about one key. A free key has no holders and no waiters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyInfo {
    pub key: String,
    #[serde(default)]
    pub scope: Scope,
    pub holders: Vec<HolderInfo>,
    /// In queue order (the next to be considered first).
    #[serde(default)]
    pub waiters: Vec<WaiterInfo>,
}

/// One held lock, as listed by owner or prefix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockInfo {
    pub key: String,
    pub scope: Scope,
    pub owner: String,
    pub mode: Mode,
    pub fencing_token: FencingToken,
    pub held_ms: Millis,
    pub lease_ms: Millis,
    pub session: Option<String>,
}

/// A session: one lease and keep-alive for many locks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub session: String,
    pub owner: String,
    pub ttl_ms: Millis,
    /// Milliseconds left until the session expires.
    pub expires_in_ms: Millis,
    pub locks: usize,
}

/// The answer to ending a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionEnded {
    pub session: String,
    /// Keys released, as `scope`-less names.
    pub released: Vec<String>,
    /// Waiters dropped (each also gets a cancelled event).
    pub dropped_waiters: usize,
}

/// Checks a key: 1..=512 bytes of UTF-8 (guaranteed by `&str`) with no control characters.
pub fn validate_key(key: &str) -> Result<(), LockError> {
    validate_id("key", key, MAX_KEY_BYTES)
}

/// Checks an owner id: the same rules as a key.
pub fn validate_owner(owner: &str) -> Result<(), LockError> {
    validate_id("owner", owner, MAX_OWNER_BYTES)
}

/// Checks a tree path: an absolute `/` path of non-empty segments, at most `max_depth` of them.
pub fn validate_tree_path(path: &str, max_depth: usize) -> Result<(), LockError> {
    validate_key(path)?;
    let Some(rest) = path.strip_prefix('/') else {
        return Err(LockError::invalid(
            "key",
            "a tree key must be an absolute path starting with /",
        ));
    };
    let mut depth = 0usize;
    for seg in rest.split('/') {
        if seg.is_empty() {
            return Err(LockError::invalid("key", "a tree path must not have empty segments"));
        }
        depth += 1;
    }
    if depth > max_depth {
        return Err(LockError::invalid(
            "key",
            format!("a tree path must have at most {max_depth} segments, got {depth}"),
        ));
    }
    Ok(())
}

/// The proper ancestors of a valid tree path, root first: `/a/b/c` → `/a`, `/a/b`.
pub fn tree_ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.char_indices().skip(1).filter(|(_, c)| *c == '/').map(move |(i, _)| &path[..i])
}

fn validate_id(field: &'static str, value: &str, max: usize) -> Result<(), LockError> {
    // Fast path for the common case: printable ASCII, not all spaces.
    let b = value.as_bytes();
    if b.len() <= max
        && b.iter().any(|&c| c != b' ')
        && b.iter().all(|&c| c.wrapping_sub(0x20) < 0x5f)
    {
        return Ok(());
    }
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
        assert_eq!(req.scope, Scope::Key);
        assert_eq!(req.wait_ms, None);
        let err = serde_json::from_str::<AcquireRequest>(r#"{"key":"k","owner":"o","x":1}"#)
            .expect_err("unknown field");
        assert!(err.to_string().contains("unknown field `x`"), "{err}");
        let req: AcquireRequest = serde_json::from_str(
            r#"{"key":"/a/b","owner":"o","mode":"ix","scope":"tree","priority":"background","wait_ms":5,"request_id":9}"#,
        )
        .expect("full body");
        assert_eq!(req.mode, Mode::IntentionExclusive);
        assert_eq!(Priority::parse(req.priority.as_ref()).expect("prio"), Priority::BACKGROUND);
        let req: AcquireRequest =
            serde_json::from_str(r#"{"key":"k","owner":"o","priority":3}"#).expect("level");
        assert_eq!(Priority::parse(req.priority.as_ref()).expect("prio"), Priority(3));
    }

    #[test]
    fn priorities_are_validated_naming_the_field() {
        for bad in
            [PriorityValue::Level(10), PriorityValue::Level(-1), PriorityValue::Name("x".into())]
        {
            assert_eq!(Priority::parse(Some(&bad)).expect_err("bad").field(), Some("priority"));
        }
        assert_eq!(Priority::parse(None).expect("default"), Priority::FOREGROUND);
    }

    #[test]
    fn priority_values_read_and_write_both_wire_forms() {
        let read = |json: &str| serde_json::from_str::<PriorityValue>(json);
        assert_eq!(read("3").expect("level"), PriorityValue::Level(3));
        assert_eq!(read("-1").expect("negative"), PriorityValue::Level(-1));
        assert_eq!(read("\"background\"").expect("name"), PriorityValue::Name("background".into()));
        // Too large for i64: still a level, refused by Priority::parse with the field named.
        let huge = read("18446744073709551615").expect("u64");
        assert_eq!(Priority::parse(Some(&huge)).expect_err("range").field(), Some("priority"));
        for bad in ["1.5", "true", "null", "[1]", "{}"] {
            let err = read(bad).expect_err(bad);
            assert!(err.to_string().contains("an integer 0..=9"), "{bad}: {err}");
        }
        for v in [PriorityValue::Level(7), PriorityValue::Name("foreground".into())] {
            let text = serde_json::to_string(&v).expect("write");
            assert_eq!(read(&text).expect("round trip"), v);
        }
    }

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

    #[test]
    fn tree_paths() {
        assert!(validate_tree_path("/a/b/c", 8).is_ok());
        for bad in ["a/b", "/", "/a//b", "/a/", ""] {
            assert_eq!(validate_tree_path(bad, 8).expect_err(bad).field(), Some("key"), "{bad}");
        }
        assert!(validate_tree_path("/a/b/c", 2).is_err());
        assert_eq!(tree_ancestors("/a/b/c").collect::<Vec<_>>(), vec!["/a", "/a/b"]);
        assert_eq!(tree_ancestors("/a").count(), 0);
    }
}
