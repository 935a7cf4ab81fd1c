"""Issue 28, least-privilege roles: a node with Elasticsearch security on (HTTP basic
authentication, no TLS, loopback only: scripts/node.py `Security`) runs with the example roles
of examples/security/roles.yml as its `config/roles.yml`, and one file-realm user per role made
by `bin/elasticsearch-users useradd`. Each role may do what docs/OPERATIONS.md says it may and
gets 403 `security_exception` naming the action for the rest; a request without credentials
gets 401. Force-release is a privilege of its own: the role an application needs
(`cluster:admin/locks/*`) does not grant it."""

from __future__ import annotations

from pathlib import Path

import pytest

import node as esnode
from cluster_kit import OneNode
from lockclient import LockClient, assert_error, enc, ok, unique, wait_until

ROLES = Path(__file__).resolve().parents[2] / "examples" / "security" / "roles.yml"

USERS = {
    "app": ("app-password", ["lock_user"]),
    "dashboard": ("dashboard-password", ["lock_monitor"]),
    "operator": ("operator-password", ["lock_admin"]),
}


ONE_NODE = OneNode("eslm-it-security", security=esnode.Security(ROLES, USERS))


def client_of(node, user: str | None, password: str | None = None) -> LockClient:
    lc = LockClient(node.url)
    if user is not None:
        lc.http.auth = (user, password if password is not None else USERS[user][0])
    return lc


@pytest.fixture()
def app(own_node):
    lc = client_of(own_node, "app")
    yield lc
    lc.close()


@pytest.fixture()
def dashboard(own_node):
    lc = client_of(own_node, "dashboard")
    yield lc
    lc.close()


@pytest.fixture()
def operator(own_node):
    lc = client_of(own_node, "operator")
    yield lc
    lc.close()


def assert_forbidden(response, action: str, user: str) -> None:
    """403 as Elasticsearch security answers it, naming the action refused and the user."""
    assert_error(response, 403, "security_exception", action, user)


# What each role of the example file grants, action by action (java/.../action/LockActionNames.java).
CHANGES = ["cluster:admin/locks/acquire", "cluster:admin/locks/release", "cluster:admin/locks/renew",
           "cluster:admin/locks/downgrade", "cluster:admin/locks/session", "cluster:admin/locks/group"]
READS = ["cluster:monitor/locks/get", "cluster:monitor/locks/watch", "cluster:monitor/locks/list",
         "cluster:monitor/locks/stats", "cluster:monitor/locks/node/diagnostics", "cluster:monitor/locks/diagnostics"]
ADMIN = ["cluster:admin/lock_manager/force_release", "cluster:admin/lock_manager/semaphore_limit",
         "cluster:admin/lock_manager/preempt"]
HEALTH = ["cluster:monitor/health_api"]
GRANTED = {
    "app": CHANGES + READS,
    "dashboard": READS + HEALTH,
    "operator": ADMIN + READS + HEALTH,
}


@pytest.mark.parametrize("user", sorted(USERS))
def test_each_role_of_the_example_file_grants_exactly_its_actions(own_node, user):
    lc = client_of(own_node, user)
    try:
        me = ok(lc.call("GET", "/_security/_authenticate"))
        assert me["username"] == user and me["roles"] == USERS[user][1]
        asked = CHANGES + READS + ADMIN + HEALTH + ["cluster:admin/settings/update"]
        answer = ok(lc.call("POST", "/_security/user/_has_privileges", {"cluster": asked}))
        assert answer["cluster"] == {a: a in GRANTED[user] for a in asked}
        assert answer["has_all_requested"] is False
    finally:
        lc.close()


def test_a_request_without_credentials_or_with_a_wrong_password_gets_401(own_node):
    for lc in (client_of(own_node, None), client_of(own_node, "app", "not-the-password")):
        try:
            assert_error(lc.acquire(unique(), "w"), 401, "security_exception")
            assert_error(lc.list(), 401, "security_exception")
            r = lc.stats()
            assert_error(r, 401, "security_exception")
            assert r.headers.get("WWW-Authenticate", "").startswith("Basic"), r.headers
        finally:
            lc.close()


def test_lock_user_acquires_renews_and_releases(app):
    key = unique()
    grant = ok(app.acquire(key, "w-1", lease="20s"))
    renewed = ok(app.renew(key, "w-1", fencing_token=grant["fencing_token"], lease="30s"))
    assert renewed["fencing_token"] == grant["fencing_token"]
    assert app.holders(key) == ["w-1"]
    ok(app.release(key, "w-1", fencing_token=grant["fencing_token"]))
    assert app.holders(key) == []


def test_lock_user_uses_sessions_multi_locks_semaphores_and_elections(app):
    session = ok(app.session_create("w-2", ttl="20s"))["session"]
    ok(app.session_keepalive(session, "w-2"))
    tag = unique("tag")
    ok(app.multi_acquire("w-2", [{"key": f"{{{tag}}}a"}, {"key": f"{{{tag}}}b"}], session=session))
    ok(app.session_delete(session, "w-2"))
    assert app.holders(f"{{{tag}}}a") == [], "ending the session released its locks"

    sem = unique("sem")
    ok(app.call("POST", f"/_semaphores/{enc(sem)}/_acquire", {"owner": "w-3", "acquisition": "w-3", "permits": 1, "limit": 2}))
    assert ok(app.call("GET", f"/_semaphores/{enc(sem)}"))["holders"][0]["owner"] == "w-3"
    ok(app.call("POST", f"/_semaphores/{enc(sem)}/_release", {"owner": "w-3", "acquisition": "w-3"}))

    election = unique("el")
    term = ok(app.call("POST", f"/_elections/{enc(election)}/_campaign", {"candidate": "c-1", "acquisition": "c-1"}))["term"]
    observed = ok(app.call("GET", f"/_elections/{enc(election)}/_observe", params={"term": 0, "wait": "1s"}))
    assert observed["changed"] is True and observed["term"] == term and observed["leader"] == "c-1"
    ok(app.call("POST", f"/_elections/{enc(election)}/_resign", {"candidate": "c-1", "acquisition": "c-1", "term": term}))


def test_lock_user_reads_what_an_application_needs(app):
    key = unique()
    grant = ok(app.acquire(key, "w-4"))
    try:
        assert [lock["owner"] for lock in ok(app.list(prefix=key))["locks"]] == ["w-4"]
        assert key in app.cat(v="true").text
        assert ok(app.stats())["total"]["held"] >= 1
        assert ok(app.diagnostics())["core"]["partitions"]
        # A watch of a lock that is still held waits out its `wait` and says so.
        watched = ok(app.watch(key, token=grant["fencing_token"], wait="100ms"))
        assert watched["changed"] is False and watched["held"] is True
    finally:
        ok(app.release(key, "w-4"))


def test_lock_user_may_not_force_release(app):
    key = unique()
    ok(app.acquire(key, "w-5"))
    assert_forbidden(app.force_release(key, reason="not mine to evict"),
                     "cluster:admin/lock_manager/force_release", "app")
    assert app.holders(key) == ["w-5"], "the refused force-release changed nothing"
    sem = unique("sem")
    ok(app.call("POST", f"/_semaphores/{sem}/_acquire", {"owner": "w-5", "acquisition": "w-5", "limit": 2}))
    assert_forbidden(app.call("POST", f"/_semaphores/{sem}/_limit", {"limit": 1}),
                     "cluster:admin/lock_manager/semaphore_limit", "app")
    assert_forbidden(app.acquire(key, "w-9", wait="1s", preempt="1s"), "cluster:admin/lock_manager/preempt", "app")
    ok(app.call("POST", f"/_semaphores/{sem}/_release", {"owner": "w-5", "acquisition": "w-5"}))
    ok(app.release(key, "w-5"))


def test_lock_admin_force_releases_a_holder_and_takes_no_locks(app, operator):
    key = unique()
    grant = ok(app.acquire(key, "w-6", lease="1m"))
    assert operator.holders(key) == ["w-6"], "lock_admin reads, to find what to free"
    released = ok(operator.force_release(key, reason="w-6's host is gone"))["released"]
    assert released == [{"owner": "w-6", "fencing_token": grant["fencing_token"]}]
    assert_error(app.renew(key, "w-6", fencing_token=grant["fencing_token"]), 404, "lock_not_held_exception")

    assert_forbidden(operator.acquire(unique(), "op"), "cluster:admin/locks/acquire", "operator")
    assert_forbidden(operator.session_create("op", ttl="10s"), "cluster:admin/locks/session", "operator")


def test_lock_monitor_reads_and_changes_nothing(app, dashboard):
    key = unique()
    grant = ok(app.acquire(key, "w-7"))
    try:
        assert dashboard.holders(key) == ["w-7"]
        assert [lock["owner"] for lock in ok(dashboard.list(prefix=key))["locks"]] == ["w-7"]
        assert key in dashboard.cat(v="true").text
        assert ok(dashboard.stats())["total"]["held"] >= 1
        assert ok(dashboard.diagnostics())["core"]["partitions"]
        assert "status" in ok(dashboard.call("GET", "/_health_report"))
        # What docs/OPERATIONS.md "What to monitor and alert on" tells a dashboard to read.
        assert ok(dashboard.call("GET", "/_cluster/health/.locks"))["status"] in ("green", "yellow")
        shards = dashboard.call("GET", "/_cat/shards/.locks?format=json")
        assert shards.status_code == 200 and shards.json() and shards.json()[0]["index"] == ".locks", shards.text

        assert_forbidden(dashboard.acquire(unique(), "d"), "cluster:admin/locks/acquire", "dashboard")
        assert_forbidden(dashboard.renew(key, "w-7"), "cluster:admin/locks/renew", "dashboard")
        assert_forbidden(dashboard.release(key, "w-7"), "cluster:admin/locks/release", "dashboard")
        assert_forbidden(dashboard.session_create("d"), "cluster:admin/locks/session", "dashboard")
        assert_forbidden(dashboard.force_release(key), "cluster:admin/lock_manager/force_release", "dashboard")
        assert_forbidden(dashboard.call("POST", f"/_semaphores/{enc(unique('sem'))}/_acquire",
                                        {"owner": "d", "permits": 1, "limit": 1}),
                         "cluster:admin/locks/acquire", "dashboard")
        assert app.holders(key) == ["w-7"]
        assert ok(app.get(key))["holders"][0]["fencing_token"] == grant["fencing_token"]
    finally:
        ok(app.release(key, "w-7"))


def test_the_lock_history_is_written_with_security_on(own_node, app):
    """The plugin writes `locks-history` in the node's system context, whoever locked: with
    security on, an application user's locks reach the history that an administrator searches
    (docs/API.md "Lock history"), and no write fails."""
    admin = client_of(own_node, esnode.Security.ADMIN, esnode.Security.ADMIN_PASSWORD)
    try:
        ok(admin.put_cluster_settings({"locks.audit.enabled": True}))
        key = unique("hist")
        grant = ok(app.acquire(key, "w-h"))
        ok(app.release(key, "w-h", fencing_token=grant["fencing_token"]))

        def found():
            r = admin.call("POST", "/locks-history/_search", {"query": {"term": {"lock.key": key}}})
            if r.status_code != 200:
                return None
            events = sorted(h["_source"]["event"]["action"] for h in r.json()["hits"]["hits"])
            # The two records may reach the stream in separate flushes: wait for both.
            return events if len(events) >= 2 else None

        assert wait_until(found, 30, interval=0.25, message="history written") == ["granted", "released"]
        stats = next(iter(ok(admin.stats())["nodes"].values()))["locks"]
        assert stats["audit_failed"] == 0, stats
    finally:
        ok(admin.put_cluster_settings({"locks.audit.enabled": None}))
        admin.close()
