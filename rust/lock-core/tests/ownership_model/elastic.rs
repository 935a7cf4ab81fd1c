//! Elasticsearch's part in the ownership model: the cluster state the master publishes (who holds
//! the primary in which term, the in-sync and recovering copies, a relocation under way), and
//! what the master does: promote an in-sync replica when a primary fails, allocate a missing
//! replica, relocate a primary (the target recovers first, then the source hands its primary
//! context off), give a primary lost with no replica back to its node in a higher term; and the
//! plugin's master side, the silent-owner watch, through the node's [`Ownership`].

use std::collections::BTreeMap;

use lock_core::ownership::bounds::SILENT_LOOK_INTERVAL_MS;
use lock_core::ownership::{LeaseSource, MasterView, SeenPartition};

use super::node::Node;
use super::world::{Crash, Msg, World, MASTER, NODES, P, RECOVERY_AFTER_MS, REPUBLISH_MS};

/// The cluster state: who holds the partition's primary in which term, its copies.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct State {
    pub(super) version: u64,
    pub(super) primary: Option<usize>,
    pub(super) epoch: u64,
    /// The in-sync replicas (started, promotable).
    pub(super) in_sync: Vec<usize>,
    /// Replicas recovering from the primary: they take its batches, they are not promotable.
    pub(super) recovering: Vec<usize>,
    /// A primary relocation's target, recovering like a replica until it holds the whole state;
    /// then the source hands its primary context off and the target is the primary, same term.
    pub(super) relocating: Option<usize>,
    /// A primary lost with no in-sync replica: its node's copy is the one to allocate it to.
    pub(super) orphan: Option<usize>,
    /// Each copy's allocation id (Elasticsearch's): a copy failed and allocated again is another
    /// copy, and what was said of the earlier one (it took the whole state) is not of it.
    pub(super) allocations: BTreeMap<usize, u64>,
    pub(super) next_allocation: u64,
    pub(super) down: Vec<usize>,
}

impl State {
    pub(super) fn copies(&self) -> Vec<usize> {
        self.in_sync.iter().chain(&self.recovering).chain(&self.relocating).copied().collect()
    }

    /// A new copy on node `copy`, with a new allocation id.
    pub(super) fn allocate(&mut self, copy: usize) {
        self.next_allocation += 1;
        self.allocations.insert(copy, self.next_allocation);
    }

    /// The allocation id of the copy on node `copy`.
    pub(super) fn allocation(&self, copy: usize) -> u64 {
        self.allocations.get(&copy).copied().unwrap_or(0)
    }

    pub(super) fn forget_copy(&mut self, copy: usize) {
        self.allocations.remove(&copy);
        self.in_sync.retain(|&c| c != copy);
        self.recovering.retain(|&c| c != copy);
        if self.relocating == Some(copy) {
            self.relocating = None;
        }
    }
}

impl World {
    pub(super) fn crash(&mut self, n: usize, crash: Crash) {
        // A primary that restarts is a new node to the cluster even when nobody saw it go: only a
        // copy's crash can be unseen.
        let serving = self.state.primary == Some(n) || self.state.relocating == Some(n);
        let crash = if serving { Crash::Seen } else { crash };
        let (flaw, source) = (self.s.flaw, self.s.source);
        let node = &mut self.nodes[n];
        let persisted = node.standby.take().or(node.log.take()); // a copy's replaced the log it had as a primary
        *node = Node { standby: persisted, term: node.term, up: false, ..Node::new(flaw, source) };
        if crash == Crash::Seen {
            self.state.down.push(n);
            self.state.forget_copy(n);
            if self.state.primary == Some(n) {
                self.fail_primary();
            }
            self.publish();
        }
    }

    pub(super) fn restart(&mut self, n: usize) {
        self.nodes[n].up = true;
        self.state.down.retain(|&d| d != n);
        self.allocate_orphan();
        self.publish();
    }

    /// A primary lost with no in-sync replica goes back to its own node, once that node runs, in a
    /// higher term: the node opens it from what it persisted.
    pub(super) fn allocate_orphan(&mut self) {
        let s = &mut self.state;
        if let Some(n) =
            s.orphan.filter(|&n| s.primary.is_none() && !s.down.contains(&n) && self.nodes[n].up)
        {
            s.primary = Some(n);
            s.epoch += 1;
            s.orphan = None;
        }
    }

    /// A relocation of the primary to a data node that holds no copy: it recovers first.
    pub(super) fn relocate(&mut self) {
        let s = &self.state;
        let target = (1..NODES).find(|&n| {
            Some(n) != s.primary
                && !s.copies().contains(&n)
                && !s.down.contains(&n)
                && self.nodes[n].up
        });
        if let (Some(_), None, Some(target)) = (s.primary, s.relocating, target) {
            self.state.relocating = Some(target);
            self.state.allocate(target);
            self.publish();
        }
    }

    /// The relocation target holds the whole state and its source handed its primary context off
    /// (Elasticsearch refuses the source's batches from then on): the target is the primary in the
    /// same term.
    pub(super) fn hand_off(&mut self, target: usize) {
        self.state.primary = Some(target);
        self.state.relocating = None;
        self.publish();
    }

    /// Fails the primary: the first in-sync replica is promoted in a higher term; with none, the
    /// primary waits for its own node.
    pub(super) fn fail_primary(&mut self) {
        let s = &mut self.state;
        s.relocating = None;
        if s.in_sync.is_empty() {
            s.orphan = s.primary.take();
            self.allocate_orphan();
            return;
        }
        s.primary = Some(s.in_sync.remove(0));
        s.epoch += 1;
        self.out.failovers += 1;
    }

    pub(super) fn publish(&mut self) {
        self.state.version += 1;
        self.republish();
    }

    /// Sends the master's state to every node again (also to those that missed it).
    pub(super) fn republish(&mut self) {
        let state = format!("{:?}", self.state);
        self.note(|| format!("master publishes {state}"));
        self.last_publish = self.t;
        for n in 1..NODES {
            let state = Box::new(self.state.clone());
            self.send(MASTER, n, Msg::Publish(state));
        }
    }

    pub(super) fn master_timers(&mut self) {
        let now = self.now(MASTER);
        if now >= self.nodes[MASTER].next_look {
            self.nodes[MASTER].next_look = now + SILENT_LOOK_INTERVAL_MS * 1_000;
            let seen = [SeenPartition {
                partition: P,
                owner: self.state.primary.map(|o| o.to_string()),
                epoch: self.state.epoch,
                promotable: !self.state.in_sync.is_empty(),
            }];
            // The nodes of the master's cluster state: a crash is seen at once (`Crash`).
            let nodes: Vec<String> =
                (0..NODES).filter(|&i| self.nodes[i].up).map(|i| i.to_string()).collect();
            let view = MasterView {
                master: true,
                local: "0",
                copy_leases: self.s.source == LeaseSource::Copies,
                enabled: true,
                bound_us: self.s.silent_bound_ms * 1_000,
                partitions: &seen,
                nodes: &nodes,
            };
            if !self.nodes[MASTER].own.look(now, &view).is_empty() {
                self.fail_primary();
                self.publish();
            }
        }
        self.allocate_replica();
        if self.t >= self.last_publish + REPUBLISH_MS {
            self.republish();
        }
    }

    /// A missing replica is allocated to a live data node after a while; it recovers by taking
    /// the whole state from the owner.
    pub(super) fn allocate_replica(&mut self) {
        let s = &self.state;
        if s.primary.is_none() || !s.copies().is_empty() {
            self.missing_replica_since = None;
            return;
        }
        let since = *self.missing_replica_since.get_or_insert(self.t);
        let candidate =
            (1..NODES).find(|&c| Some(c) != s.primary && !s.down.contains(&c) && self.nodes[c].up);
        if let (true, Some(c)) = (self.t >= since + RECOVERY_AFTER_MS, candidate) {
            self.state.recovering.push(c);
            self.state.allocate(c);
            self.missing_replica_since = None;
            self.publish();
        }
    }
}
