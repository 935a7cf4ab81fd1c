//! Arc-backed handles: how a Rust object is named by a Java `long` (or a C `uint64_t`).
//!
//! A handle is a number from a process-wide registry, never a raw pointer: 0 is never issued
//! and always refused, a destroyed or made-up handle is refused with an error instead of being
//! dereferenced, and destroying twice is a no-op. Each call clones the `Arc` out of the
//! registry, so an object stays alive for the call even if another thread destroys its handle
//! meanwhile; it is dropped when the last call using it returns.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use once_cell::sync::Lazy;
use parking_lot::RwLock;

/// Why a handle could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandleError {
    /// The handle is 0.
    Null,
    /// The handle was never issued or has been destroyed.
    Unknown(u64),
}

impl std::fmt::Display for HandleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandleError::Null => write!(f, "native handle is 0"),
            HandleError::Unknown(h) => write!(f, "native handle [{h}] is closed or unknown"),
        }
    }
}

/// A registry of objects of one type, addressed by handle.
pub struct Registry<T> {
    next: AtomicU64,
    live: RwLock<HashMap<u64, Arc<T>>>,
}

impl<T> Registry<T> {
    /// An empty registry; the first handle issued is 1.
    pub fn new() -> Self {
        Registry { next: AtomicU64::new(1), live: RwLock::new(HashMap::new()) }
    }

    /// Registers `value` and returns its handle (never 0).
    pub fn insert(&self, value: T) -> u64 {
        let handle = self.next.fetch_add(1, Ordering::Relaxed);
        self.live.write().insert(handle, Arc::new(value));
        handle
    }

    /// The object behind `handle`, kept alive by the returned `Arc`.
    pub fn get(&self, handle: u64) -> Result<Arc<T>, HandleError> {
        if handle == 0 {
            return Err(HandleError::Null);
        }
        self.live.read().get(&handle).cloned().ok_or(HandleError::Unknown(handle))
    }

    /// Forgets `handle`. Returns whether it was live; a second call is a harmless `false`.
    pub fn remove(&self, handle: u64) -> bool {
        self.live.write().remove(&handle).is_some()
    }

    /// Number of live handles (diagnostics and tests).
    pub fn len(&self) -> usize {
        self.live.read().len()
    }

    /// Whether no handle is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The registry of node cores, shared by the JNI and the C entry points.
pub static CORES: Lazy<Registry<crate::node::NodeCore>> = Lazy::new(Registry::new);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_refused_destroy_is_idempotent_and_arc_outlives_destroy() {
        let reg: Registry<String> = Registry::new();
        assert_eq!(reg.get(0).expect_err("zero"), HandleError::Null);
        let h = reg.insert("x".to_owned());
        assert_ne!(h, 0);
        let kept = reg.get(h).expect("live");
        assert!(reg.remove(h));
        assert!(!reg.remove(h), "second destroy is a no-op");
        assert_eq!(reg.get(h).expect_err("gone"), HandleError::Unknown(h));
        assert_eq!(*kept, "x", "an in-flight call keeps its object alive");
        assert!(reg.is_empty());
    }
}
