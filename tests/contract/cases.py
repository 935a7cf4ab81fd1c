"""The client contract (issue 49 item 3): what every client of this project must do, written once.
Each case drives one client's driver through the protocol of PROTOCOL.md and checks the outcome
on the nodes over plain HTTP; its docstring says what it expects. tests/integration/test_contract.py
runs every case against every driver (Python, Java, Node.js, Go) on one three-node cluster, each
case in a driver process and clients of its own, with keys of its own.

A case never weakens itself for a client: where a client lacks a behaviour, the case fails for that
client and says why."""

from __future__ import annotations

import dataclasses
from typing import Callable

from runner import Context, QUICK_S

# The longest any single command of a case is awaited beyond what it is asked to wait.
MARGIN_S = 20.0


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[Context], None]
    doc: str
    disruptive: bool  # breaks a node: run after the others, on a cluster that is whole again


CASES: dict[str, Case] = {}


def case(disruptive: bool = False):
    def register(fn: Callable[[Context], None]) -> Callable[[Context], None]:
        CASES[fn.__name__] = Case(fn.__name__, fn, " ".join((fn.__doc__ or "").split()), disruptive)
        return fn
    return register


# --- answers --------------------------------------------------------------------------------------

def ok(answer: dict, what: str) -> dict:
    assert answer["ok"] is True, f"{what}: expected ok, got {answer}"
    return answer


def refused(answer: dict, kinds: str | tuple[str, ...], what: str) -> str:
    """The answer is an error of one of `kinds`; answers the kind."""
    kinds = (kinds,) if isinstance(kinds, str) else kinds
    assert answer["ok"] is False, f"{what}: expected an error of kind {' or '.join(kinds)}, got {answer}"
    kind = answer["error"]["kind"]
    assert kind in kinds, f"{what}: expected kind {' or '.join(kinds)}, got {answer}"
    return kind


def token(answer: dict, what: str) -> int:
    ok(answer, what)
    t = answer.get("token")
    assert isinstance(t, int) and not isinstance(t, bool) and t > 0, f"{what}: no fencing token in {answer}"
    return t


# --- the cases ------------------------------------------------------------------------------------

@case()
def protocol_errors(ctx: Context):
    """The driver itself: an unknown command, a command naming a client never opened, one without
    its key, and one naming an unknown handle each answer ok false with kind invalid_argument, and
    the driver goes on answering (a lock through it is then granted)."""
    d, k = ctx.driver, ctx.key()
    refused(d.call("no_such_command"), "invalid_argument", "an unknown command")
    refused(d.call("lock", client="never-opened", handle="h", key=k), "invalid_argument", "a client never opened")
    ok(d.call("open", client="a"), "open")
    refused(d.call("lock", client="a", handle="h"), "invalid_argument", "a lock without its key")
    refused(d.call("unlock", handle="no-such-handle"), "invalid_argument", "an unknown handle")
    t = token(d.call("lock", client="a", handle="h", key=k), "a lock after the errors")
    assert ctx.nodes.tokens(k) == [t]
    ok(d.call("unlock", handle="h"), "unlock")


@case()
def blocks_by_default(ctx: Context):
    """Blocking by default: a lock with neither timeout_ms nor try on a key another client holds
    waits (the server shows it queued and it stays unanswered) until the holder unlocks; then it is
    granted with a larger fencing token and the server shows it as the only holder."""
    d, k = ctx.driver, ctx.key()
    ok(d.call("open", client="a"), "open a")
    ok(d.call("open", client="b"), "open b")
    first = token(d.call("lock", client="a", handle="first", key=k), "the first lock")
    second = d.send("lock", run_async=True, client="b", handle="second", key=k)
    ctx.nodes.await_waiters(k, 1, QUICK_S)
    assert not second.done(), f"the second lock was answered while the first held the key: {second.answer()}"
    assert ctx.nodes.tokens(k) == [first]
    ok(d.call("unlock", handle="first"), "unlock of the first")
    t2 = token(second.answer(QUICK_S), "the waiting lock, once the first unlocked")
    assert t2 > first, f"the second grant's token {t2} is not above the first's {first}"
    assert ctx.nodes.tokens(k) == [t2]
    ok(d.call("unlock", handle="second"), "unlock of the second")
    ctx.nodes.await_free(k, 5)


@case()
def try_lock_conflict(ctx: Context):
    """try: a busy key answers conflict at once (no wait: within 3 s on a loaded machine), whether the holder is
    another client or another handle of the same client (every acquire is an acquisition of its
    own); the holder keeps its grant; once it unlocks, a try is granted with a larger token."""
    d, k = ctx.driver, ctx.key()
    ok(d.call("open", client="a"), "open a")
    ok(d.call("open", client="b"), "open b")
    held = token(d.call("lock", client="a", handle="held", key=k), "the holder's lock")
    for client in ("b", "a"):
        attempt = d.send("lock", client=client, handle=f"try-{client}", key=k, **{"try": True})
        refused(attempt.answer(), "conflict", f"a try on the busy key through client {client}")
        assert attempt.elapsed_ms < 3000, f"the try through {client} took {attempt.elapsed_ms:.0f} ms: it waited"
    assert ctx.nodes.tokens(k) == [held], "a refused try changed the holder"
    ok(d.call("unlock", handle="held"), "unlock")
    later = token(d.call("lock", client="b", handle="later", key=k, **{"try": True}), "a try on the free key")
    assert later > held
    ok(d.call("unlock", handle="later"), "unlock")


@case()
def wait_timeout(ctx: Context):
    """timeout_ms: a lock on a key held by another client answers wait_timeout once its timeout
    ran out, not before (at least timeout_ms after it was sent) and not long after (within 5 s);
    nothing of it stays queued on the server, and the holder is untouched."""
    d, k = ctx.driver, ctx.key()
    ok(d.call("open", client="a"), "open a")
    ok(d.call("open", client="b"), "open b")
    held = token(d.call("lock", client="a", handle="held", key=k), "the holder's lock")
    timeout_ms = 1500
    waiting = d.send("lock", client="b", handle="waiting", key=k, timeout_ms=timeout_ms)
    refused(waiting.answer(timeout_ms / 1000 + MARGIN_S), "wait_timeout", "a lock whose timeout ran out")
    assert waiting.elapsed_ms >= timeout_ms, f"wait_timeout after {waiting.elapsed_ms:.0f} ms, before the {timeout_ms} ms timeout"
    assert waiting.elapsed_ms < timeout_ms + 5000, f"wait_timeout only after {waiting.elapsed_ms:.0f} ms"
    assert ctx.nodes.waiters(k) == [], "the timed-out request is still queued"
    assert ctx.nodes.tokens(k) == [held]
    ok(d.call("unlock", handle="held"), "unlock")


@case()
def reentrance(ctx: Context):
    """Reentrance of one acquisition: lock_again of a held handle answers the same token (the
    acquisition asked again, not a new grant, which would take a newer token and end the first);
    the server still shows exactly that one holder afterwards (the nested acquire ended nothing);
    one unlock of the handle frees the key."""
    d, k = ctx.driver, ctx.key()
    ok(d.call("open", client="a"), "open")
    t = token(d.call("lock", client="a", handle="h", key=k), "lock")
    again = token(d.call("lock_again", handle="h"), "lock_again")
    assert again == t, f"lock_again answered token {again}, the lock holds {t}"
    assert ctx.nodes.tokens(k) == [t], "after lock_again the server should show the one grant"
    ok(d.call("unlock", handle="h"), "unlock")
    assert ctx.nodes.holders(k) == [], "one unlock after lock_again left the key held"


@case()
def loss_signalled_within_lease(ctx: Context):
    """Loss detected and signalled within the lease: lost answers false while the lock is held;
    after an administrator's POST /_locks/{key}/_force_release, await_lost answers lost true within
    the lease (6 s); lost then answers true. Another owner takes the key over HTTP, and the lost
    handle's unlock answers lost (the client knows, and sends nothing that could end the newer
    grant): the newer holder keeps the key."""
    d, k, lease_ms = ctx.driver, ctx.key(), 6000
    ok(d.call("open", client="a"), "open")
    t = token(d.call("lock", client="a", handle="h", key=k, lease_ms=lease_ms), "lock")
    assert ok(d.call("lost", handle="h"), "lost")["lost"] is False, "lost before anything happened"
    evicted = ctx.nodes.force_release(k)
    assert [h["fencing_token"] for h in evicted["released"]] == [t], evicted
    seen = ok(d.call("await_lost", handle="h", within_ms=lease_ms, timeout=lease_ms / 1000 + MARGIN_S), "await_lost")
    assert seen["lost"] is True, f"the force-released lock was not signalled lost within its {lease_ms} ms lease"
    assert 0 <= seen["after_ms"] <= lease_ms, seen
    assert ok(d.call("lost", handle="h"), "lost")["lost"] is True
    newer = ctx.nodes.take(k, ctx.owner("newer"))
    assert newer > t
    refused(d.call("unlock", handle="h"), "lost", "unlock of a lock the client knows lost")
    assert ctx.nodes.holders(k) == [(ctx.owner("newer"), newer)], "the lost handle's unlock ended the newer grant"
    ctx.nodes.release(k, ctx.owner("newer"))


@case()
def late_release_ends_nothing_newer(ctx: Context):
    """A late release ends nothing newer: a lock with keepalive false and a 1.5 s lease runs out
    (awaited until the server shows the key free); another owner takes the key over HTTP under a
    larger token; the late unlock answers not_held (the server found no such grant) or lost (the
    client had seen its lease end), never ok, and the newer holder still holds with its token."""
    d, k = ctx.driver, ctx.key()
    ok(d.call("open", client="a"), "open")
    t = token(d.call("lock", client="a", handle="h", key=k, lease_ms=1500, keepalive=False), "lock, keepalive false")
    ctx.nodes.await_free(k, 1.5 + MARGIN_S)
    newer = ctx.nodes.take(k, ctx.owner("newer"))
    assert newer > t
    print("the late unlock answered", refused(d.call("unlock", handle="h"), ("not_held", "lost"), "the late unlock"))
    assert ctx.nodes.holders(k) == [(ctx.owner("newer"), newer)], "the late unlock ended the newer grant"
    ctx.nodes.release(k, ctx.owner("newer"))


@case()
def paused_holder_ends_nothing_newer(ctx: Context):
    """A paused holder (the driver's process stopped with SIGSTOP, as a long GC pause or a frozen
    VM, while it holds a lock with its watchdog on and a 2 s lease): the server lets the lease run
    out and another owner takes the key over HTTP. Resumed (SIGCONT), the client signals the loss
    (await_lost: lost within a lease) and its unlock answers lost or not_held; the newer holder
    still holds."""
    d, k = ctx.driver, ctx.key()
    ok(d.call("open", client="a"), "open")
    t = token(d.call("lock", client="a", handle="h", key=k, lease_ms=2000), "lock")
    d.pause()
    try:
        ctx.nodes.await_free(k, 2 + MARGIN_S)
        newer = ctx.nodes.take(k, ctx.owner("newer"))
    finally:
        d.resume()
    assert newer > t
    seen = ok(d.call("await_lost", handle="h", within_ms=2000, timeout=2 + MARGIN_S), "await_lost after the pause")
    assert seen["lost"] is True, "the client resumed without signalling that its lock ran out"
    print("the paused holder's unlock answered",
          refused(d.call("unlock", handle="h"), ("lost", "not_held"), "the paused holder's unlock"))
    assert ctx.nodes.holders(k) == [(ctx.owner("newer"), newer)], "the paused holder's unlock ended the newer grant"
    ctx.nodes.release(k, ctx.owner("newer"))


@case()
def fencing_refuses_stale_holder(ctx: Context):
    """Fencing refused for a stale holder: handle old (keepalive false, 1.5 s lease) runs out (the
    server shows the key free); handle new of the same client gets a larger token and writes the
    document (fenced_write ok); old's fenced_write is then refused with stale_token (Elasticsearch
    refused the token), or lost (the client knew its lock gone and sent nothing); the document keeps
    new's content."""
    d, k, index = ctx.driver, ctx.key(), ctx.index()
    ok(d.call("open", client="a"), "open")
    old = token(d.call("lock", client="a", handle="old", key=k, lease_ms=1500, keepalive=False), "old's lock")
    ctx.nodes.await_free(k, 1.5 + MARGIN_S)
    new = token(d.call("lock", client="a", handle="new", key=k), "new's lock")
    assert new > old
    ok(d.call("fenced_write", handle="new", index=index, doc_id="doc", doc={"writer": "new", "token": new}),
       "the current holder's fenced write")
    kind = refused(d.call("fenced_write", handle="old", index=index, doc_id="doc", doc={"writer": "old", "token": old}),
                   ("stale_token", "lost"), "the stale holder's fenced write")
    print("the stale holder's fenced write answered", kind)
    source = ctx.nodes.document(index, "doc")["_source"]
    assert source == {"writer": "new", "token": new}, f"the stale holder's write landed: {source}"
    ok(d.call("unlock", handle="new"), "unlock")
    ctx.nodes.delete_index(index)


@case()
def fenced_update_keeps_every_acknowledged_change(ctx: Context):
    """Fenced changes (docs/API.md "Fenced changes") under two holders interleaved: handle first
    (keepalive false, 1.5 s lease) increments a counter and appends to a list through fenced_update,
    answered with the document as it now stands (n 1) and without eslm_fence; its lease runs out
    (the server shows the key free); handle second, of another client, takes the key with a larger
    token and changes the document twice the same way (n 2, then 3); first's fenced_update is then
    refused with stale_token (the plugin refused its token) or lost (the client knew its lock gone
    and sent nothing). The document holds exactly the acknowledged changes (n 3, the log first,
    second, second) and its fence is second's token."""
    d, k, index = ctx.driver, ctx.key(), ctx.index()
    ok(d.call("open", client="a"), "open a")
    ok(d.call("open", client="b"), "open b")

    def update(handle: str) -> dict:
        return d.call("fenced_update", handle=handle, index=index, doc_id="counter",
                      ops=[{"op": "inc", "field": "n", "value": 1}, {"op": "append", "field": "log", "value": handle}])

    first = token(d.call("lock", client="a", handle="first", key=k, lease_ms=1500, keepalive=False), "first's lock")
    assert ok(update("first"), "first's fenced_update")["doc"] == {"n": 1, "log": ["first"]}, \
        "first's fenced_update should answer the document as it now stands, without eslm_fence"
    ctx.nodes.await_free(k, 1.5 + MARGIN_S)
    second = token(d.call("lock", client="b", handle="second", key=k), "second's lock")
    assert second > first
    for n in (2, 3):
        doc = ok(update("second"), f"second's fenced_update {n - 1}")["doc"]
        assert doc == {"n": n, "log": ["first"] + ["second"] * (n - 1)}, f"second's fenced_update {n - 1} answered {doc}"
    print("the stale holder's fenced_update answered",
          refused(update("first"), ("stale_token", "lost"), "the stale holder's fenced_update"))
    source = ctx.nodes.document(index, "counter")["_source"]
    fence = source.pop("eslm_fence")
    assert source == {"n": 3, "log": ["first", "second", "second"]}, \
        f"the document should hold exactly the three acknowledged changes: {source}"
    assert fence["token"] == second and fence["key"] == k, f"the fence should be second's token: {fence}"
    ok(d.call("unlock", handle="second"), "unlock")
    ctx.nodes.delete_index(index)


@case()
def close_releases(ctx: Context):
    """close releases what the client holds: with two locks held (60 s leases, so nothing runs out
    by itself during the case), both keys are free on the server as soon as close has answered; a
    lock through the closed client answers closed; another client gets both keys with a try."""
    d, k1, k2 = ctx.driver, ctx.key("one"), ctx.key("two")
    ok(d.call("open", client="a"), "open a")
    ok(d.call("open", client="b"), "open b")
    t1 = token(d.call("lock", client="a", handle="one", key=k1, lease_ms=60000), "lock one")
    t2 = token(d.call("lock", client="a", handle="two", key=k2, lease_ms=60000), "lock two")
    ok(d.call("close", client="a"), "close")
    left = {k: ctx.nodes.holders(k) for k in (k1, k2)}
    assert left == {k1: [], k2: []}, f"still held on the server after close answered: {left} (tokens {t1}, {t2})"
    refused(d.call("lock", client="a", handle="after", key=ctx.key("after"), **{"try": True}), "closed",
            "a lock through the closed client")
    for k, name in ((k1, "b1"), (k2, "b2")):
        token(d.call("lock", client="b", handle=name, key=k, **{"try": True}), f"another client's try on {k}")
        ok(d.call("unlock", handle=name), "unlock")


@case()
def unlock_twice_ends_nothing(ctx: Context):
    """As the Python client does (HeldLock.release of a released handle): an unlock of a handle
    already unlocked answers ok and has no effect: another owner that took the key in between
    keeps it."""
    d, k = ctx.driver, ctx.key()
    ok(d.call("open", client="a"), "open")
    t = token(d.call("lock", client="a", handle="h", key=k), "lock")
    ok(d.call("unlock", handle="h"), "unlock")
    newer = ctx.nodes.take(k, ctx.owner("newer"))
    assert newer > t
    ok(d.call("unlock", handle="h"), "the second unlock")
    assert ctx.nodes.holders(k) == [(ctx.owner("newer"), newer)], "the second unlock ended another owner's grant"
    ctx.nodes.release(k, ctx.owner("newer"))


@case()
def renew_extends_lease(ctx: Context):
    """renew with lease_ms replaces the lease on the server under the same token: a lock acquired
    with a 30 s lease shows more than 30 s left right after a renew for 120 s (the watchdog's first
    renewal is 10 s away). After a force-release, renew answers not_held (or lost, when the client
    already saw the loss)."""
    d, k = ctx.driver, ctx.key()
    ok(d.call("open", client="a"), "open")
    t = token(d.call("lock", client="a", handle="h", key=k, lease_ms=30000), "lock")
    ok(d.call("renew", handle="h", lease_ms=120000), "renew")
    (holder,) = ctx.nodes.state(k)["holders"]
    assert holder["fencing_token"] == t, holder
    assert holder["lease_ms"] > 30000, f"after a renew for 120 s the server has {holder['lease_ms']} ms left"
    ctx.nodes.force_release(k)
    print("renew after the force-release answered",
          refused(d.call("renew", handle="h"), ("not_held", "lost"), "renew of a force-released lock"))
    assert ctx.nodes.holders(k) == []


@case()
def shared_locks_coexist(ctx: Context):
    """mode shared: two clients' shared locks on one key are both granted (the server shows two
    holders); an exclusive try answers conflict; once both unlock, it is granted."""
    d, k = ctx.driver, ctx.key()
    for c in ("a", "b", "c"):
        ok(d.call("open", client=c), f"open {c}")
    ta = token(d.call("lock", client="a", handle="ra", key=k, mode="shared", timeout_ms=5000), "a's shared lock")
    tb = token(d.call("lock", client="b", handle="rb", key=k, mode="shared", timeout_ms=5000), "b's shared lock")
    assert sorted(ctx.nodes.tokens(k)) == sorted([ta, tb])
    refused(d.call("lock", client="c", handle="w", key=k, **{"try": True}), "conflict", "an exclusive try among readers")
    ok(d.call("unlock", handle="ra"), "unlock a")
    ok(d.call("unlock", handle="rb"), "unlock b")
    tw = token(d.call("lock", client="c", handle="w", key=k, **{"try": True}), "the exclusive try once free")
    assert tw > max(ta, tb)
    ok(d.call("unlock", handle="w"), "unlock")


@case()
def bad_arguments_refused(ctx: Context):
    """Bad arguments are refused with invalid_argument, by the client before sending or by the
    server's 400: a lease of a day (beyond locks.lease.max, 10 min by default) and an empty key.
    Nothing is held afterwards."""
    d, k = ctx.driver, ctx.key()
    ok(d.call("open", client="a"), "open")
    refused(d.call("lock", client="a", handle="long", key=k, lease_ms=86_400_000), "invalid_argument",
            "a lease of a day")
    refused(d.call("lock", client="a", handle="empty", key=""), "invalid_argument", "an empty key")
    assert ctx.nodes.holders(k) == []


@case(disruptive=True)
def retry_503_through_another_node(ctx: Context):
    """The 503 retried through another node: a client opened with all three nodes' URLs, the
    owner of the key's partition first. Its lock (timeout 30 s) on a key another owner holds is
    queued (the server shows it) when that owner node is killed with kill -9; right after, four
    more locks on free keys are sent at once. The holder releases through a surviving node (sent
    again while the partition fails over). Every lock must be granted within its timeout through
    the surviving nodes, the queued one with a token above the holder's. Then six locks and unlocks
    one after another, each within its timeout: a client that spreads its requests over its nodes
    sends some of them to the dead one and must go on through the others. The killed node is
    started again after the case."""
    d, k, nodes, cluster = ctx.driver, ctx.key("queued"), ctx.nodes, ctx.cluster
    blocker = ctx.owner("blocker")
    held = nodes.take(k, blocker, lease="60s")
    owner = cluster.owner_of_key(k)
    urls = [owner.url] + [n.url for n in cluster.ready_nodes() if n is not owner]
    ok(d.call("open", client="a", urls=urls, retry_for_ms=30000), "open with every node")
    timeout_ms = 30000
    queued = d.send("lock", run_async=True, client="a", handle="queued", key=k, timeout_ms=timeout_ms)
    nodes.await_waiters(k, 1, QUICK_S)
    cluster.kill(owner)
    nodes.urls = [n.url for n in cluster.ready_nodes()]
    fresh = [d.send("lock", run_async=True, client="a", handle=f"fresh-{i}", key=ctx.key(f"fresh{i}"),
                    timeout_ms=timeout_ms) for i in range(4)]
    r = nodes.until_served("POST", f"/_locks/{k}/_release", {"owner": blocker, "acquisition": blocker})
    assert r.status_code == 200, f"the holder's release after the failover: {r.status_code} {r.text}"
    failures = []
    for p in [queued, *fresh]:
        answer = p.answer(timeout_ms / 1000 + MARGIN_S)
        print(f"{p.request['handle']} after the kill of {owner.name}: {answer} in {p.elapsed_ms:.0f} ms")
        if not answer["ok"]:
            failures.append(f"{p.request['handle']}: {answer['error']} after {p.elapsed_ms:.0f} ms")
        elif p.elapsed_ms > timeout_ms:
            failures.append(f"{p.request['handle']}: granted only after {p.elapsed_ms:.0f} ms")
    assert not failures, "locks across the owner's kill -9: " + "; ".join(failures)
    assert queued.answer()["token"] > held
    for i in range(6):
        after = d.send("lock", client="a", handle=f"after-{i}", key=ctx.key(f"after{i}"), timeout_ms=timeout_ms)
        token(after.answer(timeout_ms / 1000 + MARGIN_S), f"lock {i} of those sent one after another after the kill")
        assert after.elapsed_ms <= timeout_ms, f"lock {i} after the kill granted only after {after.elapsed_ms:.0f} ms"
        ok(d.call("unlock", handle=f"after-{i}", timeout=timeout_ms / 1000 + MARGIN_S), f"unlock {i} after the kill")
    for p in [queued, *fresh]:
        ok(d.call("unlock", handle=p.request["handle"]), f"unlock {p.request['handle']} after the failover")
    assert nodes.holders(k) == []
