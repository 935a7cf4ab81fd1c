//! Time histograms of one partition: percentiles over a recent window, counts since the start.
//!
//! `GET /_locks/_stats` answers "what is the p99 wait now", not "since the partition opened"
//! (docs/API.md, "GET /_locks/_stats"). A [`Histogram`] keeps the samples of the last
//! [`WINDOW_MS`] in a ring of [`SLOTS`] slots of [`SLOT_MS`] each; a slot is emptied when the
//! clock reaches it again, so a sample counts for at least `WINDOW_MS - SLOT_MS` and at most
//! `WINDOW_MS` after it was recorded. The total number of samples since the histogram was
//! created is kept apart ([`HistogramSummary::count`]).
//!
//! Each slot counts samples in log-linear buckets, as HdrHistogram does: values below
//! `2 × SUB_BUCKETS` (64 ms) have a bucket each (exact); above, every power-of-two range
//! `[2^e, 2^(e+1))` is split into [`SUB_BUCKETS`] buckets of equal width `2^(e-5)`. A percentile
//! answers the upper bound of its bucket (capped by the window's largest sample), so it is never
//! below the true value and over-states it by less than `1 / SUB_BUCKETS` of it
//! ([`RELATIVE_ERROR`], 3.125 %). Values from [`MAX_TRACKED_MS`] on (about 35 years) share the
//! last bucket, whose percentiles answer the window's largest sample (kept exactly).
//!
//! Memory: a slot is allocated when its first sample arrives and reused afterwards, at most
//! `SLOTS × BUCKETS × 4` bytes (27 KiB) per histogram; an idle partition keeps none.
//! Time is the table's own (monotonic milliseconds passed in by the caller), never the wall clock.
//!
//! For Elasticsearch's telemetry (docs/OPERATIONS.md "Metrics") a histogram also hands out the
//! samples recorded since it was last asked, [`Histogram::drain`]: per bucket a count, so at most
//! [`BUCKETS`] entries whatever the traffic, each answered as its bucket's upper bound (the
//! value a percentile would answer: never below the sample, over-stating it by less than
//! [`RELATIVE_ERROR`]). Nothing is kept for a drain until the first one asks: a node whose
//! telemetry is off pays one branch per sample.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::types::Millis;

/// The window percentiles are computed over: the last minute.
pub const WINDOW_MS: Millis = 60_000;
/// The step the window moves in: samples leave it a slot at a time.
pub const SLOT_MS: Millis = 10_000;
/// Slots in the ring (`WINDOW_MS / SLOT_MS`).
pub const SLOTS: usize = (WINDOW_MS / SLOT_MS) as usize;
/// Buckets per power of two above the exact range (a power of two: `1 << SUB_BITS`).
pub const SUB_BUCKETS: u64 = 1 << SUB_BITS;
/// The most a percentile over-states its true value, as a share of it.
pub const RELATIVE_ERROR: f64 = 1.0 / SUB_BUCKETS as f64;
/// Values from here on share the last bucket (2^40 ms, about 35 years).
pub const MAX_TRACKED_MS: Millis = 1 << MAX_EXPONENT;

const SUB_BITS: u32 = 5;
/// Values below this have a bucket each.
const EXACT: u64 = 2 * SUB_BUCKETS;
/// Exponent of [`MAX_TRACKED_MS`].
const MAX_EXPONENT: u32 = 40;
/// Buckets per slot: the exact range, then `SUB_BUCKETS` per power of two from `2^6` to `2^39`.
pub const BUCKETS: usize = (EXACT + (MAX_EXPONENT - SUB_BITS - 1) as u64 * SUB_BUCKETS) as usize;

// A bucket's index fits the `u16` keys of `Histogram::since_drain`.
const _: () = assert!(BUCKETS <= u16::MAX as usize);

/// The bucket of `v`.
fn bucket_of(v: Millis) -> usize {
    let v = v.min(MAX_TRACKED_MS - 1);
    if v < EXACT {
        return v as usize;
    }
    let exponent = u64::BITS - 1 - v.leading_zeros(); // v in [2^exponent, 2^(exponent+1))
    let shift = exponent - SUB_BITS;
    let sub = (v >> shift) - SUB_BUCKETS; // in [0, SUB_BUCKETS)
    (EXACT + u64::from(exponent - SUB_BITS - 1) * SUB_BUCKETS + sub) as usize
}

/// The largest value bucket `i` holds.
fn upper_bound(i: usize) -> Millis {
    let i = i as u64;
    if i < EXACT {
        return i;
    }
    let range = (i - EXACT) / SUB_BUCKETS; // 0 for [2^6, 2^7)
    let sub = (i - EXACT) % SUB_BUCKETS;
    let shift = range + 1;
    ((SUB_BUCKETS + sub + 1) << shift) - 1
}

/// The samples of one slot of the ring.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Slot {
    /// `now / SLOT_MS` of the samples it holds.
    interval: u64,
    buckets: Box<[u32]>,
    count: u64,
    sum: u128,
    max: Millis,
}

impl Slot {
    fn empty(interval: u64) -> Self {
        Slot { interval, buckets: vec![0; BUCKETS].into_boxed_slice(), count: 0, sum: 0, max: 0 }
    }

    fn reset(&mut self, interval: u64) {
        self.interval = interval;
        self.buckets.fill(0);
        self.count = 0;
        self.sum = 0;
        self.max = 0;
    }
}

/// A histogram of milliseconds over the last [`WINDOW_MS`] (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Histogram {
    slots: [Option<Slot>; SLOTS],
    /// Samples since the histogram was created.
    total: u64,
    /// Samples since the last [`Histogram::drain`], by bucket (at most [`BUCKETS`] entries);
    /// `None` until a drain asks for them, or after one stopped.
    since_drain: Option<BTreeMap<u16, u64>>,
}

/// Samples a [`Histogram::drain`] took: `(value, count)` pairs in increasing value, each value
/// the upper bound of its bucket (over-stating the samples by less than [`RELATIVE_ERROR`]).
pub type DrainedSamples = Vec<(Millis, u64)>;

/// The samples of a window, merged.
struct Merged {
    buckets: Vec<u64>,
    count: u64,
    sum: u128,
    max: Millis,
}

impl Histogram {
    /// Adds one value, recorded at `now`.
    pub fn record(&mut self, v: Millis, now: Millis) {
        let interval = now / SLOT_MS;
        let slot = self.slots[(interval % SLOTS as u64) as usize]
            .get_or_insert_with(|| Slot::empty(interval));
        if slot.interval != interval {
            slot.reset(interval);
        }
        let bucket = bucket_of(v);
        let b = &mut slot.buckets[bucket];
        *b = b.saturating_add(1);
        slot.count += 1;
        slot.sum += u128::from(v);
        slot.max = slot.max.max(v);
        self.total += 1;
        if let Some(pending) = self.since_drain.as_mut() {
            // BUCKETS < 2^16, checked below.
            *pending.entry(bucket as u16).or_insert(0) += 1;
        }
    }

    /// The samples recorded since the previous drain, as `(value, count)` pairs (see
    /// [`DrainedSamples`]). With `keep` the histogram goes on keeping samples for the next drain
    /// (the first drain starts that, and answers nothing); without, it stops until a drain with
    /// `keep` again.
    pub fn drain(&mut self, keep: bool) -> DrainedSamples {
        let taken =
            if keep { self.since_drain.replace(BTreeMap::new()) } else { self.since_drain.take() };
        taken
            .unwrap_or_default()
            .into_iter()
            .map(|(bucket, count)| (upper_bound(usize::from(bucket)), count))
            .collect()
    }

    /// Samples since the histogram was created (not only those in the window).
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The slots whose samples are in the window ending at `now`.
    fn window(&self, now: Millis) -> impl Iterator<Item = &Slot> {
        let current = now / SLOT_MS;
        self.slots
            .iter()
            .flatten()
            .filter(move |s| s.interval <= current && current - s.interval < SLOTS as u64)
    }

    fn merged(&self, now: Millis) -> Merged {
        let mut m = Merged { buckets: vec![0; BUCKETS], count: 0, sum: 0, max: 0 };
        for s in self.window(now) {
            for (into, from) in m.buckets.iter_mut().zip(s.buckets.iter()) {
                *into += u64::from(*from);
            }
            m.count += s.count;
            m.sum += s.sum;
            m.max = m.max.max(s.max);
        }
        m
    }

    /// Samples in the window ending at `now`.
    pub fn window_count(&self, now: Millis) -> u64 {
        self.window(now).map(|s| s.count).sum()
    }

    /// The `q`-quantile (`q` in 0..=1) of the window ending at `now`: the upper bound of its
    /// bucket, capped by the window's largest sample; 0 when the window is empty.
    pub fn percentile(&self, q: f64, now: Millis) -> Millis {
        self.merged(now).percentile(q)
    }

    /// A serialisable summary at `now`.
    pub fn summary(&self, now: Millis) -> HistogramSummary {
        let m = self.merged(now);
        HistogramSummary {
            count: self.total,
            window_count: m.count,
            mean_ms: if m.count == 0 { 0 } else { (m.sum / u128::from(m.count)) as u64 },
            p50_ms: m.percentile(0.50),
            p90_ms: m.percentile(0.90),
            p99_ms: m.percentile(0.99),
            max_ms: m.max,
        }
    }
}

impl Merged {
    fn percentile(&self, q: f64) -> Millis {
        if self.count == 0 {
            return 0;
        }
        let q = if q.is_nan() { 1.0 } else { q.clamp(0.0, 1.0) };
        let rank = ((q * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, b) in self.buckets.iter().enumerate() {
            seen += b;
            if seen >= rank {
                // The last bucket has no bound below the largest sample.
                return if i == BUCKETS - 1 { self.max } else { upper_bound(i).min(self.max) };
            }
        }
        self.max
    }
}

/// What a [`Histogram`] shows: `count` since it was created; everything else over the last
/// [`WINDOW_MS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistogramSummary {
    pub count: u64,
    /// Samples in the window.
    #[serde(default)]
    pub window_count: u64,
    pub mean_ms: Millis,
    pub p50_ms: Millis,
    pub p90_ms: Millis,
    pub p99_ms: Millis,
    pub max_ms: Millis,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(63), 63);
        assert_eq!(bucket_of(64), 64);
        assert_eq!(upper_bound(64), 65, "[64, 66): width 2 from 2^6 on");
        assert_eq!(bucket_of(MAX_TRACKED_MS - 1), BUCKETS - 1);
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        assert_eq!(upper_bound(BUCKETS - 1), MAX_TRACKED_MS - 1);
        let mut v = 0u64;
        while v < MAX_TRACKED_MS {
            let b = bucket_of(v);
            assert!(v <= upper_bound(b), "{v} above its bucket's bound");
            assert!(b == 0 || upper_bound(b - 1) < v, "{v} belongs to an earlier bucket");
            let over = upper_bound(b) - v;
            assert!((over as f64) < RELATIVE_ERROR * v.max(1) as f64 || over == 0, "{v}: +{over}");
            v = v * 9 / 8 + 1;
        }
    }

    #[test]
    fn percentiles_of_a_known_distribution_are_within_the_stated_error() {
        // 1..=10_000 ms, one sample each: the q-quantile is q × 10_000.
        let mut h = Histogram::default();
        for v in 1..=10_000 {
            h.record(v, 5_000);
        }
        for (q, exact) in [(0.5, 5_000u64), (0.9, 9_000), (0.99, 9_900), (0.999, 9_990)] {
            let p = h.percentile(q, 5_000);
            assert!(p >= exact, "p{q}: {p} below {exact}");
            assert!((p - exact) as f64 <= RELATIVE_ERROR * exact as f64, "p{q}: {p} vs {exact}");
        }
        assert_eq!(h.percentile(1.0, 5_000), 10_000, "capped by the largest sample");
        let s = h.summary(5_000);
        assert_eq!((s.count, s.window_count, s.mean_ms, s.max_ms), (10_000, 10_000, 5_000, 10_000));
        // Small values are exact.
        let mut small = Histogram::default();
        for v in [3, 3, 7, 12, 40] {
            small.record(v, 0);
        }
        assert_eq!(small.percentile(0.5, 0), 7);
        assert_eq!(small.percentile(0.8, 0), 12);
    }

    #[test]
    fn old_samples_age_out_of_the_window() {
        let mut h = Histogram::default();
        h.record(5_000, 1_000); // a slow one, early
        for t in (20_000..30_000).step_by(100) {
            h.record(10, t);
        }
        assert_eq!(h.summary(30_000).max_ms, 5_000, "still in the window 29 s later");
        assert_eq!(
            h.percentile(1.0, 59_999),
            5_000,
            "the window reaches back to slot 0 until 60 s"
        );
        let later = h.summary(60_000);
        assert_eq!(later.max_ms, 10, "gone once its slot left the window");
        assert_eq!(later.p99_ms, 10);
        assert_eq!(later.window_count, 100);
        assert_eq!(later.count, 101, "the count since the start keeps it");
        let idle = h.summary(200_000);
        assert_eq!((idle.window_count, idle.p50_ms, idle.max_ms, idle.count), (0, 0, 0, 101));
    }

    #[test]
    fn a_slot_reached_again_starts_empty() {
        let mut h = Histogram::default();
        h.record(900, 0); // slot 0, interval 0
        h.record(20, SLOTS as u64 * SLOT_MS); // slot 0 again, interval 6: the old sample is gone
        let s = h.summary(SLOTS as u64 * SLOT_MS);
        assert_eq!((s.window_count, s.max_ms, s.count), (1, 20, 2));
    }

    #[test]
    fn a_drain_answers_the_samples_since_the_previous_one_by_bucket() {
        let mut h = Histogram::default();
        h.record(5, 0);
        assert!(h.drain(true).is_empty(), "nothing is kept before the first drain");
        for v in [3, 3, 40, 1_000, 1_010, 1_020] {
            h.record(v, 1_000);
        }
        // Buckets of width 16 in [512, 1024): 1_000 in [992, 1008), 1_010 and 1_020 in [1008, 1024).
        assert_eq!(h.drain(true), vec![(3, 2), (40, 1), (1_007, 1), (1_023, 2)]);
        assert!(h.drain(true).is_empty(), "each sample is answered once");
        let mut v = 1u64;
        while v < MAX_TRACKED_MS {
            h.record(v, 2_000);
            let drained = h.drain(true);
            let (value, count) = drained[0];
            assert_eq!((drained.len(), count), (1, 1));
            assert!(value >= v && ((value - v) as f64) < RELATIVE_ERROR * v as f64, "{v}: {value}");
            v = v * 7 / 5 + 1;
        }
        // The window and the count since the start are the histogram's as before.
        assert_eq!(h.window_count(2_000), h.count());
    }

    #[test]
    fn a_drain_holds_at_most_a_count_per_bucket_and_can_stop() {
        let mut h = Histogram::default();
        h.drain(true);
        for v in 0..200_000u64 {
            h.record(v % 5_000, 0);
        }
        let drained = h.drain(false);
        assert!(drained.len() <= BUCKETS, "{} entries", drained.len());
        assert_eq!(drained.iter().map(|(_, c)| c).sum::<u64>(), 200_000);
        assert!(drained.windows(2).all(|w| w[0].0 < w[1].0), "in increasing value");
        h.record(7, 0);
        assert!(h.drain(false).is_empty(), "stopped: nothing kept");
        assert_eq!(h.since_drain, None);
    }

    #[test]
    fn empty_and_huge_values() {
        let mut h = Histogram::default();
        assert_eq!(h.percentile(0.5, 0), 0);
        h.record(u64::MAX, 0);
        assert_eq!(h.percentile(1.0, 0), u64::MAX, "the largest sample is exact");
        assert_eq!(h.percentile(f64::NAN, 0), u64::MAX);
    }
}
