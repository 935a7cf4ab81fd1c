"""Issue 14, locking from inside Elasticsearch: another plugin that declares
`extended.plugins=lock-manager` locks through `org.eslm.api.PluginLocks` (README "Locking from
another plugin").

A real node of this module's own gets both zips installed by `elasticsearch-plugin install`:
the lock manager, then the example plugin (examples/guarded-job-plugin). Its endpoint
`POST /_example/guarded_job/{key}` acquires the lock through the Java API (with a wait and a
priority), renews it, "works", releases it and answers with the grant. These tests check that
those calls are the lock manager's own: they contend with HTTP clients on the same keys, queue by
priority, time out, are validated like REST bodies, and leave nothing held.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

import node as esnode
from cluster_kit import OneNode
from lockclient import assert_error, ok, unique, wait_for_waiter

pytestmark = pytest.mark.every_version  # also on 8.19 (Makefile integration-test)

EXAMPLE = "guarded-job-example"


ONE_NODE = OneNode("eslm-it-extending", with_example_plugin=True)


def guarded_job(node, key: str, **params) -> requests.Response:
    return requests.post(f"{node.url}/_example/guarded_job/{key}", params=params, timeout=60)


def test_the_example_is_installed_as_an_extension_of_the_lock_manager(own_node):
    plugins = {}
    for info in own_node.get("/_nodes/plugins")["nodes"].values():
        plugins.update({p["name"]: p for p in info["plugins"]})
    assert plugins[EXAMPLE]["extended_plugins"] == [esnode.PLUGIN_NAME]
    assert esnode.PLUGIN_NAME in plugins


def test_a_job_runs_under_the_lock_and_releases_it(own_node, lc):
    key, before = unique(), ok(lc.acquire(unique(), "probe"))["fencing_token"]
    job = ok(guarded_job(own_node, key, owner="job-1", lease="45s", work="50ms"))
    assert job["released"] is True and job["owner"] == "job-1" and job["key"] == key
    assert job["fencing_token"] > before, "tokens come from the same partition counter as HTTP grants"
    assert 40_000 < job["renewed_lease_ms"] <= 45_000, "the renew took the lease it asked for"
    assert lc.state(key) == {"key": key, "scope": "key", "holders": [], "waiters": []}


def test_a_job_queues_behind_an_http_holder_and_gets_a_larger_token(own_node, lc):
    key = unique()
    held = ok(lc.acquire(key, "http-holder"))
    with ThreadPoolExecutor(1) as pool:
        job = pool.submit(guarded_job, own_node, key, owner="job-2", wait="20s")
        waiter = wait_for_waiter(lc, key, "job-2")
        assert waiter["priority"] == 7, "foreground by default"
        ok(lc.release(key, "http-holder"))
        answer = ok(job.result(timeout=30))
    assert answer["fencing_token"] > held["fencing_token"]
    assert answer["waited_ms"] > 0


def test_jobs_queue_by_priority(own_node, lc):
    key = unique()
    ok(lc.acquire(key, "http-holder"))
    with ThreadPoolExecutor(2) as pool:
        background = pool.submit(guarded_job, own_node, key, owner="job-bg", wait="20s",
                                 priority="background")
        assert wait_for_waiter(lc, key, "job-bg")["priority"] == 2
        foreground = pool.submit(guarded_job, own_node, key, owner="job-fg", wait="20s",
                                 priority="foreground")
        wait_for_waiter(lc, key, "job-fg")
        assert [w["owner"] for w in lc.state(key)["waiters"]] == ["job-fg", "job-bg"], \
            "the foreground job queued second but is served first"
        ok(lc.release(key, "http-holder"))
        fg, bg = ok(foreground.result(timeout=30)), ok(background.result(timeout=30))
    assert fg["fencing_token"] < bg["fencing_token"]


def test_a_job_whose_wait_runs_out_gets_the_lock_managers_error(own_node, lc):
    key = unique()
    ok(lc.acquire(key, "http-holder"))
    assert_error(guarded_job(own_node, key, owner="job-3", wait="200ms"), 409,
                 "lock_wait_timeout_exception", key)
    assert_error(guarded_job(own_node, key, owner="job-3"), 409, "lock_conflict_exception", key)
    assert [h["owner"] for h in lc.state(key)["holders"]] == ["http-holder"]


def test_the_java_api_validates_like_the_rest_api(own_node, lc):
    key = unique()
    assert_error(guarded_job(own_node, key, priority="11"), 400, "illegal_argument_exception", "[priority]")
    assert_error(guarded_job(own_node, key, wait="6m"), 400, "illegal_argument_exception", "[wait]")
    assert lc.state(key)["holders"] == []
    # A renew the lock manager refuses (lease over locks.lease.max) after the grant: the example
    # releases what it holds and answers the error.
    assert_error(guarded_job(own_node, key, lease="11m"), 400, "illegal_argument_exception", "[lease]")
    assert lc.state(key)["holders"] == []
