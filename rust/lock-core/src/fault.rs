//! Faults on purpose, for tests only: compiled with the cargo feature `fault-injection`, which no
//! release build turns on (the Makefile's `rust-test` and the Maven profile `-Pfault-injection`
//! do), so neither the check nor the magic key is in the library a node normally loads.
//!
//! An acquire of [`PANIC_KEY`] panics inside the partition's mutex, after the table has started
//! to change (its clock moved on, its counters counted the acquire): what a bug in the core
//! would do. docs/RELIABILITY.md ("A panic in the core") says what the node does then.
//!
//! A standby skips, without a word, a delta that grants [`SKIP_DELTA_KEY`]: its seq does not
//! move, as if the batch had been acknowledged and lost. The next delta then shows the gap;
//! docs/RELIABILITY.md ("A copy acknowledges only what it applied") says what the copy does.

/// The key whose acquire panics.
pub const PANIC_KEY: &str = "eslm-fault-injection-panic";

/// Panics when `key` is [`PANIC_KEY`]; called by an acquire while it changes the table.
pub(crate) fn on_acquire(key: &str) {
    if key == PANIC_KEY {
        panic!("fault injection: acquire of [{PANIC_KEY}] panics inside the partition's mutex");
    }
}

/// The key whose grant a standby's apply skips.
pub const SKIP_DELTA_KEY: &str = "eslm-fault-injection-skip-delta";

/// Whether a standby skips `delta`: it grants [`SKIP_DELTA_KEY`].
pub(crate) fn skips(delta: &crate::PartitionDelta) -> bool {
    delta.locks.iter().any(|l| l.key == SKIP_DELTA_KEY)
}
