//! The requests the bridge hands over, as JSON records: acquire, multi-acquire, release,
//! multi-release, renew, downgrade, watch, force-release and a key's holders and waiters.
//!
//! Only shapes and defaults live here; what a valid value is (key syntax, limits, priority
//! range) is checked in one place, `validate.rs`, when the table takes the request.

use serde::{Deserialize, Serialize};

use crate::mode::Mode;
use crate::types::{FencingToken, Millis, PriorityValue, Scope};

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
    /// Semaphores only: permits asked for, 1..=`limit` (absent = 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permits: Option<u32>,
    /// Semaphores only (and required there): the semaphore's limit, 1..=65535; must equal the
    /// key's limit while anyone holds or waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Elections only: the value kept with the grant (at most
    /// [`crate::types::MAX_ELECTION_VALUE_BYTES`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Lock-delay of the grant (docs/LOCK_CORE.md, "Lock-delay"), at most
    /// [`crate::MAX_LOCK_DELAY_MS`]; absent = [`crate::Config::default_lock_delay_ms`]; not on
    /// semaphores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_delay_ms: Option<Millis>,
    /// Preemption (docs/LOCK_CORE.md, "Preemption"): while this request waits, holders of lower
    /// priority in its way are asked to yield and lose their locks after this grace. Needs a
    /// `wait`; not on semaphores; capped by [`crate::Config::max_lease_ms`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt_ms: Option<Millis>,
    /// The acquisition this is (docs/API.md, "Acquisitions"): the same id again gets the same
    /// grant back (a retry); another id, or none, while the owner holds the key is a new
    /// acquisition, granted under a newer token that ends the one held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquisition: Option<String>,
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
    /// As [`AcquireRequest::lock_delay_ms`], for every key of the multi-lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_delay_ms: Option<Millis>,
    /// As [`AcquireRequest::acquisition`], for every key of the multi-lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquisition: Option<String>,
}

/// A release: only a holder may release, and what it names (token, acquisition) must be the
/// holder's grant ([`crate::LockTable::release`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ReleaseRequest {
    pub key: String,
    pub owner: String,
    #[serde(default)]
    pub fencing_token: Option<FencingToken>,
    #[serde(default)]
    pub scope: Scope,
    /// The acquisition this request names (docs/API.md, "Acquisitions"): chosen by the client,
    /// at most [`crate::types::MAX_ACQUISITION_BYTES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquisition: Option<String>,
}

/// One key of a multi-release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseItem {
    pub key: String,
    #[serde(default)]
    pub scope: Scope,
    /// Release only this grant of the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fencing_token: Option<FencingToken>,
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
    /// Release only the locks of this acquisition (with `locks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquisition: Option<String>,
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
    /// The acquisition this request names (docs/API.md, "Acquisitions"): chosen by the client,
    /// at most [`crate::types::MAX_ACQUISITION_BYTES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquisition: Option<String>,
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
    /// The acquisition this request names (docs/API.md, "Acquisitions"): chosen by the client,
    /// at most [`crate::types::MAX_ACQUISITION_BYTES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquisition: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Priority;

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
}

/// A watch on one lock: answer when the lock of `key` with `fencing_token` ends
/// ([`crate::LockTable::watch`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchRequest {
    pub key: String,
    #[serde(default)]
    pub scope: Scope,
    pub fencing_token: FencingToken,
    /// How long to wait for the end; 0 or absent = answer at once. Capped by
    /// [`crate::Config::max_wait_ms`].
    #[serde(default)]
    pub wait_ms: Option<Millis>,
    /// The caller's correlation id, echoed in the watch's event.
    #[serde(default)]
    pub request_id: u64,
    /// Also end with [`crate::WatchReason::RevokeRequested`] when a waiter asks the holder to
    /// yield (answered at once if one already has).
    #[serde(default)]
    pub revoke: bool,
}

/// Names the key whose holders and waiters [`crate::LockTable::key_info`] answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct KeyInfoRequest {
    pub key: String,
    #[serde(default)]
    pub scope: Scope,
}

impl KeyInfoRequest {
    /// Plain key `key` (scope `key`).
    pub fn new(key: impl Into<String>) -> Self {
        KeyInfoRequest { key: key.into(), ..Default::default() }
    }
}

/// An administrator's force-release: every holder of `key` loses its lock
/// ([`crate::LockTable::force_release`]), whatever it holds it under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ForceReleaseRequest {
    pub key: String,
    #[serde(default)]
    pub scope: Scope,
    /// Why, for the log and the lock history, which records it with each lock taken
    /// (docs/LOCK_CORE.md "Lock history").
    #[serde(default)]
    pub reason: Option<String>,
}

impl ForceReleaseRequest {
    /// A force-release of plain key `key`, with no reason.
    pub fn new(key: impl Into<String>) -> Self {
        ForceReleaseRequest { key: key.into(), ..Default::default() }
    }
}
