//! Every bound of the ownership protocol, and the safe minimum of those that are settings: the one
//! place these numbers are written. The bridge emits them into the C header (`ESLM_*_MS`), the
//! plugin's `org.eslm.bridge.NativeBounds` repeats them and `BridgeVocabularyTest` holds the two
//! together; the model tests (`tests/ownership_model.rs`) read them from here. Why each has the
//! value it has: docs/ARCHITECTURE.md "Silent owners".

use super::Micros;

/// How long an owner of a replicated partition may serve after the **send** of a batch (or
/// heartbeat) that every in-sync copy acknowledged. A promoted copy waits it out, on its own clock
/// and with the clock-rate error, counted from its last acknowledgement.
pub const COPY_LEASE_MS: u64 = 800;

/// How often an owner with nothing to replicate sends its copies an empty batch, a heartbeat, so
/// that their answers renew its lease: four renewals a lease, so a lost one or two cost nothing.
pub const HEARTBEAT_INTERVAL_MS: u64 = 200;

/// How long a confirmation by the elected master stays good where copies renew no lease (a
/// cluster being upgraded from an older plugin, `locks.durability: memory`): counted from the
/// send of the question the master answered "yours".
pub const OWNERSHIP_WINDOW_MS: u64 = 3_000;

/// How often an owner asks the elected master to confirm it: a sixth of the window, so a few lost
/// answers do not stop granting; every question is also what the master's watch hears.
pub const OWNER_CHECK_INTERVAL_MS: u64 = 500;

/// The rate error allowed between two nodes' monotonic clocks, in parts per million: 1%, twenty
/// times the 500 ppm by which NTP may slew a clock.
pub const CLOCK_RATE_ERROR_PPM: u64 = 10_000;

/// How often the elected master looks for owners that went silent.
pub const SILENT_LOOK_INTERVAL_MS: u64 = 250;

/// A gap between two of the master's looks longer than this means the master itself was paused or
/// starved: every silence it measured includes its own, so each starts again.
pub const OWN_PAUSE_MS: u64 = 1_000;

/// How often the master asks again for the failure of a primary it condemned while its cluster
/// state still shows that primary.
pub const ASK_AGAIN_MS: u64 = 5_000;

/// The default of `locks.failover.silent_owner`: how long the master hears nothing from an owner
/// before it fails that primary copy.
pub const SILENT_OWNER_FAILOVER_DEFAULT_MS: u64 = 3_500;

/// The shortest `locks.failover.silent_owner`: longer than [`OWNERSHIP_WINDOW_MS`] on the owner's
/// clock can last on the master's, rounded up to 100 ms, so that the master fails over no owner
/// whose confirmation may still run. Safety does not rest on it (a promoted copy waits out that
/// window itself, [`MASTER_PROMOTION_WAIT_US`]): a shorter bound would only fail owners over that
/// were briefly unheard, for a promotion that could not serve sooner anyway.
pub const SILENT_OWNER_FAILOVER_MIN_MS: u64 =
    on_any_clock_ms(OWNERSHIP_WINDOW_MS).div_ceil(100) * 100;

/// How long a promoted copy waits after its last acknowledgement before it serves:
/// [`COPY_LEASE_MS`] on the old owner's clock, as long as it can last on this one's.
pub const PROMOTION_WAIT_US: Micros = on_any_clock_us(COPY_LEASE_MS * 1_000);

/// How long a promoted copy waits from its promotion where the master's confirmations renew
/// owners' leases (a cluster being upgraded from an older plugin): [`OWNERSHIP_WINDOW_MS`] on the
/// old owner's clock, as long as it can last on this one's. Every confirmation the old owner may
/// still hold was answered before the cluster state that promoted this copy (the master answers
/// "yours" only to the owner its state shows), so that window has ended once this wait has.
pub const MASTER_PROMOTION_WAIT_US: Micros = on_any_clock_us(OWNERSHIP_WINDOW_MS * 1_000);

/// How long a copy that had the whole state from its owner may take to answer a batch before the
/// owner has it failed (plus [`SYNCED_COPY_MS_PER_MB`] a megabyte of batch): longer than a 1 s GC
/// pause, shorter than the copy lease plus a heartbeat, so a silent copy costs the owner's lease
/// about once.
pub const SYNCED_COPY_WAIT_MS: u64 = 1_200;

/// What [`SYNCED_COPY_WAIT_MS`] grows by for each megabyte a batch carries.
pub const SYNCED_COPY_MS_PER_MB: u64 = 100;

/// How long a copy that may first have to catch up (a recovering one, which fetches its owner's
/// whole table before it answers) may take to answer a batch.
pub const CATCHING_UP_COPY_WAIT_MS: u64 = 5_000;

/// How long a promoted copy's request that a live old owner close the partition may take; the
/// promotion waits for it or for [`PROMOTION_WAIT_US`], whichever ends first.
pub const CLOSE_REQUEST_TIMEOUT_MS: u64 = 500;

/// `ms` on one node's clock as it can last on another's: `ms × (1 + e) / (1 − e)`, rounded up.
pub const fn on_any_clock_ms(ms: u64) -> u64 {
    (ms * (1_000_000 + CLOCK_RATE_ERROR_PPM)).div_ceil(1_000_000 - CLOCK_RATE_ERROR_PPM)
}

/// [`on_any_clock_ms`] in microseconds.
pub const fn on_any_clock_us(us: Micros) -> Micros {
    (us * (1_000_000 + CLOCK_RATE_ERROR_PPM)).div_ceil(1_000_000 - CLOCK_RATE_ERROR_PPM)
}

// What the argument of docs/ARCHITECTURE.md "Silent owners" needs of the numbers, checked when the
// crate compiles: a lease is renewed several times before it runs out; the master's watch looks
// more often than its own-pause gap; a failover that follows the master's confirmations comes
// after the window on any clock; a promotion waits at least the copy lease on any clock.
const _: () = {
    assert!(HEARTBEAT_INTERVAL_MS * 3 < COPY_LEASE_MS);
    assert!(OWNER_CHECK_INTERVAL_MS * 3 < OWNERSHIP_WINDOW_MS);
    assert!(SILENT_LOOK_INTERVAL_MS * 2 < OWN_PAUSE_MS);
    assert!(SILENT_OWNER_FAILOVER_MIN_MS * 1_000 > on_any_clock_us(OWNERSHIP_WINDOW_MS * 1_000));
    assert!(SILENT_OWNER_FAILOVER_DEFAULT_MS >= SILENT_OWNER_FAILOVER_MIN_MS);
    assert!(PROMOTION_WAIT_US > COPY_LEASE_MS * 1_000);
    assert!(CLOCK_RATE_ERROR_PPM < 100_000);
};
