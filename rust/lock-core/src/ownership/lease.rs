//! An owner's right to serve one partition: its lease, renewed by its copies' acknowledgements or
//! by the elected master's confirmations, always counted from the **send** of the message whose
//! answer renewed it (docs/ARCHITECTURE.md "Silent owners", "Cut-off owners").

use super::bounds::{COPY_LEASE_MS, HEARTBEAT_INTERVAL_MS, OWNERSHIP_WINDOW_MS};
use super::Micros;

/// What renews an owner's lease: its copies (every node runs a plugin that answers heartbeats,
/// replicated partitions) or the elected master (a cluster being upgraded from an older plugin,
/// or `locks.durability: memory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LeaseSource {
    #[default]
    Copies,
    Master,
}

impl LeaseSource {
    /// How long one renewal lasts, in microseconds.
    pub fn lease_us(self) -> Micros {
        match self {
            LeaseSource::Copies => COPY_LEASE_MS * 1_000,
            LeaseSource::Master => OWNERSHIP_WINDOW_MS * 1_000,
        }
    }

    /// When a refused request may ask again: with copies, at the next heartbeat, which may renew
    /// the lease (a copy answering again, or just failed); with the master, on the next cluster
    /// state (0: no hint).
    pub fn retry_after_ms(self) -> u64 {
        match self {
            LeaseSource::Copies => HEARTBEAT_INTERVAL_MS,
            LeaseSource::Master => 0,
        }
    }
}

/// Whether this node may serve a partition now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Its lease is current: it may grant, expire, hand to a waiter and answer reads.
    Serve,
    /// It does not serve the partition (never opened here, closed, handed over).
    NotServed,
    /// It serves the partition but its lease is not current: it changes and shows nothing.
    NoLease { source: LeaseSource, retry_after_ms: u64 },
}

impl Verdict {
    /// Whether the node may serve.
    pub fn serves(self) -> bool {
        self == Verdict::Serve
    }
}

/// One served partition's lease, on the owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct OwnerLease {
    pub(super) epoch: u64,
    /// The send of the last batch or heartbeat every in-sync copy took, in this epoch.
    by_copies: Option<Micros>,
    /// The send of the last question the elected master answered "yours", in this epoch.
    by_master: Option<Micros>,
}

impl OwnerLease {
    /// A partition opened in `epoch`: confirmed at `now` when it was opened from the cluster state
    /// the master just published, else (reopened from this node's own, maybe stale, state) not
    /// until the master or the copies renew it.
    pub(super) fn opened(epoch: u64, confirmed: bool, now: Micros) -> Self {
        OwnerLease { epoch, by_copies: None, by_master: confirmed.then_some(now) }
    }

    pub(super) fn renew(&mut self, source: LeaseSource, epoch: u64, sent: Micros) {
        if epoch != self.epoch {
            return; // an answer about an epoch this node no longer serves in
        }
        let at = match source {
            LeaseSource::Copies => &mut self.by_copies,
            LeaseSource::Master => &mut self.by_master,
        };
        *at = Some(at.map_or(sent, |before| before.max(sent)));
    }

    pub(super) fn verdict(&self, source: LeaseSource, now: Micros) -> Verdict {
        let renewed = match source {
            LeaseSource::Copies => self.by_copies,
            LeaseSource::Master => self.by_master,
        };
        if renewed.is_some_and(|sent| now.saturating_sub(sent) < source.lease_us()) {
            Verdict::Serve
        } else {
            Verdict::NoLease { source, retry_after_ms: source.retry_after_ms() }
        }
    }

    /// Microseconds of lease left at `now` (0: none).
    pub(super) fn left_us(&self, source: LeaseSource, now: Micros) -> Micros {
        let renewed = match source {
            LeaseSource::Copies => self.by_copies,
            LeaseSource::Master => self.by_master,
        };
        renewed.map_or(0, |sent| (sent + source.lease_us()).saturating_sub(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_runs_from_the_send_and_ends_after_the_copy_lease() {
        let mut lease = OwnerLease::opened(3, true, 0);
        assert!(!lease.verdict(LeaseSource::Copies, 0).serves(), "no copy has answered yet");
        lease.renew(LeaseSource::Copies, 3, 1_000);
        assert!(lease.verdict(LeaseSource::Copies, 1_000 + 799_999).serves());
        assert_eq!(
            lease.verdict(LeaseSource::Copies, 1_000 + 800_000),
            Verdict::NoLease { source: LeaseSource::Copies, retry_after_ms: 200 }
        );
        assert_eq!(lease.left_us(LeaseSource::Copies, 401_000), 400_000);
    }

    #[test]
    fn an_older_send_or_another_epoch_renews_nothing() {
        let mut lease = OwnerLease::opened(3, false, 0);
        lease.renew(LeaseSource::Copies, 3, 500_000);
        lease.renew(LeaseSource::Copies, 3, 100_000);
        lease.renew(LeaseSource::Copies, 4, 900_000);
        assert!(lease.verdict(LeaseSource::Copies, 1_299_999).serves());
        assert!(!lease.verdict(LeaseSource::Copies, 1_300_000).serves());
    }

    #[test]
    fn the_master_confirms_for_its_window_and_an_unconfirmed_opening_serves_nothing() {
        let confirmed = OwnerLease::opened(1, true, 10);
        assert!(confirmed.verdict(LeaseSource::Master, 10 + 2_999_999).serves());
        assert!(!confirmed.verdict(LeaseSource::Master, 10 + 3_000_000).serves());
        let reopened = OwnerLease::opened(1, false, 10);
        assert!(!reopened.verdict(LeaseSource::Master, 11).serves());
    }
}
