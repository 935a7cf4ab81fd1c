//! A data node of the ownership model, driven as the plugin's cluster code drives the core: the
//! group commit of the partition it serves (batches and heartbeats, whose answers renew its lease
//! through [`Ownership::renewed`]), its answers to the master's confirmations, a copy's answers
//! to batches, a promotion that waits out the old lease ([`Ownership::promotion_wait`]), a
//! relocation target's hand-over, and the reopening after a failed batch.

use lock_core::ownership::bounds::{
    HEARTBEAT_INTERVAL_MS, OWNER_CHECK_INTERVAL_MS, SYNCED_COPY_WAIT_MS,
};
use lock_core::ownership::{Flaw, HandOver, LeaseSource, Micros, Ownership};
use lock_core::{LockTable, PartitionSnapshot, Standby};

use super::checker::Told;
use super::elastic::State;
use super::world::{
    config, Body, Msg, Took, World, HANDOFF_ATTEMPTS, HANDOFF_RETRY_MS, MASTER, P,
    RECHECK_AFTER_FAILED_BATCH_MS,
};

/// A batch in flight: to whom, sent when, and the answers it carries.
pub(super) struct Inflight {
    pub(super) epoch: u64,
    pub(super) sent: Micros,
    pub(super) full: bool,
    pub(super) to: Vec<usize>,
    /// The allocation ids of `to` at the send.
    pub(super) allocations: Vec<u64>,
    pub(super) answered: Vec<usize>,
    pub(super) answers: Vec<Told>,
    pub(super) fail_asked: bool,
}

/// The group commit of the partition a node serves (`replication.GroupCommit`).
#[derive(Default)]
pub(super) struct Commit {
    pub(super) inflight: Option<Inflight>,
    pub(super) waiting: Vec<Told>,
    pub(super) need_full: bool,
    pub(super) last_shipped: Micros,
    /// The copies (node, allocation id) that took the whole state from this owner.
    pub(super) synced: Vec<(usize, u64)>,
}

#[derive(Clone, Copy)]
pub(super) enum Opening {
    /// A promoted copy: waits out the old lease unless the old owner said it closed.
    Promote { epoch: u64, closed: bool },
    /// A relocation target: asks the old owner for the state.
    Fetch { epoch: u64, from: usize, attempts: u32, next_ask: Micros },
}

pub(super) struct Node {
    pub(super) own: Ownership,
    pub(super) up: bool,
    pub(super) applied: Option<State>,
    /// The live table, while this node serves the partition.
    pub(super) table: Option<LockTable>,
    /// What the primary persisted (its state log): each batch it took, applied.
    pub(super) log: Option<Standby>,
    /// A lost partition's state, for a hand-over.
    pub(super) kept: Option<PartitionSnapshot>,
    pub(super) commit: Commit,
    /// A copy's standby and the primary term it runs in (Elasticsearch's check).
    pub(super) standby: Option<Standby>,
    pub(super) term: u64,
    pub(super) opening: Option<Opening>,
    pub(super) reopen_at: Option<Micros>,
    /// Its primary context was handed off to a relocation target: Elasticsearch refuses its
    /// batches from now on (the next one fails, and it gives the partition up for good).
    pub(super) relocated: bool,
    pub(super) next_check: Micros,
    pub(super) next_look: Micros,
}

impl Node {
    pub(super) fn new(flaw: Flaw, source: LeaseSource) -> Node {
        let mut own = Ownership::new();
        #[cfg(feature = "fault-injection")]
        own.set_flaw(flaw);
        #[cfg(not(feature = "fault-injection"))]
        assert_eq!(flaw, Flaw::None, "flaws need the fault-injection build");
        own.set_source(source);
        Node {
            own,
            up: true,
            applied: None,
            table: None,
            log: None,
            kept: None,
            commit: Commit::default(),
            standby: None,
            term: 1,
            opening: None,
            reopen_at: None,
            relocated: false,
            next_check: 0,
            next_look: 0,
        }
    }
}

impl World {
    /// A copy takes a batch: Elasticsearch's term check first, then the standby.
    pub(super) fn on_batch(&mut self, from: usize, n: usize, epoch: u64, sent: Micros, body: Body) {
        let (now, now_ms) = (self.now(n), self.now_ms(n));
        let node = &mut self.nodes[n];
        let copy_here = node.applied.as_ref().is_some_and(|a| a.copies().contains(&n));
        let answer = if epoch < node.term {
            Took::NewerTerm
        } else if node.own.epoch(P).is_some() || !copy_here {
            Took::NoCopy
        } else {
            node.term = epoch;
            let applied = match body {
                Body::Heartbeat => true,
                Body::Full(full) => {
                    node.standby = Some(Standby::from_full(&full, now_ms));
                    true
                }
                Body::Delta(delta) => {
                    node.standby.as_mut().is_some_and(|s| s.apply(&delta, now_ms).is_ok())
                }
            };
            if applied {
                node.own.answered(P, now);
                Took::Yes
            } else {
                Took::NoCopy
            }
        };
        self.send(n, from, Msg::BatchAnswer { epoch, sent, answer });
    }

    pub(super) fn on_batch_answer(
        &mut self,
        from: usize,
        n: usize,
        epoch: u64,
        sent: Micros,
        answer: Took,
    ) {
        let Some(f) = self.nodes[n].commit.inflight.as_mut() else { return };
        if f.epoch != epoch || f.sent != sent {
            return;
        }
        match answer {
            Took::Yes => f.answered.push(from),
            Took::NoCopy => self.send(n, MASTER, Msg::FailCopy { epoch, copy: from }),
            Took::NewerTerm => {
                self.lose(n);
                self.nodes[n].reopen_at = Some(self.now(n) + RECHECK_AFTER_FAILED_BATCH_MS * 1_000);
            }
        }
    }

    /// The node stops serving: its waiting answers fail, its state is kept for a hand-over.
    pub(super) fn lose(&mut self, n: usize) {
        self.note(|| format!("node {n} gives the partition up"));
        let now_ms = self.now_ms(n);
        let node = &mut self.nodes[n];
        node.own.closed(P);
        node.kept = node.table.take().map(|mut t| {
            t.advance(now_ms);
            t.export()
        });
        node.commit = Commit::default();
    }

    /// The old owner's side of a hand-over (`PartitionHandover.handOver`): it stops serving
    /// before its state leaves; any answer tells the asker that it closed. An asker of an older
    /// epoch than this node has served in gets no answer (the plugin's is a failure) and nothing
    /// is closed for it.
    pub(super) fn on_hand_over(&mut self, from: usize, n: usize, epoch: u64) {
        if let HandOver::Refuse { epoch: newer } = self.nodes[n].own.hand_over_asked(P, epoch) {
            self.note(|| {
                format!("node {n} refuses a hand-over asked in e{epoch}: it served e{newer}")
            });
            self.out.refused_hand_overs += 1;
            return;
        }
        let now_ms = self.now_ms(n);
        let node = &mut self.nodes[n];
        let snapshot = if node.opening.is_some() {
            None // still receiving it itself: the asker asks again
        } else if node.own.epoch(P).is_some() {
            node.own.handed_over(P);
            let snapshot = node.table.as_mut().map(|t| {
                t.advance(now_ms);
                t.export()
            });
            if node.own.epoch(P).is_none() {
                node.table = None;
                node.commit = Commit::default();
            }
            snapshot
        } else {
            node.kept.take()
        };
        self.send(n, from, Msg::HandOverAnswer { epoch, snapshot: snapshot.map(Box::new) });
    }

    /// The old owner answered: it serves no more. A relocation target opens from its standby
    /// (every committed change; the old owner's table may hold uncommitted ones), else from the
    /// state handed over; no state yet means ask again.
    pub(super) fn on_hand_over_answer(
        &mut self,
        n: usize,
        epoch: u64,
        snapshot: Option<Box<PartitionSnapshot>>,
    ) {
        match &mut self.nodes[n].opening {
            Some(Opening::Promote { epoch: e, closed }) if *e == epoch => *closed = true,
            Some(Opening::Fetch { epoch: e, .. }) if *e == epoch && snapshot.is_some() => {
                let now_ms = self.now_ms(n);
                let state = match self.nodes[n].standby.take() {
                    Some(standby) => standby.snapshot(now_ms),
                    None => *snapshot.expect("checked"),
                };
                self.open(n, epoch, &state);
                self.out.handovers += 1;
            }
            _ => {}
        }
    }

    /// A node applies a published state (`PartitionManager.clusterChanged`).
    pub(super) fn apply_state(&mut self, n: usize, state: State) {
        let now = self.now(n);
        let node = &mut self.nodes[n];
        if node.applied.as_ref().is_some_and(|a| a.version >= state.version) {
            return;
        }
        let previous = node.applied.replace(state.clone());
        if state.primary != Some(n) {
            if node.own.epoch(P).is_some() {
                self.lose(n);
            }
            return;
        }
        if let Some(epoch) = node.own.epoch(P) {
            if state.epoch > epoch {
                // Promoted again on the same node: the epoch rises, confirmed by this state.
                if let Some(t) = node.table.as_mut() {
                    t.set_epoch(state.epoch).expect("epoch rises");
                }
                node.own.opened(P, state.epoch, true, now);
                node.commit.need_full = true;
            }
            return;
        }
        if node.opening.is_some() {
            return;
        }
        let previous_epoch = previous.as_ref().map_or(0, |p| p.epoch);
        let old_owner =
            previous.and_then(|p| p.primary).filter(|&o| o != n && !state.down.contains(&o));
        let promoted = node.standby.is_some() && state.epoch > previous_epoch;
        let epoch = state.epoch;
        if promoted || (old_owner.is_none() && node.standby.is_some()) {
            node.term = epoch;
            node.opening = Some(Opening::Promote { epoch, closed: false });
            node.own.promotion_wait(P, now, false);
            if let Some(o) = old_owner {
                self.send(n, o, Msg::HandOver { epoch });
            }
        } else if let Some(o) = old_owner {
            let next_ask = now + HANDOFF_RETRY_MS * 1_000;
            node.opening = Some(Opening::Fetch { epoch, from: o, attempts: 1, next_ask });
            self.send(n, o, Msg::HandOver { epoch });
        }
    }

    /// Opens the partition here from `snapshot`: the node serves it once its lease allows.
    pub(super) fn open(&mut self, n: usize, epoch: u64, snapshot: &PartitionSnapshot) {
        let locks: Vec<_> =
            snapshot.locks.iter().map(|l| (l.key.clone(), l.fencing_token.0 & 0xff)).collect();
        self.note(|| format!("node {n} opens e{epoch} with {locks:?}"));
        let (now, now_ms) = (self.now(n), self.now_ms(n));
        let node = &mut self.nodes[n];
        let mut table = LockTable::import(snapshot, epoch, config(), now_ms).expect("import");
        table.set_change_tracking(true);
        node.table = Some(table);
        node.own.opened(P, epoch, true, now);
        node.opening = None;
        node.relocated = false;
        node.commit = Commit { need_full: true, ..Commit::default() };
    }

    pub(super) fn timers(&mut self, n: usize) {
        if n == MASTER {
            self.master_timers();
            return;
        }
        self.opening(n);
        let now = self.now(n);
        if let (Some(at), None) = (self.nodes[n].reopen_at, self.nodes[n].own.epoch(P)) {
            if now >= at {
                self.reopen(n);
            }
        }
        // Every node asks the master, an owner about its partition, any other about nothing
        // (`OwnerChecks`): the master tells its own cut from an owner's silence by the others.
        if now >= self.nodes[n].next_check {
            self.nodes[n].next_check = now + OWNER_CHECK_INTERVAL_MS * 1_000;
            self.send(n, MASTER, Msg::Check { epoch: self.nodes[n].own.epoch(P), asked: now });
        }
        if let Some(epoch) = self.nodes[n].own.epoch(P) {
            self.kick(n, epoch);
        }
    }

    /// A promotion or a hand-over in progress.
    pub(super) fn opening(&mut self, n: usize) {
        let now = self.now(n);
        let applied = self.nodes[n].applied.clone();
        let ours =
            |epoch: u64| applied.as_ref().is_some_and(|a| a.primary == Some(n) && a.epoch == epoch);
        let opening = self.nodes[n].opening;
        match opening {
            Some(Opening::Promote { epoch, .. } | Opening::Fetch { epoch, .. }) if !ours(epoch) => {
                self.nodes[n].opening = None;
            }
            Some(Opening::Promote { epoch, closed })
                if self.nodes[n].own.promotion_wait(P, now, closed) == 0 =>
            {
                let standby = self.nodes[n].standby.take().expect("a promoted copy has a standby");
                let snapshot = standby.snapshot(self.now_ms(n));
                self.open(n, epoch, &snapshot);
            }
            Some(Opening::Fetch { epoch, from, attempts, next_ask }) if now >= next_ask => {
                if attempts < HANDOFF_ATTEMPTS {
                    let next_ask = now + HANDOFF_RETRY_MS * 1_000;
                    let attempts = attempts + 1;
                    self.nodes[n].opening =
                        Some(Opening::Fetch { epoch, from, attempts, next_ask });
                    self.send(n, from, Msg::HandOver { epoch });
                } else if self.nodes[n].standby.is_some() {
                    // The old owner never answered: its standby here opens once the old lease ran out.
                    self.nodes[n].opening = Some(Opening::Promote { epoch, closed: false });
                    self.nodes[n].own.promotion_wait(P, now, false);
                } else {
                    self.nodes[n].opening = None;
                    self.send(n, MASTER, Msg::FailShard { epoch });
                }
            }
            _ => {}
        }
    }

    /// After a failed batch: reopens unconfirmed if this node's own state still names it.
    pub(super) fn reopen(&mut self, n: usize) {
        let now = self.now(n);
        let now_ms = self.now_ms(n);
        let node = &mut self.nodes[n];
        node.reopen_at = None;
        let Some(applied) = node.applied.clone() else { return };
        let Some(kept) = node.kept.clone() else { return };
        if applied.primary != Some(n) || applied.epoch != kept.epoch || node.opening.is_some() {
            return;
        }
        node.kept = None;
        let mut table = LockTable::import(&kept, applied.epoch, config(), now_ms).expect("import");
        table.set_change_tracking(true);
        node.table = Some(table);
        node.own.opened(P, applied.epoch, false, now);
        node.commit = Commit { need_full: true, ..Commit::default() };
    }

    /// The group commit: completes the batch in flight, or ships the next one or a heartbeat.
    pub(super) fn kick(&mut self, n: usize, epoch: u64) {
        let now = self.now(n);
        let Some(applied) = self.nodes[n].applied.clone() else { return };
        let copies: Vec<usize> = applied.copies().into_iter().filter(|&c| c != n).collect();
        if let Some(f) = &self.nodes[n].commit.inflight {
            let outstanding: Vec<usize> =
                f.to.iter()
                    .copied()
                    .filter(|c| !f.answered.contains(c) && copies.contains(c))
                    .collect();
            if outstanding.is_empty() {
                self.committed(n);
            } else if !f.fail_asked && now.saturating_sub(f.sent) > SYNCED_COPY_WAIT_MS * 1_000 {
                let epoch = f.epoch;
                for copy in outstanding {
                    self.send(n, MASTER, Msg::FailCopy { epoch, copy });
                }
                if let Some(f) = self.nodes[n].commit.inflight.as_mut() {
                    f.fail_asked = true;
                }
            }
            return;
        }
        let now_ms = self.now_ms(n);
        let source = self.s.source;
        let node = &mut self.nodes[n];
        let c = &mut node.commit;
        c.need_full |=
            copies.iter().any(|&copy| !c.synced.contains(&(copy, applied.allocation(copy))));
        let heartbeat_due = now.saturating_sub(c.last_shipped) >= HEARTBEAT_INTERVAL_MS * 1_000;
        let Some(table) = node.table.as_mut() else { return };
        let body = if c.need_full {
            let full = table.export_full();
            node.log = Some(Standby::from_full(&full, now_ms));
            Body::Full(Box::new(full))
        } else if !c.waiting.is_empty() {
            let delta = table.take_changes(now_ms).expect("tracking");
            if let Some(log) = node.log.as_mut() {
                let _ = log.apply(&delta, now_ms);
            }
            Body::Delta(Box::new(delta))
        } else if heartbeat_due && source == LeaseSource::Copies {
            Body::Heartbeat
        } else {
            return;
        };
        if node.relocated {
            self.lose(n); // the batch fails at once: this copy is no longer in primary mode
            return;
        }
        let full = matches!(body, Body::Full(_));
        c.last_shipped = now;
        c.need_full = false;
        let answers = std::mem::take(&mut c.waiting);
        let to = copies.clone();
        let allocations = copies.iter().map(|&copy| applied.allocation(copy)).collect();
        c.inflight = Some(Inflight {
            epoch,
            sent: now,
            full,
            to,
            allocations,
            answered: vec![],
            answers,
            fail_asked: false,
        });
        for copy in copies {
            self.send(n, copy, Msg::Batch { epoch, sent: now, body: body.clone() });
        }
    }

    /// Every copy took the batch in flight (or is out of the in-sync set): the lease is renewed
    /// from its send, its answers are told, a recovering copy that took the whole state is synced.
    pub(super) fn committed(&mut self, n: usize) {
        let now = self.now(n);
        let Some(f) = self.nodes[n].commit.inflight.take() else { return };
        self.nodes[n].own.renewed(P, f.epoch, f.sent, now);
        if f.full {
            let synced: Vec<(usize, u64)> =
                f.to.iter()
                    .zip(&f.allocations)
                    .filter(|(c, _)| f.answered.contains(c))
                    .map(|(&c, &a)| (c, a))
                    .collect();
            self.nodes[n].commit.synced = synced.clone();
            for (copy, allocation) in synced {
                self.send(n, MASTER, Msg::CopySynced { epoch: f.epoch, copy, allocation });
            }
        }
        let (to, answered) = (f.to.clone(), f.answered.clone());
        self.note(|| {
            format!("node {n} commits e{} sent to {to:?}, answered by {answered:?}", f.epoch)
        });
        for told in f.answers {
            let t = format!("{told:?}");
            self.note(|| format!("told {t}"));
            if let Err(e) = self.checker.told(told, self.t) {
                self.out.violation.get_or_insert((self.t, e));
            }
        }
    }
}
