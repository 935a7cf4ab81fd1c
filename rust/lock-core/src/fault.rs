//! Faults on purpose, for tests only: compiled with the cargo feature `fault-injection`, which no
//! release build turns on (the Makefile's `rust-test` and the Maven profile `-Pfault-injection`
//! do), so neither the check nor the magic key is in the library a node normally loads.
//!
//! An acquire of [`PANIC_KEY`] panics inside the partition's mutex, after the table has started
//! to change (its clock moved on, its counters counted the acquire): what a bug in the core
//! would do. docs/RELIABILITY.md ("A panic in the core") says what the node does then.

/// The key whose acquire panics.
pub const PANIC_KEY: &str = "eslm-fault-injection-panic";

/// Panics when `key` is [`PANIC_KEY`]; called by an acquire while it changes the table.
pub(crate) fn on_acquire(key: &str) {
    if key == PANIC_KEY {
        panic!("fault injection: acquire of [{PANIC_KEY}] panics inside the partition's mutex");
    }
}
