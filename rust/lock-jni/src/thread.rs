//! The calling thread's scheduling priority, for the plugin's own background threads.
//!
//! Listing a million locks is CPU work that a lock request must never queue behind
//! (docs/ARCHITECTURE.md, "Listing"). The plugin lists on a pool of its own and has each of its
//! threads lower its own priority once: on Linux, a thread is a task with its own nice value,
//! and any thread may raise its own (lower its priority) without privileges. Elasticsearch's
//! threads are never touched.

/// Makes the calling thread at least `niceness` nice (0..=19). Answers its niceness afterwards,
/// or `None` where a thread's priority cannot be set on its own (not Linux) or the call failed;
/// the caller runs on either way.
pub fn lower_current_thread_priority(niceness: i32) -> Option<i32> {
    let niceness = niceness.clamp(0, 19);
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain syscalls on the calling thread's own id, and its own errno.
        unsafe {
            let tid = libc::gettid() as libc::id_t;
            *libc::__errno_location() = 0;
            let current = libc::getpriority(libc::PRIO_PROCESS, tid);
            if current == -1 && *libc::__errno_location() != 0 {
                return None;
            }
            if current >= niceness {
                return Some(current); // already as nice: never raise a priority
            }
            if libc::setpriority(libc::PRIO_PROCESS, tid, niceness) != 0 {
                return None;
            }
            Some(niceness)
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = niceness;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_lowers_its_own_priority_only() {
        let lowered = std::thread::spawn(|| {
            let answer = lower_current_thread_priority(7);
            // SAFETY: reads the calling thread's own priority.
            let now =
                unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
            (answer, now)
        })
        .join()
        .expect("the thread ran");
        assert_eq!(lowered, (Some(7), 7));
        // SAFETY: as above, on this (other) thread.
        let here = unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
        assert_ne!(here, 7, "only the calling thread is affected");
    }
}
