//! The member names the plugin reads in the bridge's answers, declared once here as [`Field`]:
//! its variants are the list ([`Field::ALL`] is read off them) and their names ([`Field::name`]).
//!
//! cbindgen emits [`Field`] into `include/eslm.h` as `enum EslmField`, constants
//! `ESLM_FIELD_<NAME>`; a field's name is its constant's `<NAME>` in lower case (the C header
//! holds no strings). The plugin's `BridgeFields` is held to the header by `BridgeVocabularyTest`,
//! and the tests below hold [`Field::name`] to the variant and to what the bridge writes, so a
//! renamed serde field fails a test rather than a node. The plugin reads nothing else of an
//! answer: the REST bodies ([`super::bodies`]) go to the client as they are.

use std::sync::OnceLock;

/// A member of an answer that the plugin reads.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    // The envelope (`envelope.rs`).
    Result,
    Events,
    TickInMs,

    // A call that may wait: an acquire answers `granted` (its body) or `queued` (its ticket), a
    // watch `answered` or `watching`; a ticket's `waiter_id` cancels it.
    Granted,
    Queued,
    Answered,
    Watching,
    WaiterId,

    // An event that answers a request (`envelope.rs`): the request, and its body or error; a grant's
    // releases if its request went away.
    RequestId,
    Body,
    GiveBack,
    Error,

    // A failure's details (`error.rs`), as a failed call and an event's `error` carry them.
    Code,
    Message,
    Key,
    Owner,
    Holders,
    WaitedMs,
    Cycle,
    Session,
    RetryAfterMs,
    Limit,
    Max,
    Partition,
    Epoch,
    Ended,

    // Replication, partitions and listing (`replication.rs`, `partitions.rs`, `introspection.rs`):
    // a listing's pages are read for their order, by `partition`, `locks` (each lock's `key`, `scope`
    // and `owner`) and `next`.
    Batch,
    Empty,
    Snapshot,
    Applied,
    Full,
    Partitions,
    Id,
    GraceLeftMs,
    Locks,
    Next,

    // What the plugin reads of a REST body (`bodies.rs`): a release's token (a retry names it), a
    // session (named cluster-wide on the way out), a grant as the in-node API shows it, and whether
    // an observed election changed.
    FencingToken,
    LeaseMs,
    Scope,
    Reentrant,
    Changed,

    // The lock history's drain (`history.rs`): the bulk body and its number of documents.
    Bulk,
    Documents,

    // A request body read (`requests/`): the core's arguments or the refusal, and what the plugin
    // routes, cancels and logs by; the plugin also writes these arguments into the requests it
    // builds itself (a key's state, a watch) and leaves an acquisition out for an older node.
    Parsed,
    Refused,
    Parse,
    Args,
    Routing,
    WaitMs,
    Acquisition,
    Reason,
    PreemptMs,
    // The plugin writes this one: which request a body is (`ops::requests::RequestKind`).
    Request,

    // Arguments the plugin writes itself (checked by the calls below succeeding: every argument
    // record refuses an unknown member): a partition opened, closed, exported; a standby's batch;
    // a listing's filter.
    GraceMs,
    FromStandby,
    Replicated,
    Export,
    Format,
    Drop,
    CatchUp,
    Delta,
    Prefix,
    After,
    Size,

    // The ownership protocol (`ownership.rs`): the event the plugin hands it with its members, and
    // the decisions read back; a partition opened unconfirmed; a partition's lease in the
    // diagnostics; the partitions a tick left as they stood; a batch's send ticket.
    Event,
    CopyLeases,
    SentUs,
    AskedUs,
    Yours,
    OldOwnerClosed,
    Master,
    Local,
    Enabled,
    BoundMs,
    Promotable,
    Nodes,
    Serves,
    Answer,
    Condemned,
    Confirmed,
    LeaseLeftMs,
    Unserved,

    // A fenced change to a document (`fence.rs`): the document and the script's params the plugin
    // writes, and what the primary writes back or why it writes nothing.
    Source,
    Params,
    Write,
    Unchanged,
    Stale,
    Fence,

    // The node's figures for Elasticsearch's telemetry (`telemetry.rs`): what the plugin asks of
    // the samples, the counters and gauges it reads, and the drained samples.
    Samples,
    Grants,
    Conflicts,
    Timeouts,
    Expiries,
    Deadlocks,
    Preemptions,
    ForceReleases,
    Held,
    Waiting,
    Sessions,
    MemoryBytes,
    Served,
    Unconfirmed,
    WaitTimeMs,
    HoldTimeMs,

    // The core's settings (`lock_core::Config`, `Limits`), written by the plugin (`Configure`) and
    // answered back as in force.
    DefaultLeaseMs,
    MaxLeaseMs,
    MaxWaitMs,
    DefaultWaitMs,
    AgingMs,
    DefaultLockDelayMs,
    Limits,
    AuditCapacity,
    MaxWaitersPerKey,
    MaxKeysPerRequest,
    MaxLocks,
    MaxSessions,
    MaxWaiters,
    MaxLocksPerOwner,
    MaxWaitersPerOwner,
    MaxSessionsPerOwner,
    MaxWatches,
    MaxMemoryBytes,
}

impl Field {
    /// How many fields there are: one past the last variant (`MaxMemoryBytes`). A variant declared
    /// after it would be left out of [`Field::ALL`]; `all_and_the_names_are_the_headers` fails then.
    pub const COUNT: usize = Field::MaxMemoryBytes as usize + 1;

    /// Every field, in header order, read off the declaration above rather than listed again.
    pub const ALL: [Field; Field::COUNT] = {
        let mut all = [Field::Result; Field::COUNT];
        let mut i = 0;
        while i < Field::COUNT {
            // SAFETY: `Field` is `repr(i32)` and its variants take the implicit discriminants
            // 0..COUNT in order (no variant sets one), so every such `i` is a variant.
            all[i] = unsafe { std::mem::transmute::<i32, Field>(i as i32) };
            i += 1;
        }
        all
    };

    /// The member's name: the variant in snake case, as serde writes it and as the header's
    /// constant `ESLM_FIELD_<NAME>` says it in upper case.
    pub fn name(self) -> &'static str {
        static NAMES: OnceLock<Vec<String>> = OnceLock::new();
        NAMES.get_or_init(|| Field::ALL.iter().map(|f| snake_case(&format!("{f:?}"))).collect())
            [self as usize]
            .as_str()
    }
}

/// `TickInMs` -> `tick_in_ms`.
fn snake_case(variant: &str) -> String {
    let mut snake = String::new();
    for (i, c) in variant.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            snake.push('_');
        }
        snake.push(c.to_ascii_lowercase());
    }
    snake
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use lock_core::{Config, LockError};
    use serde_json::{json, Value};

    use super::Field;
    use crate::node::{NodeConfig, NodeCore};
    use crate::ops::{call, BridgeError, Op, ALL_PARTITIONS};

    /// The header (generated from the declaration by cbindgen) lists the same fields in the same
    /// order under the same names: none is missing from `ALL`, none is named otherwise.
    #[test]
    fn all_and_the_names_are_the_headers() {
        let header = include_str!("../../include/eslm.h");
        let in_header: Vec<String> = header
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter_map(|word| word.strip_prefix("ESLM_FIELD_"))
            .map(str::to_ascii_lowercase)
            .collect();
        let ours: Vec<&str> = Field::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(ours, in_header);
        for (i, field) in Field::ALL.into_iter().enumerate() {
            assert_eq!(field as usize, i, "{field:?}");
        }
        assert_eq!(Field::TickInMs.name(), "tick_in_ms");
    }

    /// Where each field is: `at` asserts that `v` has the member and counts the field as found.
    struct Found(BTreeSet<&'static str>);

    impl Found {
        fn at<'v>(&mut self, v: &'v Value, field: Field) -> &'v Value {
            let member = v.get(field.name());
            assert!(member.is_some(), "no [{}] in {v}", field.name());
            self.0.insert(field.name());
            member.unwrap_or(&Value::Null)
        }
    }

    fn run(core: &NodeCore, op: Op, partition: i32, args: &Value) -> Value {
        let text = call(core, op as i32, partition, &args.to_string()).expect("call");
        serde_json::from_str(&text).expect("json")
    }

    /// Each field the plugin reads, found where the plugin reads it in what the bridge writes
    /// along one life of a lock, a waiter, a watch, a session, a replication batch, a hand-over
    /// and an election, and in the details of every failure the plugin maps: a renamed serde
    /// member fails here.
    #[test]
    fn every_field_is_where_the_plugin_reads_it() {
        use Field::*;
        let node = NodeConfig {
            config: Config::default(),
            partitions: Some(vec![]),
            node_name: Some("n1".into()),
            ..NodeConfig::default()
        };
        let core = NodeCore::new(node).expect("core");
        let mut f = Found(BTreeSet::new());
        run(&core, Op::OpenPartition, 0, &json!({"epoch": 1, "replicated": true}));
        let g = run(&core, Op::Acquire, 0, &json!({"key": "k", "owner": "a"}));
        f.at(&g, Events);
        f.at(&g, TickInMs);
        let result = f.at(&g, Result);
        let grant = f.at(result, Granted);
        let token = f.at(grant, FencingToken).clone();
        for field in [Key, Owner, Scope, Reentrant, LeaseMs] {
            f.at(grant, field);
        }
        let b = json!({"key": "k", "owner": "b", "wait_ms": 60000, "request_id": 1});
        let queued = run(&core, Op::Acquire, 0, &b);
        let ticket = f.at(&queued["result"], Queued);
        f.at(ticket, WaiterId);
        run(
            &core,
            Op::Acquire,
            0,
            &json!({"key": "k", "owner": "c", "wait_ms": 200, "request_id": 2}),
        );
        let watch = run(&core, Op::Watch, 0, &json!({"key": "k", "fencing_token": token}));
        f.at(&watch["result"], Answered);
        let w = json!({"key": "k", "fencing_token": token, "wait_ms": 60000, "request_id": 3});
        f.at(&run(&core, Op::Watch, 0, &w)["result"], Watching);
        // c's wait runs out after the watches (200 ms: a loaded machine still reaches them first)
        std::thread::sleep(std::time::Duration::from_millis(250));
        let released = run(&core, Op::Release, 0, &json!({"key": "k", "owner": "a"}));
        for event in released["events"].as_array().expect("events") {
            f.at(event, RequestId);
            match event.get("event").and_then(Value::as_str) {
                Some("granted") => {
                    f.at(event, Body);
                    f.at(event, GiveBack);
                }
                Some("watch_fired") => _ = f.at(event, Body),
                _ => {
                    let error = f.at(event, Error);
                    for field in [Code, Message, Key, Owner, WaitedMs] {
                        f.at(error, field);
                    }
                }
            }
        }
        replication_and_more(&core, &mut f);
        ownership(&mut f);
        requests(&core, &mut f);
        written(&core, &mut f);
        failures(&mut f);
        let missed: Vec<_> =
            Field::ALL.iter().map(|f| f.name()).filter(|n| !f.0.contains(n)).collect();
        assert!(missed.is_empty(), "fields not checked: {missed:?}");
    }

    /// An election, a session, the batches, diagnostics, a standby and a hand-over.
    fn replication_and_more(core: &NodeCore, f: &mut Found) {
        use Field::*;
        let info = run(core, Op::KeyInfo, 0, &json!({"key": "e", "scope": "election"}));
        let view = json!({"state": info["result"], "observed_term": 0});
        f.at(&run(core, Op::ElectionView, ALL_PARTITIONS, &view)["result"], Changed);
        let s = run(core, Op::SessionCreate, 0, &json!({"owner": "a"}));
        f.at(&s["result"], Session);
        let taken = run(core, Op::TakeBatch, 0, &json!({}));
        f.at(&taken["result"], Empty);
        let listed = run(core, Op::List, ALL_PARTITIONS, &json!({"size": 1}));
        let page = &f.at(&listed, Result)[0];
        f.at(page, Partition);
        f.at(page, Next);
        let lock = &f.at(page, Locks)[0];
        for field in [Key, Scope, Owner] {
            f.at(lock, field);
        }
        let diagnostics = run(core, Op::Diagnostics, ALL_PARTITIONS, &json!({}));
        let partition = &f.at(&diagnostics["result"], Partitions)[0];
        f.at(partition, Id);
        f.at(partition, GraceLeftMs);
        let full = run(core, Op::TakeBatch, 0, &json!({"full": true}));
        let batch = f.at(&full["result"], Batch).as_str().expect("text");
        let batch: Value = serde_json::from_str(batch).expect("batch");
        f.at(&run(core, Op::StandbyApply, 1, &batch)["result"], Applied);
        f.at(&run(core, Op::StandbyExport, 1, &json!({}))["result"], Full);
        let drained = run(core, Op::AuditDrain, ALL_PARTITIONS, &json!({"max": 10}));
        f.at(&drained["result"], Bulk);
        f.at(&drained["result"], Documents);
        f.at(&run(core, Op::ClosePartition, 0, &json!({"export": true}))["result"], Snapshot);
    }

    /// The ownership protocol's events on a node of a cluster, and what a lease changes.
    fn ownership(f: &mut Found) {
        use Field::*;
        let node = NodeConfig { partitions: Some(vec![]), leases: true, ..NodeConfig::default() };
        let core = NodeCore::new(node).expect("core");
        let event = |name: &str, more: Value| {
            let mut args = json!({ Event.name(): name });
            args.as_object_mut().expect("object").extend(more.as_object().expect("object").clone());
            args
        };
        f.0.insert(Event.name());
        let source = event("source", json!({ CopyLeases.name(): true }));
        run(&core, Op::Ownership, ALL_PARTITIONS, &source);
        f.0.insert(CopyLeases.name());
        run(
            &core,
            Op::OpenPartition,
            0,
            &json!({ Epoch.name(): 1, Replicated.name(): true, Confirmed.name(): false }),
        );
        let ticked = run(&core, Op::Tick, 0, &json!({}));
        assert_eq!(f.at(&ticked["result"], Unserved), &json!([0]), "no lease yet");
        let diagnostics = run(&core, Op::Diagnostics, ALL_PARTITIONS, &json!({}));
        let partition = &diagnostics["result"]["partitions"][0];
        assert_eq!(f.at(partition, Confirmed), false);
        f.at(partition, LeaseLeftMs);
        let taken = run(&core, Op::TakeBatch, 0, &json!({}));
        let sent = f.at(&taken["result"], SentUs).clone();
        let renewed = run(
            &core,
            Op::Ownership,
            0,
            &event("renewed", json!({ Epoch.name(): 1, SentUs.name(): sent })),
        );
        assert_eq!(f.at(&renewed["result"], Serves), true);
        let ticket = run(&core, Op::Ownership, 0, &event("sending", json!({})));
        let asked = ticket["result"][SentUs.name()].clone();
        let answer = event(
            "master_answered",
            json!({ Epoch.name(): 1, AskedUs.name(): asked, Yours.name(): false }),
        );
        assert_eq!(f.at(&run(&core, Op::Ownership, 0, &answer)["result"], Answer), "give_up");
        run(&core, Op::Ownership, 1, &event("answered", json!({})));
        let promoted = run(
            &core,
            Op::Ownership,
            1,
            &event("promoted", json!({ OldOwnerClosed.name(): false })),
        );
        assert!(f.at(&promoted["result"], WaitMs).as_u64() > Some(800));
        let heard = run(
            &core,
            Op::Ownership,
            0,
            &event("heard", json!({ Epoch.name(): 1, Owner.name(): "x" })),
        );
        assert_eq!(f.at(&heard["result"], Yours), true);
        let asked = |epoch| event("hand_over_asked", json!({ Epoch.name(): epoch }));
        let late = run(&core, Op::Ownership, 0, &asked(0));
        assert_eq!(f.at(&late["result"], Answer), "refuse");
        assert_eq!(f.at(&late["result"], Epoch), 1, "the newer epoch served here");
        assert_eq!(f.at(&run(&core, Op::Ownership, 0, &asked(1))["result"], Answer), "give");
        run(
            &core,
            Op::Ownership,
            ALL_PARTITIONS,
            &event("node_asked", json!({ Owner.name(): "y" })),
        );
        let seen = json!({ Partition.name(): 0, Owner.name(): "x", Epoch.name(): 1, Promotable.name(): true });
        let view = json!({ Master.name(): true, Local.name(): "m", CopyLeases.name(): true, Enabled.name(): true,
            BoundMs.name(): 3500, Partitions.name(): [seen], Nodes.name(): ["m", "x", "y"] });
        let looked = run(&core, Op::Ownership, ALL_PARTITIONS, &event("look", view));
        assert_eq!(f.at(&looked["result"], Condemned), &json!([]));
        for written in [AskedUs, OldOwnerClosed, Master, Local, Enabled, BoundMs, Promotable, Nodes]
        {
            f.0.insert(written.name());
        }
    }

    /// A body read: its arguments, the routing of a session, a refusal.
    fn requests(core: &NodeCore, f: &mut Found) {
        use Field::*;
        let read = |request: &str, body: Value| {
            let args = json!({Request.name(): request, Key.name(): "k", Body.name(): body});
            run(core, Op::ReadRequest, ALL_PARTITIONS, &args)["result"].clone()
        };
        f.0.insert(Request.name()); // a name the plugin writes: the calls below succeeding find it
        let body = json!({"owner": "a", "wait": "1s", "acquisition": "x", "preempt": "1s"});
        let acquire = read("lock_acquire_request", body);
        let parsed = f.at(&acquire, Parsed).clone();
        let args = f.at(&parsed, Args).clone();
        f.at(&args, WaitMs);
        f.at(&args, Acquisition);
        f.at(&args, PreemptMs);
        let forced = read("lock_force_release_request", json!({"reason": "stuck"}));
        f.at(&forced[Parsed.name()][Args.name()], Reason);
        f.at(&read("lock_session_request", json!({"owner": "a"}))[Parsed.name()], Routing);
        let refused = read("lock_acquire_request", json!({}));
        let refusal = f.at(&refused, Refused).clone();
        f.at(&refusal, Parse);
        f.at(&refused[Refused.name()], Message);
    }

    /// The arguments the plugin writes, each in a call that succeeds only with its name right, and
    /// the settings, found in what `Configure` answers in force.
    /// A fenced change: written, then the same again (unchanged), then an older token (stale).
    fn fence(core: &NodeCore, f: &mut Found) {
        use Field::*;
        let change = |source: &Value, token: u64| {
            let params = json!({"token": token, "key": "k", "doc": {"n": 1}});
            json!({Source.name(): source, Params.name(): params})
        };
        let first = run(core, Op::Fence, ALL_PARTITIONS, &change(&Value::Null, 5));
        let written = f.at(&first["result"], Write).clone();
        f.0.extend([Source.name(), Params.name()]);
        let again = run(core, Op::Fence, ALL_PARTITIONS, &change(&written, 5));
        let unchanged = f.at(&again["result"], Unchanged).clone();
        f.at(&unchanged, Fence);
        let stale = run(core, Op::Fence, ALL_PARTITIONS, &change(&written, 4));
        let stale = f.at(&stale["result"], Stale).clone();
        f.at(&stale, Fence);
    }

    /// The telemetry's figures, with a drain asked for by the member the plugin writes.
    fn telemetry(core: &NodeCore, f: &mut Found) {
        use Field::*;
        let figures = run(core, Op::Telemetry, ALL_PARTITIONS, &json!({ Samples.name(): "take" }));
        f.0.insert(Samples.name());
        let result = &figures["result"];
        for field in [Grants, Conflicts, Timeouts, Expiries, Deadlocks, Preemptions, ForceReleases]
        {
            f.at(result, field);
        }
        for field in
            [Held, Waiting, Sessions, MemoryBytes, Served, Unconfirmed, WaitTimeMs, HoldTimeMs]
        {
            f.at(result, field);
        }
    }

    fn written(core: &NodeCore, f: &mut Found) {
        use Field::*;
        fence(core, f);
        telemetry(core, f);
        let mut call_with = |op: Op, partition: i32, args: Value, names: &[Field]| {
            call(core, op as i32, partition, &args.to_string()).expect("call");
            names.iter().for_each(|n| _ = f.0.insert(n.name()));
        };
        let open = json!({Epoch.name(): 1, GraceMs.name(): 0, FromStandby.name(): false, Replicated.name(): true});
        call_with(Op::OpenPartition, 2, open, &[GraceMs, FromStandby, Replicated]);
        let full = run(core, Op::TakeBatch, 2, &json!({Format.name(): 5, Full.name(): true}));
        let state: Value =
            serde_json::from_str(full["result"]["batch"].as_str().expect("text")).expect("batch");
        call_with(Op::StandbyApply, 3, json!({CatchUp.name(): state["full"]}), &[CatchUp]);
        let delta = run(core, Op::TakeBatch, 2, &json!({}));
        let delta: Value =
            serde_json::from_str(delta["result"]["batch"].as_str().expect("text")).expect("delta");
        call_with(Op::StandbyApply, 3, json!({Delta.name(): delta["delta"]}), &[Delta]);
        call_with(Op::StandbyExport, 3, json!({Drop.name(): true}), &[Drop]);
        call_with(Op::PeersRead, ALL_PARTITIONS, json!({Format.name(): 5}), &[Format]);
        call_with(
            Op::ClosePartition,
            2,
            json!({Export.name(): false, Format.name(): 5}),
            &[Export],
        );
        let filter = json!({Owner.name(): "a", Prefix.name(): "k", Size.name(): 1,
            After.name(): {Key.name(): "a", Scope.name(): "key", Owner.name(): "a"}});
        call_with(Op::List, ALL_PARTITIONS, filter, &[Prefix, Size, After]);
        let config = serde_json::to_value(Config::default()).expect("config");
        let in_force = run(core, Op::Configure, ALL_PARTITIONS, &config);
        let settings = &in_force["result"];
        // The settings are declared together, the limits last: every one of them is in the answer.
        for field in &Field::ALL[DefaultLeaseMs as usize..=AuditCapacity as usize] {
            f.at(settings, *field);
        }
        let limits = settings[Limits.name()].clone();
        for field in &Field::ALL[MaxWaitersPerKey as usize..=MaxMemoryBytes as usize] {
            f.at(&limits, *field);
        }
    }

    /// The details of every failure the plugin maps.
    fn failures(f: &mut Found) {
        use Field::*;
        let failures: [(BridgeError, &[Field]); 7] = [
            (
                LockError::Conflict { key: "k".into(), holders: vec![], delay_left_ms: 0 }.into(),
                &[Holders],
            ),
            (
                LockError::Deadlock { key: "k".into(), owner: "o".into(), cycle: vec![] }.into(),
                &[Cycle],
            ),
            (LockError::SessionNotFound { session: "s".into() }.into(), &[Session]),
            (LockError::LimitExceeded { limit: "max_locks", max: 1 }.into(), &[Limit, Max]),
            (LockError::PartitionUnavailable { retry_after_ms: 1 }.into(), &[RetryAfterMs]),
            (LockError::Preempted { key: "k".into(), owner: "o".into() }.into(), &[Owner, Ended]),
            (
                BridgeError::CorePanic { partition: Some(0), epoch: Some(1), message: "m".into() },
                &[Partition, Epoch],
            ),
        ];
        for (failure, fields) in failures {
            for field in fields {
                f.at(&failure.details(), *field);
            }
        }
    }
}
