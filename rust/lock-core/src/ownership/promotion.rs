//! A copy's side of the protocol: when it last answered its owner, and how long it must wait,
//! once promoted, before it serves (docs/ARCHITECTURE.md "Silent owners", "Who takes over").
//!
//! The old owner's lease runs [`COPY_LEASE_MS`](super::bounds::COPY_LEASE_MS) on its clock from
//! the send of a batch this copy answered, and every answer comes after that send. So once this
//! copy runs in the new term (it refuses every batch of the old one), the old lease has ended
//! [`PROMOTION_WAIT_US`] after its last answer on this copy's clock, whatever the delays and the
//! pauses: a pause only makes the old lease end earlier than this clock assumes. Where the master's
//! confirmations renew leases instead, the old owner may still hold one for the master's window,
//! so the promotion also waits that out from its own moment ([`MASTER_PROMOTION_WAIT_US`]).

use std::collections::BTreeMap;

use super::bounds::{MASTER_PROMOTION_WAIT_US, PROMOTION_WAIT_US};
use super::Micros;

/// The answers of one node's copies, per partition.
#[derive(Debug, Clone, Default)]
pub(super) struct CopyAnswers {
    /// The last answer this copy gave an owner of the partition, in any term. After a restart
    /// (nothing known), the first promotion counts from its own moment, which is after every
    /// answer the copy gave before.
    last: BTreeMap<u32, Micros>,
    /// When the copy's promotion under way was first asked about (cleared once it serves).
    promoted: BTreeMap<u32, Micros>,
}

impl CopyAnswers {
    pub(super) fn answered(&mut self, partition: u32, now: Micros) {
        let at = self.last.entry(partition).or_insert(now);
        *at = (*at).max(now);
    }

    /// How long the promoted copy of `partition` waits from `now` before it serves; 0 when the
    /// old owner said it closed the partition (it serves no more). A copy with no answer on record
    /// waits the whole bound from now, and records `now` so that asking again does not extend it.
    pub(super) fn promotion_wait(&mut self, partition: u32, now: Micros) -> Micros {
        let last = *self.last.entry(partition).or_insert(now);
        (last + PROMOTION_WAIT_US).saturating_sub(now)
    }

    /// How long from `now` a promotion waits where the master's confirmations renew leases:
    /// [`MASTER_PROMOTION_WAIT_US`] from its first moment.
    pub(super) fn master_wait(&mut self, partition: u32, now: Micros) -> Micros {
        let since = *self.promoted.entry(partition).or_insert(now);
        (since + MASTER_PROMOTION_WAIT_US).saturating_sub(now)
    }

    /// The copy's promotion ended: it serves the partition (a later promotion waits anew).
    pub(super) fn served(&mut self, partition: u32) {
        self.promoted.remove(&partition);
    }

    /// What a flawed build answers for a copy with no answer on record (see `Flaw`).
    pub(super) fn knows(&self, partition: u32) -> bool {
        self.last.contains_key(&partition)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_promotion_waits_out_the_old_lease_from_the_last_answer() {
        let mut copies = CopyAnswers::default();
        copies.answered(0, 1_000);
        copies.answered(0, 500); // an answer stamped out of order does not move it back
        assert_eq!(copies.promotion_wait(0, 1_000), PROMOTION_WAIT_US);
        assert_eq!(copies.promotion_wait(0, 301_000), PROMOTION_WAIT_US - 300_000);
        assert_eq!(copies.promotion_wait(0, 1_000 + PROMOTION_WAIT_US), 0);
    }

    #[test]
    fn with_the_masters_confirmations_a_promotion_waits_the_window_from_its_first_moment() {
        let mut copies = CopyAnswers::default();
        assert_eq!(copies.master_wait(0, 100), MASTER_PROMOTION_WAIT_US);
        assert_eq!(copies.master_wait(0, 1_100), MASTER_PROMOTION_WAIT_US - 1_000);
        copies.served(0);
        assert_eq!(
            copies.master_wait(0, 5_000_000),
            MASTER_PROMOTION_WAIT_US,
            "a later promotion waits anew"
        );
    }

    #[test]
    fn a_copy_that_never_answered_waits_the_whole_bound_once() {
        let mut copies = CopyAnswers::default();
        assert!(!copies.knows(7));
        assert_eq!(copies.promotion_wait(7, 50), PROMOTION_WAIT_US);
        assert_eq!(copies.promotion_wait(7, 50 + 100_000), PROMOTION_WAIT_US - 100_000);
    }
}
