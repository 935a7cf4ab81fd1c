//! The operation numbers of the bridge: [`Op`] is the only list of them.
//!
//! cbindgen emits [`Op`] into the committed C header `include/eslm.h` as the `ESLM_OP_*`
//! constants (renamed `EslmOp` there, see `cbindgen.toml`); the Java plugin's `NativeOp` is
//! checked against that header by a Java test, and ops go on the wire by these numbers. A number
//! is never reused or changed: a new op takes the next number (docs/ARCHITECTURE.md, "The
//! bridge").

/// Operation codes of `ops::call` (`eslm_call`), each with the JSON it takes and answers.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Take one lock or queue for it: `AcquireRequest` -> `AcquireOutcome`.
    Acquire = 1,
    /// Release one lock: `ReleaseRequest` -> `Released`.
    Release = 2,
    /// Extend a held lock's lease: `RenewRequest` -> `Renewed`.
    Renew = 3,
    /// Take several locks all at once or queue for them: `MultiAcquireRequest` -> `MultiOutcome`.
    AcquireMany = 4,
    /// Release several locks: `MultiReleaseRequest` -> the released locks.
    ReleaseMany = 5,
    /// Drop a queued request: `{"waiter_id"}` -> `{"cancelled": true}`.
    Cancel = 6,
    /// Open a session: `{"owner", "ttl_ms"?}` -> `SessionInfo`.
    SessionCreate = 7,
    /// Keep a session alive: `{"session"}` -> `SessionInfo`.
    SessionKeepalive = 8,
    /// End a session, releasing its locks and dropping its waiters: `{"session"}` -> `SessionEnded`.
    SessionEnd = 9,
    /// Holders and waiters of one key: `{"key", "scope"?}` -> `KeyInfo`.
    KeyInfo = 10,
    /// One page of held locks from every partition of the node: `ListFilter` ->
    /// `[{"partition", "locks": [LockInfo + partition], "next": ListCursor?}]`.
    List = 11,
    /// The node's lock statistics, summed over its partitions: `{}` -> stats.
    Stats = 12,
    /// Node-local facts for operators: `{}` -> partitions, oldest waiters, hot keys, settings.
    Diagnostics = 13,
    /// An administrator takes a key from whoever holds it: `{"key", "scope"?}` -> the released.
    ForceRelease = 14,
    /// Let time pass on one partition, or on all with partition -1: `{}` -> `{"now_ms"}`.
    Tick = 15,
    /// Apply new settings to every partition: `Config` -> the settings in force.
    Configure = 16,
    /// Weaken a held lock's mode: `DowngradeRequest` -> the grant's REST body, as an acquire's
    /// (docs/API.md `POST /_locks/{key}/_downgrade`).
    Downgrade = 17,
    /// The partition became this node's: `{"epoch", "grace_ms"?, "snapshot"?}` -> its state.
    OpenPartition = 18,
    /// The partition left this node: `{"export"?}` -> `{"snapshot"}` (null without export).
    ClosePartition = 19,
    /// The primary's next batch, ready to ship: `{"format"?, "full"?}` -> `{"batch", "empty"}`,
    /// the batch as JSON text (its changes since the previous take, time moved on to now, or with
    /// `full` its whole held state) and whether it changes nothing.
    TakeBatch = 20,
    /// The primary's whole held state: `{}` -> `FullState`.
    ExportFull = 21,
    /// Apply a batch to this node's standby: `{"full"}` | `{"delta"}` -> `{"applied", "seq"?, ..}`.
    StandbyApply = 22,
    /// This node's standby as a full state: `{"drop"?}` -> `{"full"}` (null without a standby).
    StandbyExport = 23,
    /// Watch one lock until it ends: `WatchRequest` -> `WatchOutcome` (a registered watch ends
    /// with a `watch_fired` or `watch_timed_out` event; its id is cancelled with `Cancel`).
    Watch = 24,
    /// An election's answer from its lock's, on the node that took the REST call:
    /// `{"elected": <acquire body>}` | `{"state": <key info body>, "observed_term"?}` -> the
    /// election body (docs/API.md "Elections"). Touches no partition.
    ElectionView = 25,
    /// Change a semaphore's limit while it is in use: `{"key", "limit"}` -> `{"key", "limit",
    /// "previous", "held"}` (waiters it lets in are granted as events). Below the permits held
    /// only when every node reads state format 3 (see `PeersRead`).
    SemaphoreLimit = 26,
    /// The state format every node of the cluster reads, from the plugin's node attributes:
    /// `{"format"}` -> `{"format"}`. What the oldest peer cannot read is refused.
    PeersRead = 27,
    /// Take the lock history's buffered records (docs/API.md "Lock history") of one partition, or
    /// of all with partition -1: `{"max"}` -> `{"bulk", "documents"}`, the body of one `_bulk`
    /// request of `create` actions (NDJSON text) and how many documents it holds.
    AuditDrain = 28,
    /// Create a group (docs/API.md "Groups"): `{"group"}` -> `{"group", "created"}`. Refused while
    /// a node of the cluster reads a state format older than `lock_core::STATE_FORMAT_GROUPS`.
    GroupCreate = 29,
    /// Delete a group that has no member: `{"group"}` -> `{"group", "deleted"}`.
    GroupDelete = 30,
    /// The partition's groups: `{}` -> `{"groups": [names]}`.
    GroupList = 31,
    /// A group's members and version: `{"group", "observed_version"?}` -> `{"group", "version",
    /// "members", "changed"?}`.
    GroupInfo = 32,
    /// Replace a member's capabilities: `{"group", "member", "capabilities"?}` -> the member.
    GroupUpdate = 33,
    /// Check a REST body and turn it into the core's arguments (docs/API.md; `requests/`):
    /// `{"request", "key"?, "session"?, "body"}` -> `{"parsed": {"args", "routing"?}}` |
    /// `{"refused": {"parse", "message"}}`. Touches no partition.
    ReadRequest = 34,
    /// One event of the ownership protocol (`lock_core::ownership`, docs/ARCHITECTURE.md "Silent
    /// owners"): `{"event": "source" | "sending" | "renewed" | "master_answered" | "answered" |
    /// "promoted" | "heard" | "look", ...}` -> its decision (see `ops/ownership.rs`).
    Ownership = 35,
    /// A fenced change to a protected document (`lock_core::fence`, docs/API.md "Fenced
    /// changes"): `{"source": <object> | null, "params"}` -> `{"write": <source>}` |
    /// `{"unchanged": {"fence"}}` | `{"stale": {"fence"}}`. Touches no partition.
    Fence = 36,
    /// The node's figures for Elasticsearch's telemetry (docs/OPERATIONS.md "Metrics"), over
    /// every partition with partition -1: `{"samples"?: "none" | "take" | "stop"}` -> `{"grants",
    /// "conflicts", "timeouts", "expiries", "deadlocks", "preemptions", "force_releases", "held",
    /// "waiting", "sessions", "memory_bytes", "served", "unconfirmed", "wait_time_ms",
    /// "hold_time_ms"}`, the last two the samples drained since the previous `take` as `[value,
    /// count]` pairs (empty without one); `stop` ends the recording `take` started (`telemetry.rs`).
    Telemetry = 37,
}
