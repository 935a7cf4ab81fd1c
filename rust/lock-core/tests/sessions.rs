//! Session ids as credentials: the caller's 128 bits, looked up whole, usable only by the
//! session's owner, and the same after a hand-over or a promotion (docs/LOCK_CORE.md, "Leases,
//! sessions, epochs").

use crate::common;

use common::{check, grant, req, sid, table, table_with};
use lock_core::{
    AcquireRequest, ErrorCode, KeyInfoRequest, LockError, LockTable, Mode, SessionId, SessionInfo,
    Standby,
};

const X: Mode = Mode::Exclusive;

fn not_found(r: Result<impl std::fmt::Debug, LockError>, what: &str) {
    let e = r.expect_err(what);
    assert_eq!(e.code(), ErrorCode::SessionNotFound, "{what}: {e}");
}

/// A session of `owner` with one lock (`key`) held under it.
fn session_with_lock(t: &mut LockTable, owner: &str, key: &str, n: u64) -> SessionInfo {
    let s = t.create_session(owner, Some(1_000), sid(n), 0).expect("session");
    let r = AcquireRequest { session: Some(s.session.clone()), ..req(key, owner, X) };
    grant(t, &r, 0);
    s
}

#[test]
fn a_session_is_named_by_the_callers_128_bits_in_32_lowercase_hex_digits() {
    let mut t = table();
    let bits = 0x6f1c_2a9e_4b7d_0351_8ce2_f09a_7b64_d1e5_u128;
    let a = t.create_session("o", None, SessionId::from_u128(bits), 0).expect("a");
    assert_eq!(a.session, "6f1c2a9e4b7d03518ce2f09a7b64d1e5");
    let b = t.create_session("o", None, SessionId::from_u128(1), 0).expect("b");
    assert_eq!(b.session, "00000000000000000000000000000001", "leading zeros are kept");
    assert_ne!(a.session, b.session);
    assert_eq!(SessionId::parse(&a.session).map(SessionId::as_u128), Some(bits));
    let again = t.create_session("p", None, SessionId::from_u128(bits), 0).expect_err("in use");
    assert_eq!(again.field(), Some("session"), "{again}");
    assert_eq!(t.stats().sessions, 2, "the refused one left nothing behind");
    check(&t);
}

#[test]
fn a_forged_neighbouring_or_partial_id_names_no_session() {
    let mut t = table();
    let s = session_with_lock(&mut t, "o", "k", 1);
    let bits = SessionId::parse(&s.session).expect("hex").as_u128();
    let forged = [
        SessionId::from_u128(bits.wrapping_add(1)).to_string(),
        SessionId::from_u128(bits.wrapping_sub(1)).to_string(),
        SessionId::from_u128(bits ^ 1 << 127).to_string(),
        s.session[..31].to_owned(),
        s.session[1..].to_owned(),
        format!("{}0", s.session),
        format!("0{}", s.session),
        s.session.to_uppercase(),
        format!(" {}", &s.session[1..]),
        bits.to_string(),
        String::new(),
    ];
    for f in &forged {
        assert_ne!(f, &s.session);
        not_found(t.keepalive(f, "o", 1), f);
        not_found(t.end_session(f, "o", 1), f);
        let r = AcquireRequest { session: Some(f.clone()), ..req("j", "o", X) };
        not_found(t.acquire(&r, 1), f);
    }
    assert_eq!(t.held_locks(), 1, "nothing ended the real session");
    t.keepalive(&s.session, "o", 2).expect("the real id still works");
    check(&t);
}

#[test]
fn another_owner_can_neither_keep_alive_nor_end_nor_lock_under_a_session() {
    let mut t = table();
    let s = session_with_lock(&mut t, "o", "k", 1);
    not_found(t.keepalive(&s.session, "intruder", 900), "keep-alive by another owner");
    not_found(t.end_session(&s.session, "intruder", 900), "end by another owner");
    let r = AcquireRequest { session: Some(s.session.clone()), ..req("j", "intruder", X) };
    not_found(t.acquire(&r, 900), "acquire by another owner");
    // The same answer as a wrong owner's release of a lock: nothing tells an id exists.
    let unknown = t.keepalive(&sid(99).to_string(), "intruder", 900).expect_err("unknown");
    let foreign = t.keepalive(&s.session, "intruder", 900).expect_err("foreign");
    assert_eq!(unknown.code(), foreign.code());
    assert_eq!(t.held_locks(), 1, "the session and its lock are untouched");
    assert_eq!(
        t.key_info(&KeyInfoRequest::new("k"), 900).expect("info").holders[0].lease_ms,
        100,
        "not extended"
    );
    let bad = t.keepalive(&s.session, "", 900).expect_err("bad owner");
    assert_eq!(bad.field(), Some("owner"), "{bad}");
    // Its own owner still may; without a keep-alive it would have expired at 1,000.
    t.keepalive(&s.session, "o", 950).expect("owner's keep-alive");
    t.advance(1_500);
    assert_eq!(t.held_locks(), 1);
    let ended = t.end_session(&s.session, "o", 1_500).expect("owner's end");
    assert_eq!((ended.session, ended.released), (s.session, vec!["k".to_owned()]));
    check(&t);
}

#[test]
fn a_session_keeps_its_id_through_export_and_import() {
    let mut t = LockTable::new(3).expect("t");
    let s = session_with_lock(&mut t, "o", "k", 7);
    let json = serde_json::to_string(&t.export()).expect("json");
    assert!(json.contains(&format!("\"session\":\"{}\"", s.session)), "{json}");
    let snap = serde_json::from_str(&json).expect("json back");
    let mut n = LockTable::import(&snap, 4, *t.config(), 100).expect("import");
    assert_eq!(n.list_page(&Default::default()).locks[0].session.as_deref(), Some(&*s.session));
    not_found(n.keepalive(&s.session, "intruder", 100), "still owner-checked");
    let kept = n.keepalive(&s.session, "o", 100).expect("the same id on the new owner");
    assert_eq!(kept.session, s.session);
    n.end_session(&s.session, "o", 100).expect("and ends there");
    assert_eq!(n.held_locks(), 0);
    // A snapshot whose session is not a 128-bit id is refused, not half imported.
    let mut bad = t.export();
    bad.sessions[0].session = "1099511627778".into();
    bad.locks[0].session = Some("1099511627778".into());
    let e = LockTable::import(&bad, 4, *t.config(), 0).expect_err("old id");
    assert_eq!(e.field(), Some("snapshot"), "{e}");
}

#[test]
fn a_session_keeps_its_id_on_a_standby_and_after_promotion() {
    let mut t = table_with(|c| c.max_lease_ms = 600_000);
    t.set_change_tracking(true);
    let mut standby = Standby::from_full(&t.export_full(), 0);
    let s = session_with_lock(&mut t, "o", "k", 3);
    let d = t.take_changes(10).expect("tracking");
    assert_eq!(d.sessions[0].session, s.session, "the delta carries the id itself");
    standby.apply(&d, 10).expect("apply");
    t.keepalive(&s.session, "o", 20).expect("keep-alive");
    standby.apply(&t.take_changes(20).expect("tracking"), 20).expect("apply");
    let snap = standby.snapshot(30);
    assert_eq!(snap.sessions[0].session, s.session);
    let mut p = LockTable::import(&snap, t.epoch() + 1, *t.config(), 30).expect("promote");
    let r = AcquireRequest { session: Some(s.session.clone()), ..req("j", "o", X) };
    assert_eq!(grant(&mut p, &r, 30).session.as_deref(), Some(&*s.session));
    not_found(p.end_session(&s.session, "intruder", 30), "owner-checked after promotion");
    assert_eq!(p.end_session(&s.session, "o", 30).expect("end").released.len(), 2);
    check(&p);
}
