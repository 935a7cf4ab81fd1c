//! The bridge vocabulary in the committed C header `include/eslm.h` — what the Java plugin's
//! tests read — is the Rust one: every `ESLM_OP_*` is an op [`Op::from_code`] dispatches, and
//! the `LM_STATUS_*` numbers are [`ErrorCode`]'s. (`header_is_current` proves the header is
//! what cbindgen writes from the sources; this test proves the sources agree with each other
//! and pins the numbers Java relies on.)

use std::path::PathBuf;

use eslm::ops::Op;
use lock_core::ownership::bounds;
use lock_core::ErrorCode;

/// `(NAME, number)` of every `<prefix>NAME = number,` line of the committed header.
fn constants(prefix: &str) -> Vec<(String, i32)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include/eslm.h");
    let header = std::fs::read_to_string(path).expect("include/eslm.h is readable");
    header
        .lines()
        .filter_map(|line| {
            let (name, number) = line.trim().strip_prefix(prefix)?.split_once(" = ")?;
            let number = number.strip_suffix(',')?.parse().expect("a number");
            Some((name.to_owned(), number))
        })
        .collect()
}

/// `AcquireMany` -> `ACQUIRE_MANY`, as cbindgen renames variants.
fn upper_snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[test]
fn every_op_in_the_header_is_dispatched_under_its_name() {
    let header = constants("ESLM_OP_");
    assert_eq!(header.len(), Op::all().count(), "{header:?}");
    for (name, number) in &header {
        let op = Op::from_code(*number).unwrap_or_else(|_| panic!("ESLM_OP_{name} not dispatched"));
        assert_eq!(op as i32, *number);
        assert_eq!(&upper_snake(&format!("{op:?}")), name);
    }
    assert_eq!(header.first(), Some(&("ACQUIRE".to_owned(), 1)));
    assert_eq!(header.last(), Some(&("TELEMETRY".to_owned(), 37)));
    assert!(Op::from_code(0).is_err() && Op::from_code(38).is_err() && Op::from_code(-1).is_err());
}

#[test]
fn statuses_in_the_header_are_the_core_error_codes() {
    let codes = [
        ErrorCode::Ok,
        ErrorCode::InvalidArgument,
        ErrorCode::Conflict,
        ErrorCode::NotHeld,
        ErrorCode::WaitTimeout,
        ErrorCode::Deadlock,
        ErrorCode::SessionNotFound,
        ErrorCode::LimitExceeded,
        ErrorCode::PartitionUnavailable,
        ErrorCode::Cancelled,
        ErrorCode::CorePanic,
        ErrorCode::SemaphoreLimitMismatch,
        ErrorCode::GroupNotFound,
        ErrorCode::GroupExists,
        ErrorCode::GroupNotEmpty,
        ErrorCode::MemberExists,
        ErrorCode::Internal,
    ];
    let expected: Vec<(String, i32)> =
        codes.iter().map(|c| (upper_snake(&format!("{c:?}")), *c as i32)).collect();
    assert_eq!(constants("LM_STATUS_"), expected);
    // The numbers Java maps to exceptions; never renumbered.
    let pinned: Vec<(&str, i32)> = vec![
        ("OK", 0),
        ("INVALID_ARGUMENT", 1),
        ("CONFLICT", 2),
        ("NOT_HELD", 3),
        ("WAIT_TIMEOUT", 4),
        ("DEADLOCK", 5),
        ("SESSION_NOT_FOUND", 6),
        ("LIMIT_EXCEEDED", 7),
        ("PARTITION_UNAVAILABLE", 8),
        ("CANCELLED", 9),
        ("CORE_PANIC", 10),
        ("SEMAPHORE_LIMIT_MISMATCH", 11),
        ("GROUP_NOT_FOUND", 12),
        ("GROUP_EXISTS", 13),
        ("GROUP_NOT_EMPTY", 14),
        ("MEMBER_EXISTS", 15),
        ("INTERNAL", 99),
    ];
    let got: Vec<(&str, i32)> = expected.iter().map(|(n, c)| (n.as_str(), *c)).collect();
    assert_eq!(got, pinned);
}

#[test]
fn the_header_defines_no_constant_but_all_partitions_the_formats_the_limits_and_the_bounds() {
    // cbindgen picks up lock-core's public associated constants too (see cbindgen.toml).
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include/eslm.h");
    let header = std::fs::read_to_string(path).expect("include/eslm.h is readable");
    let defines: Vec<&str> = header
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .filter(|d| *d != "ESLM_H")
        .collect();
    assert_eq!(
        defines,
        [
            "ALL_PARTITIONS -1".to_owned(),
            format!("ESLM_STATE_FORMAT {}", lock_core::STATE_FORMAT),
            format!("ESLM_OLDEST_STATE_FORMAT {}", lock_core::OLDEST_STATE_FORMAT),
            format!("ESLM_ACQUISITION_STATE_FORMAT {}", lock_core::STATE_FORMAT_ACQUISITION),
            format!("ESLM_GROUPS_STATE_FORMAT {}", lock_core::STATE_FORMAT_GROUPS),
            format!("ESLM_MAX_KEY_BYTES {}", lock_core::MAX_KEY_BYTES),
            format!("ESLM_MAX_OWNER_BYTES {}", lock_core::MAX_OWNER_BYTES),
            format!("ESLM_MAX_SEMAPHORE_LIMIT {}", lock_core::MAX_SEMAPHORE_LIMIT),
            format!("ESLM_MAX_LOCK_DELAY_MS {}", lock_core::MAX_LOCK_DELAY_MS),
            format!("ESLM_MAX_VALUE_BYTES {}", lock_core::MAX_ELECTION_VALUE_BYTES),
            format!("ESLM_LIST_DEFAULT_SIZE {}", lock_core::ListFilter::DEFAULT_SIZE),
            format!("ESLM_LIST_MAX_SIZE {}", lock_core::ListFilter::MAX_SIZE),
            format!("ESLM_BOUND_COPY_LEASE_MS {}", bounds::COPY_LEASE_MS),
            format!("ESLM_BOUND_HEARTBEAT_INTERVAL_MS {}", bounds::HEARTBEAT_INTERVAL_MS),
            format!("ESLM_BOUND_OWNERSHIP_WINDOW_MS {}", bounds::OWNERSHIP_WINDOW_MS),
            format!("ESLM_BOUND_OWNER_CHECK_INTERVAL_MS {}", bounds::OWNER_CHECK_INTERVAL_MS),
            format!("ESLM_BOUND_CLOCK_RATE_ERROR_PPM {}", bounds::CLOCK_RATE_ERROR_PPM),
            format!("ESLM_BOUND_SILENT_LOOK_INTERVAL_MS {}", bounds::SILENT_LOOK_INTERVAL_MS),
            format!("ESLM_BOUND_OWN_PAUSE_MS {}", bounds::OWN_PAUSE_MS),
            format!("ESLM_BOUND_ASK_AGAIN_MS {}", bounds::ASK_AGAIN_MS),
            format!(
                "ESLM_BOUND_SILENT_OWNER_FAILOVER_DEFAULT_MS {}",
                bounds::SILENT_OWNER_FAILOVER_DEFAULT_MS
            ),
            format!(
                "ESLM_BOUND_SILENT_OWNER_FAILOVER_MIN_MS {}",
                bounds::SILENT_OWNER_FAILOVER_MIN_MS
            ),
            format!("ESLM_BOUND_PROMOTION_WAIT_MS {}", bounds::PROMOTION_WAIT_US.div_ceil(1_000)),
            format!("ESLM_BOUND_SYNCED_COPY_WAIT_MS {}", bounds::SYNCED_COPY_WAIT_MS),
            format!("ESLM_BOUND_SYNCED_COPY_MS_PER_MB {}", bounds::SYNCED_COPY_MS_PER_MB),
            format!("ESLM_BOUND_CATCHING_UP_COPY_WAIT_MS {}", bounds::CATCHING_UP_COPY_WAIT_MS),
            format!("ESLM_BOUND_CLOSE_REQUEST_TIMEOUT_MS {}", bounds::CLOSE_REQUEST_TIMEOUT_MS),
        ],
        "exclude the others in cbindgen.toml"
    );
}
