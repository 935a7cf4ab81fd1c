//! The format of the state documents: what a partition's state is written as when it leaves
//! the table — the replication batches ([`crate::PartitionDelta`], [`crate::FullState`]), the
//! hand-over ([`crate::PartitionSnapshot`]) — and so what the state log on disk holds
//! (docs/ARCHITECTURE.md, "Formats and versions").
//!
//! One number for all of them, defined here: the plugin reads it through the bridge's header
//! (`ESLM_STATE_FORMAT`, `ESLM_OLDEST_STATE_FORMAT` in `rust/lock-jni/include/eslm.h`, held
//! equal to these by an assertion that fails lock-jni's build).
//!
//! | format | what changed |
//! |---|---|
//! | 1 | everything written before formats were numbered: documents without a `format` member |
//! | 2 | a `format` member, the first of every `PartitionDelta` and `PartitionSnapshot`; their records refuse members they do not know |
//! | 3 | a semaphore's holders may hold more permits than its `limit` (a limit lowered while held, docs/LOCK_CORE.md "Semaphores"): a reader of format 2 refuses such a snapshot, so a limit goes below the permits held only when every node reads format 3; locks carry their `lock_delay_ms` and snapshots and deltas the lock-delays running (`delays`, docs/LOCK_CORE.md "Lock-delay"), so no lock is granted with a delay before every node reads format 3 |
//! | 4 | locks carry the digest of the `acquisition` that holds them (docs/API.md "Acquisitions"); a writer for format 3 leaves it out, and a lock without one is named by an acquisition only together with its token |
//! | 5 | groups (docs/LOCK_CORE.md "Groups"): snapshots carry the partition's `groups`, deltas the whole list when it changed, and locks may be of scope `group`; no group is created before every node reads format 5, so a writer for format 4 has none to leave out |
//!
//! The rules: a writer that adds or changes a member raises [`STATE_FORMAT`]; a reader takes
//! every format from [`OLDEST_STATE_FORMAT`] to [`STATE_FORMAT`] and refuses a newer one by its
//! number ([`check_state_format`]) before it looks at members, so a newer writer's member is
//! reported as a newer format, never dropped; a node writes the oldest format its peers read
//! (format 1 leaves the member out, see [`is_format_1`]).

use crate::error::LockError;

/// The format this build writes (the newest it reads).
pub const STATE_FORMAT: u32 = 5;

/// The first format whose readers import a semaphore whose holders exceed its lowered limit:
/// before every node reads it, a limit is never lowered below the permits held.
pub const STATE_FORMAT_OVER_LIMIT: u32 = 3;

/// The first format that carries lock-delays (a lock's `lock_delay_ms`, the delays running):
/// before every node reads it, no lock is granted with a delay.
pub const STATE_FORMAT_LOCK_DELAY: u32 = 3;

/// The first format that carries a lock's acquisition digest.
pub const STATE_FORMAT_ACQUISITION: u32 = 4;

/// The first format that carries groups: before every node reads it, no group is created.
pub const STATE_FORMAT_GROUPS: u32 = 5;

/// The oldest format this build reads: documents without a `format` member.
pub const OLDEST_STATE_FORMAT: u32 = 1;

/// [`STATE_FORMAT`], as a function (serde's default for a format a caller may name).
pub fn current_state_format() -> u32 {
    STATE_FORMAT
}

/// The format of a document without a `format` member (serde's default for it).
pub fn format_1() -> u32 {
    1
}

/// Whether a document is written in format 1, which leaves the member out (serde's
/// `skip_serializing_if`): what a node writes while a peer of the plugin before formats is a
/// member of its cluster.
#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
pub fn is_format_1(format: &u32) -> bool {
    *format == 1
}

/// Checks that a document of `format` can be read by this build.
///
/// # Errors
///
/// [`LockError::InvalidArgument`] on the field `format`, naming both numbers, for a format newer
/// than [`STATE_FORMAT`] (a newer plugin wrote it) or older than [`OLDEST_STATE_FORMAT`].
pub fn check_state_format(format: u32) -> Result<(), LockError> {
    if format > STATE_FORMAT {
        return Err(LockError::invalid(
            "format",
            format!(
                "state of format [{format}] is newer than this build's [{STATE_FORMAT}]: a newer \
                 version of the plugin wrote it"
            ),
        ));
    }
    if format < OLDEST_STATE_FORMAT {
        return Err(LockError::invalid(
            "format",
            format!(
                "state of format [{format}] is older than the oldest this build reads \
                 [{OLDEST_STATE_FORMAT}]"
            ),
        ));
    }
    Ok(())
}

/// Checks a format a caller asks a document to be written in: one this build can write.
///
/// # Errors
///
/// [`LockError::InvalidArgument`] on `format` outside [`OLDEST_STATE_FORMAT`]..=[`STATE_FORMAT`].
pub fn check_write_format(format: u32) -> Result<(), LockError> {
    if (OLDEST_STATE_FORMAT..=STATE_FORMAT).contains(&format) {
        Ok(())
    } else {
        Err(LockError::invalid(
            "format",
            format!(
                "cannot write state of format [{format}]: this build writes \
                 [{OLDEST_STATE_FORMAT}] to [{STATE_FORMAT}]"
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_format_is_refused_naming_both_numbers() {
        let e = check_state_format(STATE_FORMAT + 1).expect_err("newer");
        let text = e.to_string();
        assert!(text.contains(&format!("[{}]", STATE_FORMAT + 1)), "{text}");
        assert!(text.contains(&format!("[{STATE_FORMAT}]")), "{text}");
        assert!(check_state_format(0).is_err());
    }

    #[test]
    fn the_previous_and_the_current_format_are_read_and_written() {
        for f in OLDEST_STATE_FORMAT..=STATE_FORMAT {
            check_state_format(f).expect("readable");
            check_write_format(f).expect("writable");
        }
        assert!(check_write_format(STATE_FORMAT + 1).is_err());
    }
}
