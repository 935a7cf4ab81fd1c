//! Counters and a bounded hottest-keys sketch for one partition; its time histograms are in
//! `histogram`.

use serde::{Deserialize, Serialize};

use crate::histogram::{DrainedSamples, HistogramSummary};

/// Counters of one partition since it was created (or imported).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub acquires: u64,
    pub immediate_grants: u64,
    pub reentrant_grants: u64,
    pub queued: u64,
    pub grants_after_wait: u64,
    pub conflicts: u64,
    pub wait_timeouts: u64,
    pub cancelled: u64,
    pub deadlocks: u64,
    pub releases: u64,
    pub lease_expiries: u64,
    pub renewals: u64,
    pub upgrades: u64,
    pub downgrades: u64,
    pub sessions_created: u64,
    pub sessions_expired: u64,
    pub limit_rejections: u64,
    /// Lock-delays started: locks granted with one that ended without their holder's release
    /// (`table/delay.rs`).
    #[serde(default)]
    pub lock_delays: u64,
    /// Holders asked to yield to a preempting waiter (`table/preempt.rs`).
    #[serde(default)]
    pub revokes_requested: u64,
    /// Locks taken away when their grace ended.
    #[serde(default)]
    pub preemptions: u64,
    /// Locks an administrator took away (`force_release`), one per lock removed.
    #[serde(default)]
    pub force_releases: u64,
}

impl Counters {
    /// Adds `other`'s counts to these (a node's total over partitions, those gone included).
    pub fn absorb(&mut self, other: &Counters) {
        // Destructured in full, so that a counter added to `Counters` fails here until it is summed.
        let Counters {
            acquires,
            immediate_grants,
            reentrant_grants,
            queued,
            grants_after_wait,
            conflicts,
            wait_timeouts,
            cancelled,
            deadlocks,
            releases,
            lease_expiries,
            renewals,
            upgrades,
            downgrades,
            sessions_created,
            sessions_expired,
            limit_rejections,
            lock_delays,
            revokes_requested,
            preemptions,
            force_releases,
        } = other;
        self.acquires += acquires;
        self.immediate_grants += immediate_grants;
        self.reentrant_grants += reentrant_grants;
        self.queued += queued;
        self.grants_after_wait += grants_after_wait;
        self.conflicts += conflicts;
        self.wait_timeouts += wait_timeouts;
        self.cancelled += cancelled;
        self.deadlocks += deadlocks;
        self.releases += releases;
        self.lease_expiries += lease_expiries;
        self.renewals += renewals;
        self.upgrades += upgrades;
        self.downgrades += downgrades;
        self.sessions_created += sessions_created;
        self.sessions_expired += sessions_expired;
        self.limit_rejections += limit_rejections;
        self.lock_delays += lock_delays;
        self.revokes_requested += revokes_requested;
        self.preemptions += preemptions;
        self.force_releases += force_releases;
    }
}

/// The hottest keys by contention (conflicts + queued requests), kept with the Space-Saving
/// algorithm: at most `capacity` entries; a new key replaces the coldest one and inherits its
/// count, so a key's count may over-state by at most the replaced count (`error`).
#[derive(Debug, Clone, Default)]
pub struct HotKeys {
    capacity: usize,
    entries: Vec<HotKey>,
}

/// One entry of the hottest-keys list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HotKey {
    pub key: String,
    /// Contended requests counted for this key (may over-state by up to `error`).
    pub contended: u64,
    pub error: u64,
}

impl HotKeys {
    /// A sketch tracking at most `capacity` keys.
    pub fn new(capacity: usize) -> Self {
        HotKeys { capacity, entries: Vec::new() }
    }

    /// Counts one contended request on `key`.
    pub fn hit(&mut self, key: &str) {
        if self.capacity == 0 {
            return;
        }
        if let Some(e) = self.entries.iter_mut().find(|e| e.key == key) {
            e.contended += 1;
            return;
        }
        if self.entries.len() < self.capacity {
            self.entries.push(HotKey { key: key.to_owned(), contended: 1, error: 0 });
            return;
        }
        if let Some(min) = self.entries.iter_mut().min_by_key(|e| e.contended) {
            let floor = min.contended;
            *min = HotKey { key: key.to_owned(), contended: floor + 1, error: floor };
        }
    }

    /// The tracked keys, hottest first.
    pub fn top(&self) -> Vec<HotKey> {
        let mut v = self.entries.clone();
        v.sort_by(|a, b| b.contended.cmp(&a.contended).then_with(|| a.key.cmp(&b.key)));
        v
    }
}

/// Everything `stats()` reports for one partition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionStats {
    pub epoch: u64,
    pub counters: Counters,
    pub held_locks: usize,
    pub held_keys: usize,
    /// Live semaphore grants (part of `held_locks`) and the permits they hold.
    #[serde(default)]
    pub semaphore_grants: usize,
    #[serde(default)]
    pub held_permits: u64,
    /// Elections that have a leader (live grants of scope `election`, part of `held_locks`).
    #[serde(default)]
    pub election_leaders: usize,
    pub waiting: usize,
    /// Watches registered (`GET /_locks/{key}/_watch`).
    #[serde(default)]
    pub watches: usize,
    pub sessions: usize,
    pub wait_time: HistogramSummary,
    pub hold_time: HistogramSummary,
    pub hottest_keys: Vec<HotKey>,
    /// The table's estimated heap bytes (see [`crate::MemoryUsage`]).
    #[serde(default)]
    pub memory: crate::MemoryUsage,
    /// The lock history's buffer (docs/LOCK_CORE.md "Lock history").
    #[serde(default)]
    pub audit: AuditStats,
}

/// What a drain of the time samples does ([`crate::LockTable::telemetry`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SampleDrain {
    /// Leaves them: counters and gauges only.
    #[default]
    None,
    /// Takes the samples since the previous drain and keeps recording (the first one starts it).
    Take,
    /// Takes them and stops recording until the next [`SampleDrain::Take`].
    Stop,
}

/// One partition's figures for Elasticsearch's telemetry (docs/OPERATIONS.md "Metrics"): its
/// counters and gauges, read without computing the percentiles [`PartitionStats`] holds, and the
/// wait and hold times recorded since the previous drain (empty unless asked,
/// [`SampleDrain`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Telemetry {
    pub counters: Counters,
    pub held_locks: usize,
    pub waiting: usize,
    pub sessions: usize,
    /// The table's estimated heap bytes ([`crate::MemoryUsage::total`]).
    pub memory_bytes: u64,
    pub wait_time: DrainedSamples,
    pub hold_time: DrainedSamples,
}

/// The lock history's counters of one table since it was created (or imported).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditStats {
    /// Records pushed into the buffer.
    pub recorded: u64,
    /// Records refused by a full buffer, or buffered when the history was turned off.
    pub dropped: u64,
    /// Records in the buffer, not yet drained.
    pub buffered: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_keys_keep_the_hottest() {
        let mut hk = HotKeys::new(2);
        for _ in 0..10 {
            hk.hit("a");
        }
        for _ in 0..5 {
            hk.hit("b");
        }
        hk.hit("c");
        let top = hk.top();
        assert_eq!(top[0].key, "a");
        assert_eq!(top[0].contended, 10);
        assert_eq!(top.len(), 2);
        assert_eq!(top[1].key, "c", "c replaced the colder b");
        assert_eq!(top[1].error, 5);
    }
}
