"""Listing held locks a page at a time (docs/API.md "GET /_locks", "GET /_cat/locks"; issue 13):
`size` capped at 1000, the opaque `after` cursor and `next`, order key -> scope -> owner by UTF-8
bytes, `_cat/locks` paging through the X-Locks-Next header, pages of two partitions merged by the
plugin, paging while locks come and go, and bad `size` / `after` refused naming the field.

Real nodes over HTTP. Every test lists under a prefix of its own, so the shared node's other
locks never show."""

from __future__ import annotations

import random

import pytest

from cluster_kit import OneNode
from lockclient import LockClient, assert_error, enc, ok, unique

import node as esnode

NEXT_HEADER = "X-Locks-Next"


def order(lock: dict) -> tuple:
    """The documented listing order: key, then scope, then owner, by UTF-8 bytes."""
    return (lock["key"].encode(), lock["scope"], lock["owner"].encode())


def page_through(locks: LockClient, size: int, **params) -> tuple[list[dict], list[int]]:
    """Every lock of a listing, following `next`; with the size of each page."""
    listed, sizes, after = [], [], None
    for _ in range(10_000):
        page = ok(locks.list(size=size, after=after, **params))
        assert set(page) == {"locks", "next"}, page
        listed += page["locks"]
        sizes.append(len(page["locks"]))
        if page["next"] is None:
            return listed, sizes
        assert isinstance(page["next"], str) and page["next"]
        after = page["next"]
    raise AssertionError("the listing never ended")


def hold_many(locks: LockClient, prefix: str, n: int, owners: int = 7) -> set[tuple]:
    """`n` exclusive locks `prefix-00000`.. in multi-acquire batches of 100 (the default
    locks.max_keys_per_request), one owner per batch; answers their (key, scope, owner)."""
    held = set()
    keys = [f"{prefix}-{i:05d}" for i in range(n)]
    random.Random(13).shuffle(keys)  # granted out of order: the listing sorts, not the arrival
    for b in range(0, n, 100):
        owner = f"{prefix}-o{(b // 100) % owners}"
        batch = keys[b:b + 100]
        ok(locks.multi_acquire(owner, [{"key": k} for k in batch], lease="5m"))
        held |= {(k, "key", owner) for k in batch}
    return held


def test_paging_2500_locks_by_1000_lists_each_once_in_order(locks):
    prefix = unique("lst")
    held = hold_many(locks, prefix, 2500)
    listed, sizes = page_through(locks, 1000, prefix=prefix)
    assert sizes == [1000, 1000, 500], "full pages until the last, whose next is null"
    assert [order(x) for x in listed] == sorted(order(x) for x in listed)
    assert len({order(x) for x in listed}) == len(listed) == 2500, "no lock twice"
    assert {(x["key"], x["scope"], x["owner"]) for x in listed} == held
    one = listed[0]
    assert {"key", "scope", "owner", "mode", "fencing_token", "lease_ms", "held_ms", "node"} <= set(one)


def test_next_of_a_full_page_resumes_inside_a_key_with_several_holders(locks):
    prefix = unique("lsh")
    owners = [f"{prefix}-{c}" for c in "dbca"]
    for o in owners:
        ok(locks.acquire(f"{prefix}/shared", o, mode="shared"))
    # A reentrant acquire is still one lock.
    assert ok(locks.acquire(f"{prefix}/shared", owners[0], mode="shared"))["reentrant"] is True
    ok(locks.acquire(f"/{prefix}/shared", owners[1], mode="shared", scope="tree"))
    listed, sizes = page_through(locks, 3, prefix=prefix)
    assert sizes == [3, 1]
    assert [(x["key"], x["owner"]) for x in listed] == [
        (f"{prefix}/shared", o) for o in sorted(owners)]
    tree = page_through(locks, 3, prefix=f"/{prefix}")[0]
    assert [(x["key"], x["scope"]) for x in tree] == [(f"/{prefix}/shared", "tree")], \
        "a tree lock is listed once, on its node"


def test_paging_while_locks_come_and_go(locks):
    prefix = unique("lsc")
    rng = random.Random(7)
    base = sorted(hold_many(locks, prefix, 600, owners=3))
    stay = set(base[::2])
    going = [e for e in base if e not in stay]
    ever = set(base)
    listed, after, turn = [], None, 0
    while True:
        page = ok(locks.list(prefix=prefix, size=50, after=after))
        listed += page["locks"]
        if page["next"] is None:
            break
        after = page["next"]
        # Between pages: release some of the others, take new keys before and after the cursor.
        for key, _, owner in going[turn * 8:(turn + 1) * 8]:
            ok(locks.release(key, owner))
        for j in range(4):
            k = f"{prefix}-{rng.randrange(600):05d}x{turn}-{j}"
            ok(locks.acquire(k, f"{prefix}-new"))
            ever.add((k, "key", f"{prefix}-new"))
        turn += 1
    keys = [order(x) for x in listed]
    assert keys == sorted(keys) and len(set(keys)) == len(keys), "in order, none twice"
    seen = {(x["key"], x["scope"], x["owner"]) for x in listed}
    assert stay <= seen, f"held throughout but missed: {sorted(stay - seen)[:5]}"
    assert seen <= ever, f"listed but never held: {sorted(seen - ever)[:5]}"


def test_cat_locks_pages_through_the_next_header(locks):
    prefix = unique("lcat")
    held = hold_many(locks, prefix, 1200)
    rows, after, pages = [], None, 0
    while True:
        params = {"prefix": prefix, "size": 500, "format": "json"}
        if after is not None:
            params["after"] = after
        r = locks.cat(**params)
        rows += ok(r)
        pages += 1
        after = r.headers.get(NEXT_HEADER)
        if after is None:
            break
    assert pages == 3
    assert [(x["key"], x["owner"]) for x in rows] == sorted((k, o) for k, _, o in held)
    text = locks.cat(prefix=prefix, size=2, v="true")
    assert text.status_code == 200 and len(text.text.splitlines()) == 3, text.text
    assert text.headers[NEXT_HEADER] == ok(locks.list(prefix=prefix, size=2))["next"], \
        "_cat/locks and GET /_locks page alike"


@pytest.mark.parametrize("size", [0, 1001, 10_000])
def test_size_outside_1_to_1000_is_refused_naming_size(locks, size):
    assert_error(locks.list(size=size), 400, "illegal_argument_exception", "size")
    assert_error(locks.cat(size=size), 400, "illegal_argument_exception", "size")


@pytest.mark.parametrize("after", ["not-a-cursor", "%%%", "eyJrZXkiOiJrIn0",
                                   "eyJrZXkiOiJrIiwic2NvcGUiOiJ0cmVlcyIsIm93bmVyIjoibyJ9"])
def test_a_cursor_this_api_did_not_answer_is_refused_naming_after(locks, after):
    assert_error(locks.list(after=after), 400, "illegal_argument_exception", "after")
    assert_error(locks.cat(after=after), 400, "illegal_argument_exception", "after")


# A node of its own with `locks.partitions: 2` (fresh data folder, so the .locks index is created
# with two shards).
ONE_NODE = OneNode("eslm-it-list2", {"locks.partitions": 2})


def test_own_node_pages_are_merged_in_order(own_node):
    lc = LockClient(own_node.url)
    try:
        prefix = unique("l2p")
        held = set()
        for i in range(240):
            k, o = f"{prefix}-{i:04d}", f"{prefix}-o{i % 5}"
            ok(lc.acquire(k, o))
            held.add((k, "key", o))
            if i % 40 == 0:
                for extra in ("a", "b"):
                    ok(lc.acquire(k + "s", f"{prefix}-{extra}", mode="shared"))
                    held.add((k + "s", "key", f"{prefix}-{extra}"))
        for size in (7, 1000):
            listed, sizes = page_through(lc, size, prefix=prefix)
            assert {x["partition"] for x in listed} == {0, 1}, "both partitions hold some"
            assert [order(x) for x in listed] == sorted(order(x) for x in listed)
            assert {(x["key"], x["scope"], x["owner"]) for x in listed} == held
            assert len(listed) == len(held), "no lock twice"
            assert all(s == size for s in sizes[:-1]) and 0 < sizes[-1] <= size, sizes
        by_owner = page_through(lc, 10, prefix=prefix, owner=f"{prefix}-o3")[0]
        assert {x["key"] for x in by_owner} == {k for k, _, o in held if o == f"{prefix}-o3"}
    finally:
        lc.close()


def test_listing_runs_on_one_thread_of_its_own_at_the_nodes_priority(single_node, locks):
    """docs/ARCHITECTURE.md "Listing": each node lists on the one-thread pool `locks_listing`,
    at the node's own scheduling priority: a listing thread that lowered its priority (nice 10,
    as it once did) raised the acquire tail under continuous listing (bench/RESULTS.md, run 6)."""
    ok(locks.acquire(unique("nice"), "o"))
    for _ in range(3):
        ok(locks.list(size=10))
    stats = ok(locks.http.get(f"{single_node.url}/_nodes/_local/stats/thread_pool"))
    (node,) = stats["nodes"].values()
    pool = node["thread_pool"]["locks_listing"]
    assert pool["threads"] == 1 and pool["completed"] >= 3, pool
    niceness = {tid: int(f[16]) for tid, f in esnode.thread_stats(single_node.server_pid()).items()}
    niced = {tid: n for tid, n in niceness.items() if n != 0}
    assert niced == {}, f"every thread of the node at nice 0: {niced}"


def test_listing_pages_across_scopes_in_the_cores_order(locks):
    """One name held as a plain key, a tree node and a semaphore: listed in the core's scope
    order (key, tree, semaphore: not the alphabetical one), one per page, each page resuming
    after the last, so every cursor (the semaphore's too) is accepted back; _cat/semaphores
    lists the semaphore alone."""
    name = "/" + unique("scopes")
    ok(locks.acquire(name, "o"))
    ok(locks.acquire(name, "o", scope="tree"))
    ok(locks.call("POST", f"/_semaphores/{enc(name)}/_acquire", {"owner": "o", "acquisition": "o", "limit": 2}))
    ok(locks.acquire(f"{name}-z", "o"))
    listed, after = [], None
    for _ in range(10):
        page = ok(locks.list(prefix=name, size=1, after=after))
        listed += [(x["key"], x["scope"]) for x in page["locks"]]
        after = page["next"]
        if after is None:
            break
    assert listed == [(name, "key"), (name, "tree"), (name, "semaphore"), (f"{name}-z", "key")], listed
    cat = locks.call("GET", "/_cat/semaphores", params={"prefix": name, "format": "json"})
    assert [row["name"] for row in ok(cat)] == [name]
