//! Model check of the ownership protocol of docs/ARCHITECTURE.md "Silent owners", driving the
//! code that runs: each simulated node runs the core's own [`lock_core::ownership::Ownership`]
//! and lock tables, and the model reads the protocol's bounds from
//! [`lock_core::ownership::bounds`] (none is written here). `world.rs` is the cluster (nodes,
//! network, Elasticsearch's cluster state), `checker.rs` the rules.
//!
//! Faults: every node's clock at its own rate within the allowed error; pauses of any node, the
//! master included, and of several together; cuts one way or both; delayed and reordered
//! messages and publications; crashes (the node loses all but its persisted state); relocations.
//! After every step:
//!
//! - **at most one node serves** the partition (its verdict is "serve", it runs, it has a table),
//!   in any epoch: a resumed old owner serving beside the new one is such an overlap;
//! - **what it serves holds every grant told** and not told released: no acknowledged holder is
//!   lost, and no node serves a state older than what clients were told;
//! - **tokens only grow**: each grant told carries a token above every one told before for its
//!   key, across promotions and, within an epoch, across a hand-over;
//! - **no stale read**: a read misses no grant told before it was invoked (unless a release of it
//!   was applied), and shows none told released before.
//!
//! The checks are shown to fail (the `flawed_*` tests, in the fault-injection build, which
//! `make rust-test` runs) on each [`lock_core::ownership::Flaw`]: no promotion wait; the lease
//! counted from the answer's arrival; a promotion without an answer on record; a hand-over whose
//! source serves after sending its state; an owner serving on a lease that ran out; and, in a mixed cluster, a promotion that does not wait
//! out the master's window (after a relocation whose target crashed, or a silent-owner bound below
//! its floor). The model found that last one: a source paused right after its hand-off still held
//! the master's confirmation when the replica was promoted after the target's crash.
//!
//! Cases: a tenth of `tests/model.rs`'s (`PROPTEST_CASES`, else 1,000 when `CI=true`, else
//! 2,000): each case runs 20 s of a four-node cluster in 5 ms steps.

mod checker;
mod elastic;
mod node;
mod world;

use crate::common;

use lock_core::ownership::bounds::{
    CLOCK_RATE_ERROR_PPM, SILENT_OWNER_FAILOVER_DEFAULT_MS, SILENT_OWNER_FAILOVER_MIN_MS,
};
use lock_core::ownership::{Flaw, LeaseSource};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use world::{
    Crash, Cut, Outcome, Rng, Schedule, World, MASTER, NODES, OWNER, REPLICA, SPARE, STEP_MS,
};

const RUN_MS: u64 = 20_000;
const E: f64 = CLOCK_RATE_ERROR_PPM as f64 / 1e6;

fn quiet() -> Schedule {
    Schedule {
        rates: [1.0; NODES],
        pauses: vec![],
        cuts: vec![],
        crashes: vec![],
        moves: vec![],
        max_delay: 20,
        max_publish_delay: 50,
        source: LeaseSource::Copies,
        silent_bound_ms: SILENT_OWNER_FAILOVER_DEFAULT_MS,
        run_ms: RUN_MS,
        seed: 1,
        flaw: Flaw::None,
        late_hand_overs: None,
        drops_per_mille: 0,
    }
}

fn at_step(ms: u64) -> u64 {
    ms - ms % STEP_MS
}

fn schedules() -> impl Strategy<Value = Schedule> {
    let rate = (1.0 - E)..=(1.0 + E);
    let pause = (0..NODES, 0..RUN_MS * 3 / 4, 0u64..8_000);
    let cut = (0..NODES, 0..NODES, 0..RUN_MS * 3 / 4, 0u64..8_000, any::<bool>());
    let crash = (1..NODES, 0..RUN_MS * 3 / 4, 0u64..6_000, prop::bool::weighted(0.3));
    (
        [rate.clone(), rate.clone(), rate.clone(), rate],
        prop::collection::vec(pause, 0..4),
        prop::collection::vec(cut, 0..3),
        prop::collection::vec(crash, 0..2),
        prop::collection::vec(0..RUN_MS, 0..2),
        (0u64..150, 0u64..400, prop::bool::weighted(0.2), any::<u64>()),
        prop_oneof![Just(0u64), 1u64..50],
    )
        .prop_map(
            |(
                rates,
                pauses,
                cuts,
                crashes,
                moves,
                (max_delay, max_publish_delay, mixed, seed),
                drops,
            )| {
                Schedule {
                    rates,
                    pauses,
                    cuts: cuts
                        .into_iter()
                        .filter(|c| c.0 != c.1)
                        .map(|(from, to, at, len, both)| Cut { from, to, at, len, both })
                        .collect(),
                    crashes: crashes
                        .into_iter()
                        .map(|(n, at, down, unseen)| {
                            let how = if unseen { Crash::Unseen } else { Crash::Seen };
                            (n, at_step(at), at_step(down.max(STEP_MS)), how)
                        })
                        .collect(),
                    moves: moves.into_iter().map(at_step).collect(),
                    max_delay,
                    max_publish_delay,
                    source: if mixed { LeaseSource::Master } else { LeaseSource::Copies },
                    seed,
                    drops_per_mille: drops,
                    ..quiet()
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: (common::cases() / 10).max(1), max_shrink_iters: 500, ..ProptestConfig::default() })]

    /// Whatever the pauses, cuts, lost messages, crashes, moves, delays and clock rates: the rules hold.
    #[test]
    fn never_two_owners_nor_a_lost_holder(s in schedules()) {
        let out = World::new(s.clone()).run();
        prop_assert_eq!(out.violation, None, "in {:?}", s);
    }
}

/// The random schedules do what the rules are about: failovers, hand-overs, grants and reads
/// happen in them (a model that never fails over proves nothing).
#[test]
fn the_schedules_fail_over_hand_over_grant_and_read() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut total = Outcome::default();
    for _ in 0..60 {
        let s = schedules().new_tree(&mut runner).expect("schedule").current();
        let out = World::new(s).run();
        assert_eq!(out.violation, None);
        total.failovers += out.failovers;
        total.handovers += out.handovers;
        total.grants += out.grants;
        total.reads += out.reads;
    }
    assert!(total.failovers >= 10, "{total:?}");
    assert!(total.handovers >= 10, "{total:?}");
    assert!(total.grants >= 100 && total.reads >= 100, "{total:?}");
}

/// A frozen owner is replaced, and clients are granted by the new one; a pause shorter than the
/// bound fails nothing over.
#[test]
fn a_frozen_owner_is_failed_over_and_a_brief_pause_is_not() {
    let frozen = Schedule {
        pauses: vec![(OWNER, 2_000, 10_000)],
        rates: [1.0 + E, 1.0 - E, 1.0, 1.0],
        ..quiet()
    };
    let out = World::new(frozen).run();
    assert_eq!(out.violation, None);
    assert_eq!(out.failovers, 1, "{out:?}");
    let brief = Schedule { pauses: vec![(OWNER, 2_000, 1_000)], ..quiet() };
    let out = World::new(brief).run();
    assert_eq!((out.violation, out.failovers), (None, 0));
    let moved = World::new(Schedule { moves: vec![5_000], ..quiet() }).run();
    assert_eq!((moved.violation.clone(), moved.handovers), (None, 1), "{moved:?}");
}

/// The master cut off from every node for longer than the silence bound (shorter than a
/// replacement, which the model does not have): the silence is its own, and no live owner is
/// failed over, also after the heal; an owner silent while the other nodes still ask is.
#[test]
fn a_master_cut_off_past_the_bound_fails_no_live_owner_over() {
    let cut =
        |len| (1..NODES).map(|to| Cut { from: MASTER, to, at: 2_000, len, both: true }).collect();
    let out = World::new(Schedule { cuts: cut(8_000), ..quiet() }).run();
    assert_eq!((out.violation.clone(), out.failovers), (None, 0), "{out:?}");
    let owner_cut = vec![Cut { from: MASTER, to: OWNER, at: 2_000, len: 8_000, both: true }];
    let out = World::new(Schedule { cuts: owner_cut, ..quiet() }).run();
    assert_eq!((out.violation.clone(), out.failovers), (None, 1), "{out:?}");
}

/// A hand-over request that arrives long after it was sent (a promoted copy asked the cut-off
/// old owner to close; TCP delivered the request once the cut healed) finds the node it asked
/// serving the partition again, in a newer epoch: promoted back after the copy that asked
/// crashed. It closes nothing, and that node still serves when the run ends (it closed for the
/// request, with the other copy down, before `hand_over_asked`: docs/RELIABILITY.md "Figures").
#[test]
fn a_late_hand_over_request_closes_no_newer_owner() {
    let cut = |to| Cut { from: OWNER, to, at: 2_000, len: 6_000, both: true };
    let s = Schedule {
        cuts: vec![cut(MASTER), cut(REPLICA), cut(SPARE)],
        crashes: vec![(REPLICA, 12_000, 30_000, Crash::Seen)],
        late_hand_overs: Some(15_000),
        run_ms: 17_000,
        ..quiet()
    };
    let out = World::new(s).run();
    assert_eq!(out.violation, None, "{out:?}");
    assert_eq!((out.failovers, out.refused_hand_overs), (2, 1), "{out:?}");
    assert_eq!(out.served_at_end, Some(OWNER), "{out:?}");
}

/// The families of schedules the flaws are searched in: the owner cut from the master (so the
/// master fails it over) while it still renews its lease through the replica, and around the
/// failover the two lose each other too, so that the replica's refusals no longer reach it.
fn cut_off_owner(rng: &mut Rng) -> Schedule {
    let master_cut = 1_000 + rng.below(3_000);
    let replica_cut = master_cut + 3_000 + rng.below(1_500);
    Schedule {
        rates: [0, 1, 2, 3].map(|_| 1.0 - E + rng.below(200) as f64 * E / 100.0),
        cuts: vec![
            Cut { from: OWNER, to: MASTER, at: master_cut, len: 10_000, both: true },
            Cut { from: REPLICA, to: OWNER, at: replica_cut, len: 10_000, both: rng.below(1) == 0 },
        ],
        max_delay: rng.below(120),
        max_publish_delay: rng.below(200),
        ..quiet()
    }
}

/// As [`cut_off_owner`], and the replica restarts, unseen, a moment before the failover: it
/// remembers no answer it gave.
fn cut_off_owner_and_restarted_replica(rng: &mut Rng) -> Schedule {
    let mut s = cut_off_owner(rng);
    let restart = at_step(s.cuts[0].at + 3_000 + rng.below(800));
    s.cuts[1].at = restart;
    s.crashes = vec![(REPLICA, restart, at_step(5 + rng.below(60)).max(STEP_MS), Crash::Unseen)];
    s
}

/// A relocation of the primary to the spare node, with a busy network, and the source paused a
/// moment around the hand-off.
fn relocation(rng: &mut Rng) -> Schedule {
    let at = at_step(2_000 + rng.below(2_000));
    Schedule {
        moves: vec![at],
        pauses: vec![(OWNER, at + rng.below(1_500), rng.below(700))],
        max_delay: rng.below(100),
        ..quiet()
    }
}

/// A mixed cluster (the master's confirmations renew owners) whose silent-owner bound is
/// `bound_ms`: the owner is cut off from every node at once and serves on the master's last
/// confirmation; the master fails it over once it has heard nothing for the bound.
fn mixed_cut_off_owner(rng: &mut Rng, bound_ms: u64) -> Schedule {
    let at = 1_000 + rng.below(3_000);
    Schedule {
        rates: [0, 1, 2, 3].map(|_| 1.0 - E + rng.below(200) as f64 * E / 100.0),
        cuts: vec![
            Cut { from: OWNER, to: MASTER, at, len: 10_000, both: true },
            Cut { from: OWNER, to: REPLICA, at, len: 10_000, both: true },
        ],
        max_delay: rng.below(120),
        max_publish_delay: rng.below(200),
        source: LeaseSource::Master,
        silent_bound_ms: bound_ms,
        ..quiet()
    }
}

/// How many seeds of a family are searched: every flaw is found within the first 200 (the
/// latest, `NoMasterWindowWait` after a relocation, at seed 171).
const FAMILY_SEEDS: u64 = 400;
/// How long a family's run lasts: its faults come within the first 9 s, and a failover after them.
const FAMILY_RUN_MS: u64 = 14_000;

/// The first seed of `family` whose run breaks a rule, with what broke.
fn first_violation(
    flaw: Flaw,
    family: impl Fn(&mut Rng) -> Schedule,
) -> Option<(u64, u64, String)> {
    (0..FAMILY_SEEDS).find_map(|seed| {
        let s = Schedule { seed, flaw, run_ms: FAMILY_RUN_MS, ..family(&mut Rng(seed)) };
        World::new(s).run().violation.map(|(t, why)| (seed, t, why))
    })
}

/// A mixed cluster: the primary relocated to the spare node, whose copy then crashes, so the
/// replica is promoted while the source, paused right after its hand-off, may still hold the
/// master's confirmation (a failover the master's silence bound plays no part in).
fn mixed_relocation_then_crash(rng: &mut Rng) -> Schedule {
    let at = at_step(2_000 + rng.below(2_000));
    let crash = at_step(at + 100 + rng.below(1_200));
    Schedule {
        moves: vec![at],
        crashes: vec![(SPARE, crash, 5_000, Crash::Seen)],
        pauses: vec![(OWNER, at + rng.below(1_200), 300 + rng.below(2_500))],
        max_delay: rng.below(60),
        max_publish_delay: rng.below(100),
        source: LeaseSource::Master,
        ..quiet()
    }
}

#[test]
fn the_protocol_breaks_no_rule_in_the_families_its_flaws_break() {
    assert_eq!(first_violation(Flaw::None, cut_off_owner), None);
    assert_eq!(first_violation(Flaw::None, cut_off_owner_and_restarted_replica), None);
    assert_eq!(first_violation(Flaw::None, relocation), None);
    assert_eq!(first_violation(Flaw::None, mixed_relocation_then_crash), None);
}

/// Where the master's confirmations renew leases, a promoted copy waits out the master's window,
/// so safety does not rest on the silent-owner bound's floor: a bound below it still lets no two
/// owners serve (the floor keeps the master from failing over an owner whose confirmation may
/// still run, which only costs a failover that cannot serve yet).
#[test]
fn a_silent_owner_bound_below_its_floor_still_lets_no_two_owners_serve() {
    let at_floor = |rng: &mut Rng| mixed_cut_off_owner(rng, SILENT_OWNER_FAILOVER_MIN_MS);
    assert_eq!(first_violation(Flaw::None, at_floor), None);
    let below = |rng: &mut Rng| mixed_cut_off_owner(rng, SILENT_OWNER_FAILOVER_MIN_MS - 1_000);
    assert_eq!(first_violation(Flaw::None, below), None);
}

#[cfg(feature = "fault-injection")]
mod flawed {
    use super::*;

    fn two_owners(flaw: Flaw, family: impl Fn(&mut Rng) -> Schedule) {
        let found = first_violation(flaw, family);
        assert!(
            found.as_ref().is_some_and(|f| f.2.contains("serve at once")),
            "{flaw:?}: {found:?}"
        );
    }

    #[test]
    fn without_the_promotion_wait_two_owners_serve() {
        two_owners(Flaw::NoPromotionWait, cut_off_owner);
    }

    #[test]
    fn with_the_lease_counted_from_the_answer_two_owners_serve() {
        two_owners(Flaw::LeaseFromAnswer, cut_off_owner);
    }

    #[test]
    fn promoting_a_copy_that_remembers_no_answer_without_a_wait_two_owners_serve() {
        two_owners(Flaw::NoWaitWithoutAnswer, cut_off_owner_and_restarted_replica);
    }

    #[test]
    fn with_the_source_serving_after_its_hand_over_two_owners_serve() {
        two_owners(Flaw::SourceServesAfterHandOver, relocation);
    }

    #[test]
    fn an_owner_serving_on_a_lease_that_ran_out_serves_beside_the_new_one() {
        two_owners(Flaw::IgnoresLease, cut_off_owner);
    }

    #[test]
    fn without_the_masters_window_wait_two_owners_serve() {
        two_owners(Flaw::NoMasterWindowWait, mixed_relocation_then_crash);
        let below = |rng: &mut Rng| mixed_cut_off_owner(rng, SILENT_OWNER_FAILOVER_MIN_MS - 1_000);
        two_owners(Flaw::NoMasterWindowWait, below);
    }
}
