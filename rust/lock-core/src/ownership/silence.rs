//! The elected master's watch for owners that went silent (docs/ARCHITECTURE.md "Silent owners",
//! "The master's bound"). Every owner asks the master every
//! [`OWNER_CHECK_INTERVAL_MS`](super::bounds::OWNER_CHECK_INTERVAL_MS); when the master has heard
//! nothing from a partition's owner for the silent-owner bound, it fails that primary copy so that
//! an in-sync replica is promoted in a higher term. What keeps two owners from serving:
//!
//! - the silence is measured from the master's receipt of the last question it answered "yours",
//!   which comes after that question's send, from which the owner counts its window;
//! - answering and deciding to fail are one step each on this watch, and a condemned (partition,
//!   epoch) is never answered "yours" again;
//! - where copy leases are not in force, an owner is watched only from the first question this
//!   master heard from it in its epoch (the owner also confirms itself when it opens a partition
//!   from a published cluster state); with copy leases, from the first look that shows it, since
//!   a promoted copy waits out the copy lease whatever the master does;
//! - the master's own pauses do not count: a gap of more than [`OWN_PAUSE_MS`] between two of its
//!   looks restarts every silence;
//! - nor do its own cuts: every node asks the master, owner or not, every
//!   [`OWNER_CHECK_INTERVAL_MS`](super::bounds::OWNER_CHECK_INTERVAL_MS); while no node of its
//!   cluster state other than an owner has asked within half the bound, though one asked before,
//!   the master is the one cut off (or every node it could promote is), and that owner's silence
//!   restarts too. Half: an owner's last question may precede the others' by an interval, and its
//!   silence must never reach the bound before theirs counts. Once the others are heard again,
//!   the owner's silence counts from as long again as the master looked cut off: TCP delivers
//!   what a cut held back after a retransmission backoff that grows with the cut, and the owner's
//!   connection may recover later than the others'. Without this, a master cut off for longer
//!   than the bound but not replaced (Elasticsearch replaces it after about 30 s) failed a live
//!   owner over once the cut healed. With no other node asking (two nodes, or an older plugin's)
//!   the rule is off;
//! - the master never fails its own copy, nor a primary with no started in-sync replica.

use std::collections::BTreeMap;

use super::bounds::{ASK_AGAIN_MS, OWN_PAUSE_MS};
use super::Micros;

/// A partition as the master's cluster state shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenPartition {
    pub partition: u32,
    /// The node holding its active primary, if any.
    pub owner: Option<String>,
    /// Its primary term.
    pub epoch: u64,
    /// Whether a started in-sync replica exists, which a failed primary promotes.
    pub promotable: bool,
}

/// One look of the master at its cluster state.
#[derive(Debug, Clone, Copy)]
pub struct MasterView<'a> {
    /// Whether this node is the elected master (else it forgets everything).
    pub master: bool,
    /// This node's id: its own copies are never failed.
    pub local: &'a str,
    /// Whether every node answers heartbeats, so owners serve on their copies' leases.
    pub copy_leases: bool,
    /// Whether silent owners are failed at all: replicated partitions only, where a promoted
    /// copy holds every holder.
    pub enabled: bool,
    /// `locks.failover.silent_owner`, in microseconds.
    pub bound_us: Micros,
    pub partitions: &'a [SeenPartition],
    /// The ids of the nodes in the master's cluster state: only they count as other nodes that
    /// ask (see [`SilentOwners::cut_off`]).
    pub nodes: &'a [String],
}

/// One partition's owner as this master last heard it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Watch {
    owner: String,
    epoch: u64,
    heard_at: Micros,
    condemned_at: Option<Micros>,
    /// Since when the master has looked cut off (see [`SilentOwners::cut_off`]), while it does.
    cut_off_since: Option<Micros>,
}

impl Watch {
    fn of(&self, owner: &str, epoch: u64) -> bool {
        self.owner == owner && self.epoch == epoch
    }
}

/// The master's watch (on every node; it acts only while the node is the elected master).
#[derive(Debug, Clone, Default)]
pub(super) struct SilentOwners {
    watches: BTreeMap<u32, Watch>,
    last_look: Option<Micros>,
    /// When each node last asked this master (an owner about its partitions, or a node serving
    /// nothing, which asks all the same).
    asked: BTreeMap<String, Micros>,
}

impl SilentOwners {
    /// The master answers `owner`'s question about `partition`, which its cluster state shows
    /// `owner` holding in `epoch`: whether to answer "yours". Records that the owner was heard,
    /// unless the master already decided to fail that copy.
    pub(super) fn heard(&mut self, partition: u32, epoch: u64, owner: &str, now: Micros) -> bool {
        if self
            .watches
            .get(&partition)
            .is_some_and(|w| w.of(owner, epoch) && w.condemned_at.is_some())
        {
            return false;
        }
        let watch = Watch {
            owner: owner.to_owned(),
            epoch,
            heard_at: now,
            condemned_at: None,
            cut_off_since: None,
        };
        self.watches.insert(partition, watch);
        true
    }

    /// `node` asked this master at `now` (whatever it asked about).
    pub(super) fn node_asked(&mut self, node: &str, now: Micros) {
        self.asked.insert(node.to_owned(), now);
    }

    /// Whether the silence of `owner` may be this master's own: a node of its cluster state other
    /// than `owner` and itself asks it, and none has within half the bound.
    fn cut_off(&self, owner: &str, now: Micros, view: &MasterView<'_>) -> bool {
        let mut others = self
            .asked
            .iter()
            .filter(|(node, _)| node.as_str() != owner && node.as_str() != view.local)
            .map(|(_, at)| now.saturating_sub(*at))
            .peekable();
        others.peek().is_some() && others.all(|ago| ago > view.bound_us / 2)
    }

    /// One look: the partitions whose owner has been silent past the bound, now condemned, whose
    /// primary copy is to be failed (again every [`ASK_AGAIN_MS`] while the state still shows it).
    pub(super) fn look(&mut self, now: Micros, view: &MasterView<'_>) -> Vec<SeenPartition> {
        let own_pause =
            self.last_look.is_some_and(|last| now.saturating_sub(last) > OWN_PAUSE_MS * 1_000);
        self.last_look = Some(now);
        if !view.master || !view.enabled {
            self.watches.clear();
            self.asked.clear();
            return Vec::new();
        }
        self.asked.retain(|node, _| view.nodes.contains(node));
        let mut condemned = Vec::new();
        let mut kept = BTreeMap::new();
        for seen in view.partitions {
            let Some(owner) = seen.owner.as_deref() else { continue };
            let Some(watch) = self.watches.get(&seen.partition).filter(|w| w.of(owner, seen.epoch))
            else {
                if view.copy_leases {
                    // Safety rests on the copies' leases: watch from the first look that shows it.
                    let watch = Watch {
                        owner: owner.to_owned(),
                        epoch: seen.epoch,
                        heard_at: now,
                        condemned_at: None,
                        cut_off_since: None,
                    };
                    kept.insert(seen.partition, watch);
                }
                continue; // else only once heard from in this epoch (its own confirmation may run)
            };
            let mut watch = watch.clone();
            if let Some(at) = watch.condemned_at {
                if now.saturating_sub(at) > ASK_AGAIN_MS * 1_000 {
                    watch.condemned_at = Some(now); // not failed yet: ask again
                    condemned.push(seen.clone());
                }
            } else if own_pause {
                watch.heard_at = now;
            } else if self.cut_off(owner, now, view) {
                watch.heard_at = now;
                watch.cut_off_since.get_or_insert(now);
            } else if let Some(since) = watch.cut_off_since.take() {
                // Back in touch with the others: the owner's questions may trail theirs by TCP's
                // retransmission backoff, which grows with the cut, so its silence counts from as
                // long again as the master looked cut off.
                watch.heard_at = now + now.saturating_sub(since);
            } else if owner != view.local
                && seen.promotable
                && now.saturating_sub(watch.heard_at) > view.bound_us
            {
                watch.condemned_at = Some(now);
                condemned.push(seen.clone());
            }
            kept.insert(seen.partition, watch);
        }
        self.watches = kept;
        condemned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Micros = 1_000_000;

    fn seen(owner: &str, epoch: u64) -> Vec<SeenPartition> {
        vec![SeenPartition { partition: 0, owner: Some(owner.into()), epoch, promotable: true }]
    }

    /// The nodes of the tests' cluster states: the master `m`, owners `a` and `b`, a third node `c`.
    fn nodes() -> &'static [String] {
        static NODES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        NODES.get_or_init(|| ["m", "a", "b", "c"].map(String::from).to_vec())
    }

    fn view<'a>(parts: &'a [SeenPartition], copy_leases: bool) -> MasterView<'a> {
        MasterView {
            master: true,
            local: "m",
            copy_leases,
            enabled: true,
            bound_us: 3_500_000,
            partitions: parts,
            nodes: nodes(),
        }
    }

    /// Looks every 250 ms from `from` to `to` (µs), answering what each look condemned.
    fn looks(w: &mut SilentOwners, from: Micros, to: Micros, v: &MasterView<'_>) -> Vec<Micros> {
        let mut at = from;
        let mut condemned = Vec::new();
        while at <= to {
            if !w.look(at, v).is_empty() {
                condemned.push(at);
            }
            at += 250_000;
        }
        condemned
    }

    #[test]
    fn a_silent_owner_is_condemned_after_the_bound_and_answered_no_from_then_on() {
        let parts = seen("a", 1);
        let mut w = SilentOwners::default();
        assert!(w.heard(0, 1, "a", 0));
        let condemned = looks(&mut w, 250_000, 5 * S, &view(&parts, false));
        assert_eq!(condemned, vec![3_750_000], "the first look past 3.5 s of silence");
        assert!(!w.heard(0, 1, "a", 4 * S), "a condemned owner is never confirmed again");
        assert!(w.heard(0, 2, "b", 4 * S), "the next epoch's owner is");
    }

    #[test]
    fn without_copy_leases_an_owner_never_heard_is_not_watched_and_with_them_it_is() {
        let parts = seen("a", 1);
        let mut w = SilentOwners::default();
        assert!(looks(&mut w, 0, 10 * S, &view(&parts, false)).is_empty());
        let mut w = SilentOwners::default();
        assert_eq!(looks(&mut w, 0, 5 * S, &view(&parts, true)).first(), Some(&3_750_000));
    }

    #[test]
    fn the_masters_own_pause_restarts_every_silence() {
        let parts = seen("a", 1);
        let mut w = SilentOwners::default();
        w.heard(0, 1, "a", 0);
        assert!(w.look(250_000, &view(&parts, false)).is_empty());
        // The master was paused for 3.4 s: the owner may have asked all along.
        assert!(w.look(3_650_000, &view(&parts, false)).is_empty());
        assert!(w.look(3_900_000, &view(&parts, false)).is_empty(), "silence counted from 3.65 s");
        assert_eq!(looks(&mut w, 4_150_000, 8 * S, &view(&parts, false)).first(), Some(&7_400_000));
    }

    #[test]
    fn the_masters_own_cut_restarts_the_silence_and_an_owner_silent_alone_is_condemned() {
        let parts = seen("a", 1);
        let v = view(&parts, true);
        // `c` serves nothing and asks every 500 ms; then nobody is heard from 2 s (the master cut
        // off) until 12 s, when both ask again: no owner condemned during or after the cut, and
        // `a`'s silence counts from the heal.
        let mut w = SilentOwners::default();
        let mut condemned = Vec::new();
        for at in (0..30 * S).step_by(250_000) {
            if at % 500_000 == 0 && !(2 * S..12 * S).contains(&at) {
                w.node_asked("c", at);
                if at < 2 * S {
                    w.node_asked("a", at);
                    w.heard(0, 1, "a", at);
                }
            }
            if !w.look(at, &v).is_empty() {
                condemned.push(at);
            }
        }
        // `a` stays silent after the heal while `c` asks: the master looked cut off from 3.5 s
        // (`c` silent for half the bound) to 12 s, so `a`'s silence counts from 20.5 s.
        assert_eq!(condemned.first(), Some(&24_250_000), "{condemned:?}");
        // The same cut, `a`'s questions held back 5 s longer than `c`'s (TCP's backoff): kept.
        let mut w = SilentOwners::default();
        let mut condemned = Vec::new();
        for at in (0..30 * S).step_by(250_000) {
            if at % 500_000 == 0 && !(2 * S..12 * S).contains(&at) {
                w.node_asked("c", at);
            }
            if at % 500_000 == 0 && !(2 * S..17 * S).contains(&at) {
                w.heard(0, 1, "a", at);
            }
            if !w.look(at, &v).is_empty() {
                condemned.push(at);
            }
        }
        assert_eq!(condemned, Vec::<Micros>::new());
        // The owner's last question 450 ms before the others' last, then the cut: not condemned.
        let mut w = SilentOwners::default();
        w.heard(0, 1, "a", 1_550_000);
        w.node_asked("c", 2 * S);
        assert!(looks(&mut w, 2 * S, 12 * S, &v).is_empty());
        // `a` silent from 2 s while `c` asks all along: condemned at the bound, as ever.
        let mut w = SilentOwners::default();
        let mut condemned = Vec::new();
        for at in (0..10 * S).step_by(250_000) {
            if at % 500_000 == 0 {
                w.node_asked("c", at);
                if at < 2 * S {
                    w.heard(0, 1, "a", at);
                }
            }
            if !w.look(at, &v).is_empty() {
                condemned.push(at);
            }
        }
        assert_eq!(condemned.first(), Some(&5_250_000), "{condemned:?}");
    }

    #[test]
    fn without_another_node_in_the_cluster_state_asking_the_rule_is_off() {
        let parts = seen("a", 1);
        // `c` asked once, then left the cluster: not in the state, it counts for nothing.
        let mut w = SilentOwners::default();
        w.node_asked("c", 0);
        w.heard(0, 1, "a", 0);
        let two: Vec<String> = ["m", "a"].map(String::from).to_vec();
        let v = MasterView { nodes: &two, ..view(&parts, true) };
        assert_eq!(looks(&mut w, 250_000, 5 * S, &v).first(), Some(&3_750_000));
        // The master's own questions count for nothing either.
        let mut w = SilentOwners::default();
        w.heard(0, 1, "a", 0);
        for at in (0..5 * S).step_by(500_000) {
            w.node_asked("m", at);
        }
        assert_eq!(looks(&mut w, 250_000, 5 * S, &view(&parts, true)).first(), Some(&3_750_000));
    }

    #[test]
    fn an_owner_that_keeps_asking_is_never_condemned_and_one_heard_in_another_epoch_is_not_watched()
    {
        let parts = seen("a", 1);
        let mut w = SilentOwners::default();
        for i in 0..100 {
            assert!(w.heard(0, 1, "a", i * 3 * S));
            assert!(w.look(i * 3 * S + 100, &view(&parts, false)).is_empty());
        }
        let mut w = SilentOwners::default();
        assert!(w.heard(0, 0, "a", 0), "heard in an older epoch");
        assert!(looks(&mut w, 250_000, 60 * S, &view(&parts, false)).is_empty());
    }

    #[test]
    fn a_node_that_is_not_the_master_forgets_and_without_replication_none_is_failed() {
        let parts = seen("a", 1);
        let mut w = SilentOwners::default();
        w.heard(0, 1, "a", 0);
        assert!(w.look(250_000, &MasterView { master: false, ..view(&parts, false) }).is_empty());
        assert!(
            looks(&mut w, 500_000, 60 * S, &view(&parts, false)).is_empty(),
            "elected again: from the next question"
        );
        let mut w = SilentOwners::default();
        w.heard(0, 1, "a", 0);
        assert!(looks(
            &mut w,
            250_000,
            60 * S,
            &MasterView { enabled: false, ..view(&parts, true) }
        )
        .is_empty());
    }

    #[test]
    fn a_new_owner_or_epoch_starts_a_fresh_watch() {
        let mut w = SilentOwners::default();
        w.heard(0, 1, "a", 0);
        assert_eq!(looks(&mut w, 250_000, 4 * S, &view(&seen("a", 1), false)), vec![3_750_000]);
        let promoted = seen("b", 2);
        assert!(
            looks(&mut w, 4_250_000, 14 * S, &view(&promoted, false)).is_empty(),
            "b not heard yet"
        );
        assert!(w.heard(0, 2, "b", 14 * S));
        assert_eq!(
            looks(&mut w, 14_250_000, 18 * S, &view(&promoted, false)).first(),
            Some(&17_750_000)
        );
    }

    #[test]
    fn its_own_copy_and_an_unpromotable_primary_are_never_failed_and_a_condemned_one_is_asked_again(
    ) {
        let mut w = SilentOwners::default();
        w.heard(0, 1, "m", 0);
        assert!(looks(&mut w, 250_000, 10 * S, &view(&seen("m", 1), false)).is_empty());
        let lonely = vec![SeenPartition {
            partition: 0,
            owner: Some("a".into()),
            epoch: 1,
            promotable: false,
        }];
        let mut w = SilentOwners::default();
        w.heard(0, 1, "a", 0);
        assert!(looks(&mut w, 250_000, 10 * S, &view(&lonely, false)).is_empty());
        let parts = seen("a", 1);
        let mut w = SilentOwners::default();
        w.heard(0, 1, "a", 0);
        assert_eq!(
            looks(&mut w, 250_000, 12 * S, &view(&parts, false)),
            vec![3_750_000, 9_000_000]
        );
    }
}
