"""Sessions that cannot be guessed and are owner-checked, over HTTP on a real node
(docs/API.md "Sessions"): ids are `<partition>_<32 lowercase hex>` of 128 random bits; a
guessed id, a neighbour of a real one or a part of one names no session (404
`session_not_found_exception`); keep-alive and end take `{"owner"}` in their body, as release
does, and another owner is refused as a wrong owner's release is (404, the session's own
not-found type: nothing tells a stranger the id exists), leaving the session alive; a listing
never shows a session's id."""

from __future__ import annotations

import re

import pytest

from lockclient import assert_error, ok, unique

ID = re.compile(r"(0|[1-9][0-9]*)_([0-9a-f]{32})")
NOT_FOUND = "session_not_found_exception"


@pytest.fixture()
def session(locks):
    """A session of its own owner with one lock held under it; ended afterwards if still open."""
    me, k = unique("sess-owner"), unique("sess-key")
    s = ok(locks.session_create(me, ttl="1m"))
    ok(locks.acquire(k, me, session=s["session"]))
    yield me, s["session"], k
    locks.session_delete(s["session"], me)


def alive(locks, owner, sid, key):
    """The session is still open with its lock: the key is held, the owner's keep-alive works."""
    assert locks.holders(key) == [owner]
    assert ok(locks.session_keepalive(sid, owner))["locks"] == 1


def test_session_ids_are_128_random_bits_in_the_documented_form(locks):
    me = unique("sess-owner")
    ids = [ok(locks.session_create(me, ttl="30s"))["session"] for _ in range(4)]
    try:
        bits = []
        for sid in ids:
            m = ID.fullmatch(sid)
            assert m, f"{sid!r} is not <partition>_<32 lowercase hex digits>"
            bits.append(int(m.group(2), 16))
        assert len(set(ids)) == len(ids)
        # Sequential or counter-built ids share most of their bits; independent 128-bit draws
        # differ in about 64 (the bounds are 6 standard deviations out).
        for a, b in zip(bits, bits[1:]):
            assert 28 <= bin(a ^ b).count("1") <= 100, (hex(a), hex(b))
            assert abs(a - b) > 2 ** 64, "not neighbours"
    finally:
        for sid in ids:
            ok(locks.session_delete(sid, me))


def test_a_guessed_neighbouring_or_partial_id_is_session_not_found(locks, session):
    me, sid, k = session
    partition, hex_id = ID.fullmatch(sid).groups()
    n = int(hex_id, 16)
    guesses = [
        f"{partition}_{(n + 1) % 2 ** 128:032x}",
        f"{partition}_{(n - 1) % 2 ** 128:032x}",
        f"{partition}_{hex_id[:31]}",
        f"{partition}_{hex_id}0",
        f"{partition}_{hex_id.upper()}",
        f"{partition}_{hex_id[:16]}",
        hex_id,
        f"{partition}_{n}",
        "0_1099511627778",
    ]
    for g in guesses:
        assert g != sid
        assert_error(locks.session_keepalive(g, me), 404, NOT_FOUND)
        assert_error(locks.session_delete(g, me), 404, NOT_FOUND)
        assert_error(locks.acquire(unique("guess"), me, session=g), 404, NOT_FOUND)
    alive(locks, me, sid, k)


def test_another_owner_cannot_keep_alive_or_end_a_session_and_it_stays_alive(locks, session):
    me, sid, k = session
    intruder = unique("intruder")
    # A wrong owner's release of a lock: 404, the lock untouched (docs/API.md "Errors").
    assert_error(locks.release(k, intruder), 404, "lock_not_held_exception")
    # A wrong owner's keep-alive, end or acquire with the session: 404, the session untouched;
    # the same answer as for an id that does not exist.
    unknown = assert_error(locks.session_keepalive("0_" + "0" * 32, intruder), 404, NOT_FOUND)
    for r in (locks.session_keepalive(sid, intruder), locks.session_delete(sid, intruder),
              locks.acquire(unique("foreign"), intruder, session=sid)):
        err = assert_error(r, 404, NOT_FOUND, sid)
        assert err["type"] == unknown["type"] and r.status_code == 404
    alive(locks, me, sid, k)
    ended = ok(locks.session_delete(sid, me))
    assert ended["ended"] is True and ended["released"] == [k]
    assert locks.holders(k) == []


def test_keepalive_and_end_without_an_owner_are_400_naming_owner(locks, session):
    me, sid, k = session
    for call in (locks.session_keepalive, locks.session_delete):
        assert_error(call(sid, None), 400, "illegal_argument_exception", "[owner]")
        assert_error(locks.call("POST" if call == locks.session_keepalive else "DELETE",
                                f"/_locks/_session/{sid}" +
                                ("/_keepalive" if call == locks.session_keepalive else ""), {}),
                     400, "illegal_argument_exception", "[owner] is required")
        assert_error(call(sid, me, ttl="5s"), 400, "x_content_parse_exception", "ttl")
    alive(locks, me, sid, k)


def test_a_listing_says_a_lock_is_in_a_session_but_never_shows_the_id(locks, session):
    me, sid, k = session
    listed = locks.list(owner=me)
    (lock,) = ok(listed)["locks"]
    assert (lock["key"], lock["session"]) == (k, True)
    assert sid.split("_")[1] not in listed.text
    assert sid.split("_")[1] not in locks.get(k).text
    other = unique("plain")
    ok(locks.acquire(other, me))
    assert {lk["key"]: lk["session"] for lk in ok(locks.list(owner=me))["locks"]} == {
        k: True, other: False}
    ok(locks.release(other, me))
