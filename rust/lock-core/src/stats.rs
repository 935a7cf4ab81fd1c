//! Counters, log-bucket histograms and a bounded hottest-keys sketch for one partition.

use serde::{Deserialize, Serialize};

use crate::types::Millis;

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
}

/// Buckets of a [`Histogram`]: one for 0 and one per bit length of a `u64` (1..=64).
const BUCKETS: usize = u64::BITS as usize + 1;

/// A histogram of milliseconds in power-of-two buckets: bucket 0 holds 0, bucket `i` holds
/// `[2^(i-1), 2^i)`. Percentiles answer the bucket's upper bound, so they over-state by at most
/// a factor of two — plenty for "p99 wait is about 200 ms".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    buckets: [u64; BUCKETS],
    count: u64,
    sum: u128,
    max: Millis,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { buckets: [0; BUCKETS], count: 0, sum: 0, max: 0 }
    }
}

impl Histogram {
    /// Adds one value.
    pub fn record(&mut self, v: Millis) {
        let idx = (u64::BITS - v.leading_zeros()) as usize;
        if let Some(b) = self.buckets.get_mut(idx) {
            *b += 1;
        }
        self.count += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Upper bound of the bucket holding the `q`-quantile (`q` in 0..=1), capped by the
    /// largest value seen; 0 when empty.
    pub fn percentile(&self, q: f64) -> Millis {
        if self.count == 0 {
            return 0;
        }
        let q = if q.is_nan() { 1.0 } else { q.clamp(0.0, 1.0) };
        let rank = ((q * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, b) in self.buckets.iter().enumerate() {
            seen += b;
            if seen >= rank {
                let upper =
                    if i == 0 { 0 } else { 1u64.checked_shl(i as u32).map_or(u64::MAX, |x| x - 1) };
                return upper.min(self.max);
            }
        }
        self.max
    }

    /// A serialisable summary.
    pub fn summary(&self) -> HistogramSummary {
        HistogramSummary {
            count: self.count,
            mean_ms: if self.count == 0 { 0 } else { (self.sum / u128::from(self.count)) as u64 },
            p50_ms: self.percentile(0.50),
            p90_ms: self.percentile(0.90),
            p99_ms: self.percentile(0.99),
            max_ms: self.max,
        }
    }
}

/// Percentiles of a [`Histogram`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistogramSummary {
    pub count: u64,
    pub mean_ms: Millis,
    pub p50_ms: Millis,
    pub p90_ms: Millis,
    pub p99_ms: Millis,
    pub max_ms: Millis,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_percentiles_bound_the_values() {
        let mut h = Histogram::default();
        assert_eq!(h.percentile(0.5), 0);
        for v in 1..=100 {
            h.record(v);
        }
        let p50 = h.percentile(0.5);
        assert!((50..=127).contains(&p50), "{p50}");
        assert_eq!(h.percentile(1.0), 100, "capped by the max");
        assert_eq!(h.summary().count, 100);
        assert_eq!(h.summary().mean_ms, 50);
        h.record(u64::MAX);
        assert_eq!(h.percentile(1.0), u64::MAX);
    }

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
