//! The node's figures for Elasticsearch's telemetry (docs/OPERATIONS.md "Metrics"), in one call:
//! the counters since the node started (the partitions it serves, and those it closed: a counter
//! only grows), the gauges of the partitions it serves, read without the percentiles `stats`
//! computes, and the wait and hold times their histograms recorded since the previous drain
//! (`lock_core::Histogram::drain`), as `[value, count]` pairs.
//!
//! The plugin reads the counters and gauges when Elasticsearch collects its metrics (`samples`
//! absent) and drains the samples on a schedule of its own (`"samples": "take"`) while the
//! telemetry is on; `"stop"` ends the recording when it is turned off. The mode a drain asks for
//! holds for the node: a partition opened later records from its opening while drains take.

use std::collections::BTreeMap;

use lock_core::{Counters, DrainedSamples, Millis, SampleDrain};
use serde::{Deserialize, Serialize};

use super::{decode, partition_id, to_json, BridgeError, Ctx, ALL_PARTITIONS};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TelemetryArgs {
    /// What happens to the samples recorded since the previous drain.
    #[serde(default)]
    samples: SampleDrain,
}

/// The answer: the names `_locks/_stats` gives the same counters, then the gauges, then the
/// drained samples (empty unless taken).
#[derive(Serialize, Default)]
struct Figures {
    grants: u64,
    conflicts: u64,
    timeouts: u64,
    expiries: u64,
    deadlocks: u64,
    preemptions: u64,
    force_releases: u64,
    held: u64,
    waiting: u64,
    sessions: u64,
    memory_bytes: u64,
    /// Partitions this node holds open.
    served: u64,
    /// Of those, the ones whose lease is not current (`confirmed: false` in the diagnostics).
    unconfirmed: u64,
    wait_time_ms: DrainedSamples,
    hold_time_ms: DrainedSamples,
}

/// Every partition's figures summed with [`ALL_PARTITIONS`], the counters with those of the
/// partitions that left the node (so that they only grow); or the addressed partition's.
pub(super) fn figures(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let args: TelemetryArgs = decode(args)?;
    let (mut counters, partitions) = if cx.partition == ALL_PARTITIONS {
        // Set before the partitions are read: one opened meanwhile is started by the flag or
        // by this drain, never left out.
        match args.samples {
            SampleDrain::None => {}
            SampleDrain::Take => cx.core.set_time_samples(true),
            SampleDrain::Stop => cx.core.set_time_samples(false),
        }
        cx.core.counted_partitions()
    } else {
        let id = partition_id(cx.partition)?;
        (Counters::default(), vec![(id, cx.core.partition(id)?)])
    };
    let now_us = cx.core.now_us();
    let mut out = Figures::default();
    let (mut wait, mut hold) = (BTreeMap::new(), BTreeMap::new());
    for (id, p) in partitions {
        cx.current = Some(id); // a panic while reading fails this partition
        let t = p.telemetry(args.samples);
        counters.absorb(&t.counters);
        out.held += t.held_locks as u64;
        out.waiting += t.waiting as u64;
        out.sessions += t.sessions as u64;
        out.memory_bytes += t.memory_bytes;
        out.served += 1;
        if !cx.core.verdict(id, now_us).serves() {
            out.unconfirmed += 1;
        }
        merge(&mut wait, t.wait_time);
        merge(&mut hold, t.hold_time);
    }
    cx.current = None;
    out.grants = counters.immediate_grants + counters.grants_after_wait;
    out.conflicts = counters.conflicts;
    out.timeouts = counters.wait_timeouts;
    out.expiries = counters.lease_expiries;
    out.deadlocks = counters.deadlocks;
    out.preemptions = counters.preemptions;
    out.force_releases = counters.force_releases;
    out.wait_time_ms = wait.into_iter().collect();
    out.hold_time_ms = hold.into_iter().collect();
    to_json(&out)
}

/// Adds one partition's samples to the node's: the partitions share the buckets, so their
/// values are the same bounds.
fn merge(into: &mut BTreeMap<Millis, u64>, samples: DrainedSamples) {
    for (value, count) in samples {
        *into.entry(value).or_insert(0) += count;
    }
}

#[cfg(test)]
mod tests {
    use lock_core::Config;
    use serde_json::{json, Value};

    use crate::node::{NodeConfig, NodeCore};
    use crate::ops::{call, Op, ALL_PARTITIONS};

    fn core() -> NodeCore {
        let partitions = Some(vec![]);
        NodeCore::new(NodeConfig { config: Config::default(), partitions, ..NodeConfig::default() })
            .expect("core")
    }

    fn run(core: &NodeCore, op: Op, partition: i32, args: Value) -> Value {
        let text = call(core, op as i32, partition, &args.to_string()).expect("call");
        serde_json::from_str::<Value>(&text).expect("json")["result"].clone()
    }

    fn telemetry(core: &NodeCore, samples: &str) -> Value {
        run(core, Op::Telemetry, ALL_PARTITIONS, json!({ "samples": samples }))
    }

    #[test]
    fn counters_and_gauges_are_the_nodes_and_samples_come_once_each() {
        let core = core();
        run(&core, Op::OpenPartition, 0, json!({"epoch": 1}));
        assert_eq!(telemetry(&core, "take")["wait_time_ms"], json!([]), "recording starts");
        run(&core, Op::OpenPartition, 1, json!({"epoch": 1})); // opened while recording
        for p in [0, 1] {
            run(&core, Op::Acquire, p, json!({"key": "k", "owner": "a"}));
            run(
                &core,
                Op::Acquire,
                p,
                json!({"key": "k", "owner": "b", "wait_ms": 60000, "request_id": p + 1}),
            );
            run(&core, Op::Release, p, json!({"key": "k", "owner": "a"}));
        }
        run(&core, Op::ForceRelease, 1, json!({"key": "k"}));
        let err =
            call(&core, Op::Acquire as i32, 0, &json!({"key": "k", "owner": "c"}).to_string());
        assert!(err.is_err(), "a conflict");
        run(&core, Op::SessionCreate, 0, json!({"owner": "s"}));

        let t = telemetry(&core, "none");
        let counters = [
            "grants",
            "conflicts",
            "timeouts",
            "expiries",
            "deadlocks",
            "preemptions",
            "force_releases",
        ];
        let got: Vec<&Value> = counters.iter().map(|c| &t[*c]).collect();
        assert_eq!(
            got,
            [&json!(4), &json!(1), &json!(0), &json!(0), &json!(0), &json!(0), &json!(1)],
            "{t}"
        );
        let gauges = ["held", "waiting", "sessions", "served", "unconfirmed"];
        let got: Vec<&Value> = gauges.iter().map(|g| &t[*g]).collect();
        assert_eq!(got, [&json!(1), &json!(0), &json!(1), &json!(2), &json!(0)], "{t}");
        assert!(t["memory_bytes"].as_u64() > Some(0), "{t}");
        let stats = run(&core, Op::Stats, ALL_PARTITIONS, json!({}));
        assert_eq!(
            (&stats["grants"], &stats["force_releases"]),
            (&t["grants"], &t["force_releases"]),
            "as _stats"
        );
        assert_eq!(t["hold_time_ms"], json!([]), "none: the samples stay for the drain");

        let drained = telemetry(&core, "take");
        let counted = |v: &Value| {
            v.as_array().expect("pairs").iter().map(|p| p[1].as_u64().expect("count")).sum::<u64>()
        };
        assert_eq!(
            counted(&drained["wait_time_ms"]),
            2,
            "both waiters, both partitions: {drained}"
        );
        assert_eq!(counted(&drained["hold_time_ms"]), 3, "a's two releases and b's force-release");
        assert_eq!(
            drained["wait_time_ms"].as_array().map(Vec::len),
            Some(1),
            "merged by value: {drained}"
        );
        let again = telemetry(&core, "stop");
        assert_eq!((counted(&again["wait_time_ms"]), counted(&again["hold_time_ms"])), (0, 0));

        run(&core, Op::Release, 0, json!({"key": "k", "owner": "b"}));
        assert_eq!(counted(&telemetry(&core, "take")["hold_time_ms"]), 0, "stopped: nothing kept");
        run(&core, Op::ClosePartition, 1, json!({}));
        let closed = telemetry(&core, "none");
        assert_eq!(
            (&closed["grants"], &closed["force_releases"], &closed["served"]),
            (&json!(4), &json!(1), &json!(1)),
            "a closed partition's counts stay: {closed}"
        );
        run(&core, Op::OpenPartition, 2, json!({"epoch": 1}));
        run(&core, Op::Acquire, 2, json!({"key": "k", "owner": "a"}));
        run(&core, Op::Release, 2, json!({"key": "k", "owner": "a"}));
        assert_eq!(counted(&telemetry(&core, "take")["hold_time_ms"]), 1, "opened while recording");
    }
}
