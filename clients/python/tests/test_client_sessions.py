"""Sessions through the sync client: kept alive past their ttl, their locks released with them,
and a session lost from outside signalled like a lost lock (docs/API.md "Sessions")."""

from __future__ import annotations

import time

import pytest

import eslm
from lockclient import unique


def test_a_session_keeps_its_locks_past_its_ttl_and_releases_them_at_exit(locks, other, holders):
    key = unique()
    with locks.session(ttl="2s") as session:
        held = session.lock(key).__enter__()  # released with the session, not by a block
        assert held.session is session and held.lease_ms <= 2000
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            assert other.try_lock(key) is None, "the session expired under a running block"
            time.sleep(0.25)
        assert not session.lost and not held.lost
    assert session.ended and held.released and holders(key) == []


def test_locks_taken_under_a_session_are_released_by_their_blocks(locks, holders):
    key = unique()
    with locks.session(ttl="10s") as session:
        with session.lock(key) as held:
            assert holders(key) == [session.owner] and held.owner == session.owner
        assert held.released and holders(key) == []
        assert session.try_lock(key) is not None


def test_a_session_ended_from_outside_is_lost_with_its_locks(es, locks, other, noticed):
    key = unique()
    lost_sessions, lost_locks = [], []
    with pytest.raises(eslm.SessionLost) as lost:
        with locks.session(ttl="3s", on_lost=lost_sessions.append) as session:
            with session.lock(key, on_lost=lost_locks.append) as held:
                es.perform_request("DELETE", f"/_locks/_session/{session.id}", body={"owner": session.owner},
                                   headers={"content-type": "application/json", "accept": "application/json"})
                in_block = noticed(lambda: session.lost, 10), held.lost, list(lost_sessions), list(lost_locks)
                taken = other.try_lock(key)
    assert in_block == (True, True, [session], [held]), "the keep-alive noticed the loss in the block"
    assert taken is not None
    assert lost.value is session.lost_error
    assert isinstance(lost.value.__context__, eslm.LockLost), "the lock's block ended with LockLost"
    assert isinstance(lost.value.__cause__, eslm.SessionNotFound)


def test_acquiring_under_an_ended_session_is_refused(locks):
    with locks.session() as session:
        pass
    with pytest.raises(eslm.SessionNotFound) as gone:
        session.acquire(unique())
    assert gone.value.status == 404 and gone.value.type == "session_not_found_exception"
