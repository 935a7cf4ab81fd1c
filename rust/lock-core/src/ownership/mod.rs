//! Who may serve a partition, decided in one place: the ownership protocol of
//! docs/ARCHITECTURE.md "Silent owners" as a state machine with no clock, thread or I/O inside.
//! Events come in, each with the caller's monotonic time in microseconds; decisions come out. The
//! plugin sends and receives the messages, keeps the timers and calls Elasticsearch's
//! cluster-state APIs; the model tests (`tests/ownership_model.rs`) drive this same code through
//! delays, drops, cuts, pauses and clock-rate error.
//!
//! One [`Ownership`] is one node's part, in its three roles:
//!
//! | role | events | decisions | file |
//! |---|---|---|---|
//! | owner | [`opened`](Ownership::opened), [`renewed`](Ownership::renewed), [`master_answered`](Ownership::master_answered), [`closed`](Ownership::closed), [`handed_over`](Ownership::handed_over) | [`verdict`](Ownership::verdict): serve, or refuse with a retry hint; give the partition up; [`hand_over_asked`](Ownership::hand_over_asked): give its state, or refuse an asker of an older epoch | `lease.rs` |
//! | copy | [`answered`](Ownership::answered) | [`promotion_wait`](Ownership::promotion_wait): wait N µs before serving | `promotion.rs` |
//! | master | [`heard`](Ownership::heard), [`node_asked`](Ownership::node_asked), [`look`](Ownership::look) | confirm or deny an owner; fail that primary as silent | `silence.rs` |
//!
//! The bounds are in `bounds.rs`, the one place they are written.

pub mod bounds;
mod lease;
mod promotion;
mod silence;

use std::collections::BTreeMap;

pub use lease::{LeaseSource, Verdict};
pub use silence::{MasterView, SeenPartition};

use lease::OwnerLease;
use promotion::CopyAnswers;
use silence::SilentOwners;

/// Monotonic microseconds on the caller's clock (one clock per node; never compared across nodes).
pub type Micros = u64;

/// A deliberate deviation from the protocol, for the fault-injection build only: the model tests
/// show that their checks catch each one, a real-node test that a build with
/// [`Flaw::NoPromotionWait`] lets two owners serve, and the fault test's checker that it catches
/// a build with [`Flaw::IgnoresLease`] (docs/RELIABILITY.md "Who may serve", "A broken build").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flaw {
    /// The protocol as written.
    #[default]
    None,
    /// A promoted copy serves at once instead of waiting out the old owner's lease.
    NoPromotionWait,
    /// A promoted copy with no answer on record serves at once.
    NoWaitWithoutAnswer,
    /// An owner counts its lease from the arrival of the copies' answer instead of its send.
    LeaseFromAnswer,
    /// A hand-over's source keeps serving after it sent its state.
    SourceServesAfterHandOver,
    /// Where the master's confirmations renew leases, a promoted copy does not wait out the
    /// master's window.
    NoMasterWindowWait,
    /// An owner serves on a lease that ran out, as long as it has not closed the partition: a
    /// cut-off or resumed old owner answers from its table next to the new owner.
    IgnoresLease,
}

/// What the master's answer to an owner's question means for that owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MasterAnswer {
    /// "Yours": the lease was renewed from the question's send (it serves on it without copies).
    Confirmed,
    /// "Not yours" about the epoch this node serves in: it gives the partition up.
    GiveUp,
    /// About an epoch this node no longer serves in, or a partition it does not serve.
    Stale,
}

/// What a node does when another asks it for a partition's state: the new owner of a planned
/// move fetching it, or a promoted copy asking the old owner to close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandOver {
    /// Stop serving the partition (if it does) and answer its state, or the state it kept.
    Give,
    /// This node has served the partition in `epoch`, newer than the asker's: the request comes
    /// from an ownership that a later failover ended (a request a broken connection delivered
    /// late). Nothing is closed or given; the asker's own cluster state catches up.
    Refuse { epoch: u64 },
}

/// One node's part in the ownership protocol (see the module's table).
#[derive(Debug, Clone, Default)]
pub struct Ownership {
    serving: BTreeMap<u32, OwnerLease>,
    /// The newest epoch this node has served each partition in, kept after it closed it: epochs
    /// only grow, so an asker in an older one is out of date ([`Ownership::hand_over_asked`]).
    newest: BTreeMap<u32, u64>,
    copies: CopyAnswers,
    silent: SilentOwners,
    source: LeaseSource,
    flaw: Flaw,
}

impl Ownership {
    /// A node's part, serving nothing; leases come from the copies until told otherwise.
    pub fn new() -> Self {
        Ownership::default()
    }

    /// This node runs with `flaw` (test builds only, see [`Flaw`]).
    #[cfg(feature = "fault-injection")]
    pub fn set_flaw(&mut self, flaw: Flaw) {
        self.flaw = flaw;
    }

    fn flawed(&self, flaw: Flaw) -> bool {
        cfg!(feature = "fault-injection") && self.flaw == flaw
    }

    /// What renews owners' leases from now on, as each cluster state says.
    pub fn set_source(&mut self, source: LeaseSource) {
        self.source = source;
    }

    /// What renews owners' leases now.
    pub fn source(&self) -> LeaseSource {
        self.source
    }

    /// This node serves `partition` in `epoch` from `now`: confirmed by the state the master just
    /// published, or (`confirmed` false) reopened from its own state, which may be stale.
    pub fn opened(&mut self, partition: u32, epoch: u64, confirmed: bool, now: Micros) {
        self.serving.insert(partition, OwnerLease::opened(epoch, confirmed, now));
        let newest = self.newest.entry(partition).or_insert(epoch);
        *newest = (*newest).max(epoch);
        self.copies.served(partition);
    }

    /// This node stops serving `partition`; whether it served it.
    pub fn closed(&mut self, partition: u32) -> bool {
        self.serving.remove(&partition).is_some()
    }

    /// This node hands `partition` over to its next owner: it stops serving before its state
    /// leaves (the caller exports the table only after this).
    pub fn handed_over(&mut self, partition: u32) {
        if !self.flawed(Flaw::SourceServesAfterHandOver) {
            self.serving.remove(&partition);
        }
    }

    /// A node that owns `partition` in `epoch` asks this one for its state (to close it, or to
    /// take it over): given unless this node has served the partition in a newer epoch. The
    /// caller closes and exports only on [`HandOver::Give`] (docs/ARCHITECTURE.md "Partitions,
    /// owners, epochs", the planned-move row).
    pub fn hand_over_asked(&self, partition: u32, epoch: u64) -> HandOver {
        match self.newest.get(&partition) {
            Some(&newer) if newer > epoch => HandOver::Refuse { epoch: newer },
            _ => HandOver::Give,
        }
    }

    /// The partition's epoch on this node, while it serves it.
    pub fn epoch(&self, partition: u32) -> Option<u64> {
        self.serving.get(&partition).map(|lease| lease.epoch)
    }

    /// A batch or heartbeat of `partition` in `epoch`, sent at `sent`, reached every in-sync copy
    /// (or those that did not take it are out of the in-sync set by a committed cluster state);
    /// its answer arrived at `now`.
    pub fn renewed(&mut self, partition: u32, epoch: u64, sent: Micros, now: Micros) {
        let from = if self.flawed(Flaw::LeaseFromAnswer) { now } else { sent };
        if let Some(lease) = self.serving.get_mut(&partition) {
            lease.renew(LeaseSource::Copies, epoch, from);
        }
    }

    /// The elected master answered the question about `partition` in `epoch` sent at `asked`.
    pub fn master_answered(
        &mut self,
        partition: u32,
        epoch: u64,
        asked: Micros,
        yours: bool,
    ) -> MasterAnswer {
        match self.serving.get_mut(&partition) {
            Some(lease) if lease.epoch == epoch && yours => {
                lease.renew(LeaseSource::Master, epoch, asked);
                MasterAnswer::Confirmed
            }
            Some(lease) if lease.epoch == epoch => MasterAnswer::GiveUp,
            _ => MasterAnswer::Stale,
        }
    }

    /// Whether this node may serve `partition` at `now`: every grant, expiry, hand-off to a
    /// waiter and read first asks this (a resumed node finds its lease long gone).
    pub fn verdict(&self, partition: u32, now: Micros) -> Verdict {
        match self.serving.get(&partition) {
            Some(_) if self.flawed(Flaw::IgnoresLease) => Verdict::Serve,
            Some(lease) => lease.verdict(self.source(), now),
            None => Verdict::NotServed,
        }
    }

    /// Microseconds of lease `partition` has left at `now` (0: none, or not served).
    pub fn lease_left_us(&self, partition: u32, now: Micros) -> Micros {
        self.serving.get(&partition).map_or(0, |lease| lease.left_us(self.source(), now))
    }

    /// The partitions this node serves, with their epochs.
    pub fn served(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.serving.iter().map(|(p, lease)| (*p, lease.epoch))
    }

    /// This node's copy of `partition` answered a batch or heartbeat of its owner at `now`.
    pub fn answered(&mut self, partition: u32, now: Micros) {
        self.copies.answered(partition, now);
    }

    /// This node's copy of `partition` was promoted: how long from `now` it waits before it serves.
    /// 0 once `old_owner_closed` (the old owner answered that it closed the partition); else the
    /// rest of [`bounds::PROMOTION_WAIT_US`] after its last answer, and where the master's
    /// confirmations renew leases, at least [`bounds::MASTER_PROMOTION_WAIT_US`] from the
    /// promotion's first moment. Asked again, the wait ends at the same moment.
    pub fn promotion_wait(
        &mut self,
        partition: u32,
        now: Micros,
        old_owner_closed: bool,
    ) -> Micros {
        if old_owner_closed
            || self.flawed(Flaw::NoPromotionWait)
            || (self.flawed(Flaw::NoWaitWithoutAnswer) && !self.copies.knows(partition))
        {
            return 0;
        }
        let copies = self.copies.promotion_wait(partition, now);
        match self.source {
            LeaseSource::Copies => copies,
            LeaseSource::Master if self.flawed(Flaw::NoMasterWindowWait) => copies,
            LeaseSource::Master => copies.max(self.copies.master_wait(partition, now)),
        }
    }

    /// On the master: whether to answer `owner` "yours" about `partition` in `epoch`, which its
    /// cluster state shows; hearing it restarts its silence (see `silence.rs`).
    pub fn heard(&mut self, partition: u32, epoch: u64, owner: &str, now: Micros) -> bool {
        self.silent.heard(partition, epoch, owner, now)
    }

    /// On the master: `node` asked it at `now`, whatever about (a node serving nothing asks too),
    /// which tells the master's own cut from an owner's silence (see `silence.rs`).
    pub fn node_asked(&mut self, node: &str, now: Micros) {
        self.silent.node_asked(node, now)
    }

    /// On every node, every [`bounds::SILENT_LOOK_INTERVAL_MS`]: the partitions whose primary the
    /// master fails now, its owner silent past the bound (empty unless this node is the master).
    pub fn look(&mut self, now: Micros, view: &MasterView<'_>) -> Vec<SeenPartition> {
        self.silent.look(now, view)
    }
}

#[cfg(test)]
mod tests {
    use super::bounds::PROMOTION_WAIT_US;
    use super::*;

    #[test]
    fn an_owner_serves_between_its_copies_answers_and_not_after_it_closed_or_handed_over() {
        let mut node = Ownership::new();
        assert_eq!(node.verdict(0, 0), Verdict::NotServed);
        node.opened(0, 2, true, 0);
        assert!(!node.verdict(0, 0).serves(), "copy leases: the copies have not answered yet");
        node.renewed(0, 2, 10, 5_000);
        assert!(node.verdict(0, 700_000).serves());
        node.handed_over(0);
        assert_eq!(node.verdict(0, 700_000), Verdict::NotServed);
    }

    #[test]
    fn a_hand_over_is_refused_to_an_asker_of_an_older_epoch_than_served_here_even_after_closing() {
        let mut node = Ownership::new();
        assert_eq!(node.hand_over_asked(0, 1), HandOver::Give, "never served here");
        node.opened(0, 5, true, 0);
        assert_eq!(node.hand_over_asked(0, 4), HandOver::Refuse { epoch: 5 });
        assert_eq!(node.hand_over_asked(0, 5), HandOver::Give, "a relocation keeps the epoch");
        assert_eq!(node.hand_over_asked(0, 6), HandOver::Give, "a promotion raises it");
        assert!(node.closed(0));
        assert_eq!(node.hand_over_asked(0, 4), HandOver::Refuse { epoch: 5 }, "its kept state too");
        node.opened(0, 3, false, 0);
        assert_eq!(node.hand_over_asked(0, 4), HandOver::Refuse { epoch: 5 }, "the newest stays");
        assert_eq!(node.hand_over_asked(1, 1), HandOver::Give, "per partition");
    }

    #[test]
    fn the_master_source_serves_on_confirmations_and_a_no_gives_the_partition_up() {
        let mut node = Ownership::new();
        node.set_source(LeaseSource::Master);
        node.opened(1, 4, false, 0);
        assert!(!node.verdict(1, 1).serves());
        assert_eq!(node.master_answered(1, 4, 100, true), MasterAnswer::Confirmed);
        assert!(node.verdict(1, 2_000_000).serves());
        assert_eq!(node.master_answered(1, 3, 200, false), MasterAnswer::Stale);
        assert_eq!(node.master_answered(1, 4, 200, false), MasterAnswer::GiveUp);
    }

    #[test]
    fn a_promoted_copy_waits_unless_the_old_owner_closed() {
        let mut node = Ownership::new();
        node.answered(0, 1_000);
        assert_eq!(node.promotion_wait(0, 1_000, false), PROMOTION_WAIT_US);
        assert_eq!(node.promotion_wait(0, 1_000, true), 0);
    }
}
