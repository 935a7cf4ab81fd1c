//! The bridge between the Elasticsearch plugin (Java) and the lock core (Rust).
//!
//! Layout:
//!
//! | module | role |
//! |---|---|
//! | [`handle`] | Arc-backed `long` handles for objects that Java holds |
//! | [`node`] | [`node::NodeCore`]: what one Elasticsearch node owns (partitions, clock) |
//! | [`ops`] | every operation as JSON in → JSON out, shared by JNI and the C ABI; the op numbers |
//! | [`jni_api`] | the `Java_...` entry points, each run inside `jni_api::run_jni` |
//! | [`c_api`] | the `extern "C"` entry points described by `include/eslm.h` |
//! | [`logging`] | a `tracing` layer that queues Rust log lines for the node's logger |
//!
//! Rule of the boundary: nothing unwinds across it. Every entry point catches panics and turns
//! errors into a Java exception (JNI) or a status code (C).

#![deny(clippy::unwrap_used)]
#![warn(clippy::too_many_lines)]

pub mod c_api;
pub mod handle;
pub mod jni_api;
pub mod logging;
pub mod node;
pub mod ops;

/// Version of the bridge, reported at plugin start and in diagnostics.
pub const BRIDGE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Turns a caught panic payload into a message.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}
