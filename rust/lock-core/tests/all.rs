//! The lock core's tests, one binary for all of them: each file of `tests/` is a module here
//! rather than a test crate of its own, so `cargo test` compiles and links the optimised core's
//! generic code once, not 21 times (CONTRIBUTING.md "CI time"). Run one file's tests with
//! `cargo test -p lock-core --test all <file>::`, e.g. `--test all semantics::` (a filter matches
//! anywhere in a test's path: `model::` would also run `election_model::` and the other models).

mod common;

mod acquisitions;
mod audit;
mod election_model;
mod elections;
mod fence_model;
mod groups;
mod limits;
mod listing;
mod lock_delay;
mod model;
mod ownership_model;
mod preempt;
mod regressions;
mod replication;
mod replication_model;
mod semantics;
mod semaphore_model;
mod semaphores;
mod sessions;
mod stress;
mod structure;
mod watches;
