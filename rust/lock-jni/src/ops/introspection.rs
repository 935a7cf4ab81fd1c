//! Handlers that report rather than change: the node's held locks, its statistics and its
//! diagnostics, each over every partition the node owns.
//!
//! None of them moves a partition's time on: a read answers from the table as the last call or
//! tick left it, so it never expires a lease nor grants a waiter. Only the plugin decides when
//! a partition may move on ([`super::Op::Tick`], sent only for partitions whose ownership the
//! elected master confirmed, docs/ARCHITECTURE.md "Cut-off owners"); it ticks those before a
//! read, so their answers are current, while a partition whose owner may be cut off is shown
//! frozen instead of handing its locks on.

use lock_core::{
    FencingToken, HistogramSummary, HotKey, ListCursor, ListFilter, LockInfo, Millis, Mode,
    PartitionStats, Scope,
};
use serde::Serialize;
use serde_json::{json, Value};

use super::{decode, to_json, to_value, BridgeError, Ctx};
use crate::node::NodeCore;

/// Hottest keys shown by stats and diagnostics.
const HOT_KEYS_SHOWN: usize = 10;
/// Longest-waiting requests shown by diagnostics.
const OLDEST_WAITERS_SHOWN: usize = 10;

/// One page of held locks from each partition the node serves: `[{"partition", "locks",
/// "next"}]`, each page in (key, scope, owner) order with its own cursor (`null` when that
/// partition has nothing more). Each partition's mutex is held for one bounded page only
/// (rust/lock-core/src/table/listing.rs); the plugin merges the pages (`ListPages`).
/// `session` says only whether a lock is held under one: a session's id is its owner's
/// credential, never listed (docs/API.md, "GET /_locks").
pub(super) fn list(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let filter: ListFilter = decode(args)?;
    let mut pages = Vec::new();
    let now_us = cx.core.now_us();
    for (id, p) in cx.core.partitions() {
        if !cx.core.verdict(id, now_us).serves() {
            continue; // a node without a current lease shows nothing: the listing says so (no page)
        }
        cx.current = Some(id); // a panic in its listing fails this partition
        pages.push((id, p.list_page(&filter)));
    }
    let pages: Vec<ListedPage<'_>> = pages
        .iter()
        .map(|(partition, page)| ListedPage {
            partition: *partition,
            locks: page
                .locks
                .iter()
                .map(|lock| ListedLock::of(lock, *partition, cx.core.node_name()))
                .collect(),
            next: &page.next,
        })
        .collect();
    to_json(&pages)
}

/// One partition's page as the bridge answers it.
#[derive(Serialize)]
struct ListedPage<'a> {
    partition: u32,
    locks: Vec<ListedLock<'a>>,
    next: &'a Option<ListCursor>,
}

/// One listed lock: the [`LockInfo`] with `session` only as a flag, fields in the order the
/// answer has always had. Written straight to text (no `serde_json::Value` per lock: pages of
/// 1000 are listed continuously, bench/RESULTS.md "Listing a million held locks").
#[derive(Serialize)]
struct ListedLock<'a> {
    fencing_token: FencingToken,
    held_ms: Millis,
    key: &'a str,
    lease_ms: Millis,
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<u32>,
    mode: Mode,
    owner: &'a str,
    partition: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    permits: Option<u32>,
    scope: Scope,
    session: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lock_delay_ms: Option<Millis>,
    #[serde(skip_serializing_if = "Option::is_none")]
    priority: Option<u8>,
    /// The node serving it (absent outside a node).
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<&'a str>,
}

impl<'a> ListedLock<'a> {
    fn of(lock: &'a LockInfo, partition: u32, node: Option<&'a str>) -> Self {
        // Destructured in full, so that a field added to `LockInfo` fails here until it is listed.
        let LockInfo {
            key,
            scope,
            owner,
            mode,
            fencing_token,
            held_ms,
            lease_ms,
            session,
            permits,
            limit,
            value,
            lock_delay_ms,
            priority,
            // Never listed: the acquisition's digest stays inside the replicated state.
            acquisition: _,
        } = lock;
        ListedLock {
            fencing_token: *fencing_token,
            held_ms: *held_ms,
            key,
            lease_ms: *lease_ms,
            limit: *limit,
            mode: *mode,
            owner,
            partition,
            permits: *permits,
            scope: *scope,
            session: session.is_some(),
            value: value.as_deref(),
            lock_delay_ms: *lock_delay_ms,
            priority: *priority,
            node,
        }
    }
}

pub(super) fn stats(cx: &mut Ctx<'_>, _args: &str) -> Result<String, BridgeError> {
    let mut partitions = Vec::new();
    for (id, p) in cx.core.partitions() {
        cx.current = Some(id);
        partitions.push((id, p.stats()));
    }
    let mut stats = node_stats(&partitions);
    stats["limits"] = to_value(&cx.core.config().limits)?;
    Ok(stats.to_string())
}

/// Node-local facts for `GET /_locks/_node/diagnostics`, at the partitions' own time.
pub(super) fn diagnostics(cx: &mut Ctx<'_>, _args: &str) -> Result<String, BridgeError> {
    Ok(node_diagnostics(cx.core, cx.now)?.to_string())
}

/// The node's lock statistics as `GET /_locks/_stats` shows them: counters and gauges summed
/// over the node's partitions; time percentiles are the largest partition's (an upper bound,
/// exact with one partition); `partitions` keeps the per-partition detail.
fn node_stats(partitions: &[(u32, PartitionStats)]) -> Value {
    let sum =
        |f: &dyn Fn(&PartitionStats) -> u64| -> u64 { partitions.iter().map(|(_, s)| f(s)).sum() };
    let mut hot: Vec<HotKey> =
        partitions.iter().flat_map(|(_, s)| s.hottest_keys.iter().cloned()).collect();
    let detail: Vec<Value> = partitions
        .iter()
        .map(|(id, s)| {
            json!({
                "id": id,
                "epoch": s.epoch,
                "held": s.held_locks,
                "semaphore_grants": s.semaphore_grants,
                "election_leaders": s.election_leaders,
                "waiting": s.waiting,
                "watches": s.watches,
                "sessions": s.sessions,
                "memory_bytes": s.memory.total,
                "memory": s.memory,
            })
        })
        .collect();
    json!({
        "acquires": sum(&|s| s.counters.acquires),
        "grants": sum(&|s| s.counters.immediate_grants + s.counters.grants_after_wait),
        "reentrant_grants": sum(&|s| s.counters.reentrant_grants),
        "queued": sum(&|s| s.counters.queued),
        "conflicts": sum(&|s| s.counters.conflicts),
        "timeouts": sum(&|s| s.counters.wait_timeouts),
        "expiries": sum(&|s| s.counters.lease_expiries),
        "deadlocks": sum(&|s| s.counters.deadlocks),
        "cancelled": sum(&|s| s.counters.cancelled),
        "releases": sum(&|s| s.counters.releases),
        "renewals": sum(&|s| s.counters.renewals),
        "limit_rejections": sum(&|s| s.counters.limit_rejections),
        "lock_delays": sum(&|s| s.counters.lock_delays),
        "revokes_requested": sum(&|s| s.counters.revokes_requested),
        "preemptions": sum(&|s| s.counters.preemptions),
        "force_releases": sum(&|s| s.counters.force_releases),
        "held": sum(&|s| s.held_locks as u64),
        "semaphore_grants": sum(&|s| s.semaphore_grants as u64),
        "held_permits": sum(&|s| s.held_permits),
        "election_leaders": sum(&|s| s.election_leaders as u64),
        "waiting": sum(&|s| s.waiting as u64),
        "watches": sum(&|s| s.watches as u64),
        "sessions": sum(&|s| s.sessions as u64),
        "memory_bytes": sum(&|s| s.memory.total),
        "wait_time_ms": times(partitions, &|s| &s.wait_time),
        "hold_time_ms": times(partitions, &|s| &s.hold_time),
        "hot_keys": hottest(&mut hot),
        "audit_recorded": sum(&|s| s.audit.recorded),
        "audit_dropped": sum(&|s| s.audit.dropped),
        "audit_buffered": sum(&|s| s.audit.buffered),
        "partitions": detail,
    })
}

/// One time histogram over the partitions: counts summed, percentiles the largest partition's.
/// `count` is every sample since the partitions opened; `window_count` and the percentiles cover
/// the last [`lock_core::WINDOW_MS`] only (rust/lock-core/src/histogram.rs).
fn times(
    partitions: &[(u32, PartitionStats)],
    f: &dyn Fn(&PartitionStats) -> &HistogramSummary,
) -> Value {
    let max = |g: &dyn Fn(&HistogramSummary) -> u64| {
        partitions.iter().map(|(_, s)| g(f(s))).max().unwrap_or(0)
    };
    json!({
        "count": partitions.iter().map(|(_, s)| f(s).count).sum::<u64>(),
        "window_count": partitions.iter().map(|(_, s)| f(s).window_count).sum::<u64>(),
        "p50": max(&|h| h.p50_ms),
        "p90": max(&|h| h.p90_ms),
        "p99": max(&|h| h.p99_ms),
        "max": max(&|h| h.max_ms),
    })
}

/// The [`HOT_KEYS_SHOWN`] hottest keys as the API shows them: `acquires` counts the key's
/// contended acquire requests (conflicts and queued), over-stated by at most `error`
/// (Space-Saving sketch).
fn hottest(hot: &mut Vec<HotKey>) -> Vec<Value> {
    hot.sort_by_key(|h| std::cmp::Reverse(h.contended));
    hot.truncate(HOT_KEYS_SHOWN);
    hot.iter().map(|h| json!({ "key": h.key, "acquires": h.contended, "error": h.error })).collect()
}

fn node_diagnostics(core: &NodeCore, now: u64) -> Result<Value, BridgeError> {
    let mut partitions = Vec::new();
    let mut oldest = Vec::new();
    let mut hot = Vec::new();
    let now_us = core.now_us();
    for (id, p) in core.partitions() {
        let stats = p.stats();
        partitions.push(json!({
            "id": id,
            "epoch": stats.epoch,
            "state": if core.in_grace(id) { "grace" } else { "active" },
            "grace_left_ms": core.grace_left_ms(id),
            // Whether this node's right to serve it is current (`lock_core::ownership`), and for
            // how long yet.
            "confirmed": core.verdict(id, now_us).serves(),
            "lease_left_ms": core.ownership(|o| o.lease_left_us(id, now_us)) / 1_000,
            "held": stats.held_locks,
            "held_keys": stats.held_keys,
            "semaphore_grants": stats.semaphore_grants,
            "held_permits": stats.held_permits,
            "election_leaders": stats.election_leaders,
            "waiting": stats.waiting,
            "watches": stats.watches,
            "sessions": stats.sessions,
            "memory_bytes": stats.memory.total,
            "memory": stats.memory,
        }));
        for w in p.oldest_waiters(OLDEST_WAITERS_SHOWN) {
            oldest.push(json!({ "partition": id, "waiter": to_value(&w)? }));
        }
        hot.extend(stats.hottest_keys);
    }
    oldest.sort_by_key(|w| std::cmp::Reverse(w["waiter"]["waited_ms"].as_u64().unwrap_or(0)));
    oldest.truncate(OLDEST_WAITERS_SHOWN);
    Ok(json!({
        "core_version": lock_core::VERSION,
        "bridge_version": crate::BRIDGE_VERSION,
        "uptime_ms": now,
        "config": to_value(&core.config())?,
        "partitions": partitions,
        "oldest_waiters": oldest,
        "hot_keys": hottest(&mut hot),
    }))
}
