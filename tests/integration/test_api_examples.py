"""Every example in docs/API.md is run against a real node and its answer checked, so the
examples cannot drift from what the server says.

An example is a ```bash block of curl commands followed by the ```json block of the last
command's answer. Each example gets a setup (the state the prose assumes: a lock held, a waiter
queued, a session open) keyed by its exact requests, so an edited example with no setup fails
loudly instead of being skipped. Tokens and session ids in a request are the documented ones
replaced by the live ones. The answer must have the documented shape: the same fields (a
superset for the open-ended stats and diagnostics answers), the same JSON types, the same
values except where a value is run-specific (tokens, times, ids: see VOLATILE)."""

from __future__ import annotations

import json
import re
import shlex
import threading
import time
from pathlib import Path

import pytest

import node as esnode
from cluster_kit import OneNode
from lockclient import LockClient, ok, wait_until

API_MD = Path(__file__).resolve().parents[2] / "docs" / "API.md"
OWNERS = ("worker-1", "worker-2", "transfer-7")
SEMAPHORE = "api-quota"  # the semaphore of the examples (docs/API.md "Semaphores")
ELECTION = "db-primary"  # the election of the examples (docs/API.md "Elections")
GROUP = "workers"  # the group of the examples (docs/API.md "Groups")
DOC_TOKEN = re.compile(r"\b109951162777\d\b")
# Where a documented session id stands in a request: a body's "session" or the URL.
DOC_SESSION = re.compile(r'"session": "([^"]+)"|/_session/([^/?\s]+)')

# Fields whose value differs from run to run: only their JSON type is compared.
VOLATILE = {"@timestamp", "fencing_token", "token", "session", "node", "id", "name", "cluster_name", "held_ms",
            "lease_ms", "waited_ms", "wait_left_ms", "expires_in_ms", "native_library",
            "waiter_id", "p50", "p90", "p99", "max", "count", "window_count", "acquires", "grants", "releases",
            "conflicts", "renewals", "held", "waiting", "queued", "timeouts", "expiries",
            "deadlocks", "cancelled", "epoch", "reason", "term", "version", "duration"}
# Fields whose documented value is the default build's (pom.xml) and whose live value is the
# node's: a node of another supported version (docs/OPERATIONS.md "Versions") answers its own.
PER_VERSION = {"elasticsearch_version": esnode.es_version()}
# Answers that document a selection of their fields: the live answer may have more.
OPEN_ENDED = ("GET /_locks/_stats", "GET /_locks/_node/diagnostics", "GET /_locks/_diagnostics")
# Bash blocks that are shell recipes rather than requests; each is covered where named.
NOT_RUN = {
    "fencing recipe (jq, $TOKEN)": "tests/integration/test_walking_skeleton.py and test_cluster.py "
                                   "run the same acquire + external_gte write",
    "fenced change ($TOKEN)": "tests/integration/test_fenced_changes.py runs fenced changes with live tokens",
}


# --- reading the examples ---------------------------------------------------------------------

def curl_requests(bash: str) -> list[tuple[str, str, str | None]] | None:
    """(method, path, body) of each curl in a bash block, or None for a shell recipe."""
    if "$(" in bash or "$TOKEN" in bash:
        return None
    commands: list[list[str]] = []
    for word in shlex.split(bash.replace("\\\n", " ")):
        if word == "curl":
            commands.append([])
        else:
            commands[-1].append(word)
    requests_ = []
    for words in commands:
        method, body, url = "GET", None, None
        i = 0
        while i < len(words):
            w = words[i]
            if w.startswith("-X"):
                method = w[2:] or words[i + 1]
                i += 0 if w[2:] else 1
            elif w in ("-d", "--data"):
                body = words[i + 1]
                i += 1
            elif w == "-H":
                i += 1
            elif w.startswith("localhost:9200"):
                url = w[len("localhost:9200"):]
            i += 1
        assert url, f"no URL in curl {words}"
        requests_.append((method, url, body))
    return requests_


def examples() -> list[tuple[list[tuple[str, str, str | None]], str | None]]:
    """Each bash block's requests and the json block right after it (if any)."""
    blocks = re.findall(r"```(\w+)\n(.*?)```", API_MD.read_text(), re.S)
    found = []
    for i, (lang, text) in enumerate(blocks):
        if lang != "bash":
            continue
        reqs = curl_requests(text)
        answer = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "json" else None
        found.append((reqs, answer))
    return found


def signature(reqs) -> str:
    return " ; ".join(f"{m} {p}" + (f" {b}" if b else "") for m, p, b in reqs)


def doc_json(text: str):
    return json.loads(text.replace("[...]", "[]"))


# --- comparing answers ------------------------------------------------------------------------

def same_shape(doc, live, where: str, open_ended: bool, problems: list[str]) -> None:
    name = where.rsplit(".", 1)[-1]
    if isinstance(doc, dict):
        if not isinstance(live, dict):
            problems.append(f"{where}: documented an object, got {live!r:.200}")
            return
        if name == "nodes" and len(doc) == len(live) == 1:  # keyed by node id
            same_shape(next(iter(doc.values())), next(iter(live.values())), where + ".<id>",
                       open_ended, problems)
            return
        documented = {k for k in doc if k != "..."}
        missing, extra = documented - live.keys(), live.keys() - documented
        if missing or (extra and not (open_ended or "..." in doc)):
            problems.append(f"{where}: fields missing {sorted(missing)}, undocumented {sorted(extra)}")
        for k in documented & live.keys():
            same_shape(doc[k], live[k], f"{where}.{k}", open_ended, problems)
    elif isinstance(doc, list):
        if not isinstance(live, list):
            problems.append(f"{where}: documented a list, got {live!r:.200}")
        elif doc == [] or name == "root_cause":
            return  # `[...]` in the docs: any list
        elif open_ended:
            if live:
                same_shape(doc[0], live[0], where + "[0]", open_ended, problems)
            else:
                problems.append(f"{where}: documented entries, got none")
        elif len(doc) != len(live):
            problems.append(f"{where}: {len(doc)} entries documented, {len(live)} answered: {live}")
        else:
            order = (lambda e: json.dumps(e.get("key"))) if all(isinstance(e, dict) for e in doc + live) \
                else (lambda e: json.dumps(e))
            for n, (d, v) in enumerate(zip(sorted(doc, key=order), sorted(live, key=order))):
                same_shape(d, v, f"{where}[{n}]", open_ended, problems)
    elif type(doc) is not type(live) and not (isinstance(doc, (int, float)) and type(live) in (int, float)
                                              and open_ended):
        problems.append(f"{where}: documented {type(doc).__name__} {doc!r}, got {type(live).__name__} {live!r}")
    elif name not in VOLATILE and not (open_ended and isinstance(doc, (int, float))) \
            and PER_VERSION.get(name, doc) != live:
        problems.append(f"{where}: documented {doc!r}, got {live!r}")


# --- the state each example assumes ---------------------------------------------------------

class World:
    """The live node and what the setups hold, with the substitutions for the next request."""

    def __init__(self, node):
        self.lc = LockClient(node.url)
        self.subst: dict[str, str] = {}
        self.waiters: list[threading.Thread] = []

    def reset(self) -> None:
        for t in self.waiters:
            t.join(timeout=30)
        self.waiters.clear()
        self.subst.clear()
        for owner in OWNERS:  # sessions left open hold nothing then, and expire by themselves
            self.lc.multi_release(owner, all=True)
        # Whatever acquisition holds them (an example may name none): the administrator's tool.
        self.lc.force_release(SEMAPHORE, scope="semaphore")
        self.lc.force_release(ELECTION, scope="election")
        self.lc.force_release(GROUP, scope="group")
        self.lc.call("DELETE", f"/_groups/{GROUP}")

    def group(self, member: str | None = None) -> None:
        """The example group, created, with `member` joined as the examples name it."""
        ok(self.lc.call("PUT", f"/_groups/{GROUP}"))
        if member:
            ok(self.lc.call("POST", f"/_groups/{GROUP}/_join", {
                "member": member, "acquisition": f"{member}-a", "capabilities": {"queues": ["eu"]}}))

    def hold(self, key: str, owner: str = "worker-1", doc_token: str | None = None, **kw) -> int:
        token = ok(self.lc.acquire(key, owner, **kw))["fencing_token"]
        if doc_token:
            self.subst[doc_token] = str(token)
        return token

    def session(self, owner: str, doc_id: str) -> str:
        sid = ok(self.lc.session_create(owner, ttl="10s"))["session"]
        self.subst[doc_id] = sid
        return sid

    def hold_permits(self, owner: str, permits: int, doc_token: str | None = None) -> None:
        """`owner` holds `permits` of the documented semaphore (limit 4)."""
        body = {"owner": owner, "permits": permits, "limit": 4}
        token = ok(self.lc.call("POST", f"/_semaphores/{SEMAPHORE}/_acquire", body))["fencing_token"]
        if doc_token:
            self.subst[doc_token] = str(token)

    def queue_for_permit(self, owner: str) -> None:
        """A waiter for one permit of the documented semaphore for 3 s, present before the example."""
        lc = LockClient(self.lc.base_url)
        body = {"owner": owner, "permits": 1, "limit": 4, "wait": "3s"}
        self.waiters.append(threading.Thread(
            target=lambda: lc.call("POST", f"/_semaphores/{SEMAPHORE}/_acquire", body)))
        self.waiters[-1].start()
        wait_until(lambda: any(w["owner"] == owner for w in
                               ok(self.lc.call("GET", f"/_semaphores/{SEMAPHORE}"))["waiters"]), 10,
                   message=f"{owner} queued on {SEMAPHORE}")

    def lead(self, owner: str = "worker-1", doc_token: str | None = None) -> None:
        """`owner` leads the documented election with the documented value."""
        body = {"candidate": owner, "value": "10.0.0.7:5432"}
        term = ok(self.lc.call("POST", f"/_elections/{ELECTION}/_campaign", body))["term"]
        if doc_token:
            self.subst[doc_token] = str(term)

    def queue_candidate(self, owner: str) -> None:
        """A candidate queued on the documented election for 3 s, present before the example."""
        lc = LockClient(self.lc.base_url)
        body = {"candidate": owner, "wait": "3s"}
        self.waiters.append(threading.Thread(
            target=lambda: lc.call("POST", f"/_elections/{ELECTION}/_campaign", body)))
        self.waiters[-1].start()
        wait_until(lambda: owner in ok(self.lc.call("GET", f"/_elections/{ELECTION}"))["candidates"],
                   10, message=f"{owner} queued on {ELECTION}")

    def queue_waiter(self, key: str, owner: str = "worker-2") -> None:
        """A waiter on `key` for 3 s (it times out by itself), present before the example runs."""
        lc = LockClient(self.lc.base_url)
        self.waiters.append(threading.Thread(target=lambda: lc.acquire(key, owner, wait="3s")))
        self.waiters[-1].start()
        wait_until(lambda: any(w["owner"] == owner for w in self.lc.state(key)["waiters"]), 10,
                   message=f"{owner} queued on {key}")


def doc_tokens(reqs) -> list[str]:
    return DOC_TOKEN.findall(signature(reqs))


def doc_session(reqs) -> str:
    found = [a or b for a, b in DOC_SESSION.findall(signature(reqs))]
    assert found, f"no documented session id in {signature(reqs)}"
    return found[0]


def setup_for(reqs, w: World) -> None:
    """Brings the node into the state the example's prose assumes."""
    first_method, first_path, _ = reqs[0]
    if first_path.startswith("/_locks/orders-42/_acquire") and '"preempt"' in signature(reqs):
        # A background job holds the key; the example's waiter preempts it (docs/API.md "Preemption").
        ok(w.lc.acquire("orders-42", "transfer-7", priority="background", lease="60s"))
        return
    if first_path.startswith("/_locks/orders-42/_acquire"):
        return  # a free key
    if first_path.startswith("/_locks/%2Forders%2Feu%2F42/_acquire"):
        w.hold("orders-42")  # the second request is a try-lock on a busy key
    elif first_path.startswith(("/_locks/orders-42/_release", "/_locks/orders-42/_renew",
                                "/_locks/orders-42/_downgrade", "/_locks/orders-42/_watch")):
        w.hold("orders-42", doc_token=doc_tokens(reqs)[0])
    elif first_path == "/_locks/_acquire":
        return
    elif first_path == "/_locks/_release":
        ok(w.lc.multi_acquire("transfer-7", [{"key": "account-1"}, {"key": "account-2"},
                                             {"key": "/ledger/2026", "scope": "tree", "mode": "shared"}]))
    elif first_path == "/_locks/orders-43/_acquire":
        w.session("worker-1", doc_session(reqs))
    elif first_path == "/_locks/_session":
        return
    elif first_path.startswith("/_locks/_session/"):
        sid = w.session("worker-1", doc_session(reqs))
        ok(w.lc.acquire("orders-43", "worker-1", session=sid))
    elif first_path == "/_locks/orders-42" and first_method == "GET":
        w.hold("orders-42")
        w.queue_waiter("orders-42")
    elif first_path.startswith("/_cat/semaphores"):
        w.hold_permits("worker-1", 2)
    elif first_path.startswith("/_cat/elections"):
        w.lead()
    elif first_path.startswith("/_cat/elections"):
        w.lead()
    elif first_path.startswith("/_locks?") or first_path.startswith("/_cat/locks"):
        w.hold("orders-42")
        w.hold("/orders/eu/42", scope="tree", mode="shared")
    elif first_path.startswith("/_health_report/lock_partitions"):
        wait_until_green(w)
    elif first_path.startswith(("/_locks/_stats", "/_locks/_node/diagnostics", "/_locks/_diagnostics")):
        w.hold("/orders/eu/42", scope="tree", mode="shared")
        w.hold("orders-42")
        w.queue_waiter("orders-42")
    elif first_path == "/_locks/orders-42/_force_release":
        w.hold("orders-42")
    elif first_path == "/_cluster/settings":
        if any(path.startswith("/locks-history/") for _, path, _ in reqs):
            setup_history(w)
    elif first_path.startswith("/_semaphores/"):
        setup_semaphore(first_method, first_path, reqs, w)
    elif first_path.startswith("/_elections/"):
        setup_election(first_method, first_path, reqs, w)
    elif first_path.startswith("/_groups"):
        setup_group(first_method, first_path, reqs, w)
    else:
        pytest.fail(f"docs/API.md has an example with no setup here: {signature(reqs)}")


def setup_history(w: World) -> None:
    """The lock history example's state: the history on, worker-2 granted orders-42 after a wait,
    and that grant searchable (docs/API.md "Lock history")."""
    ok(w.lc.put_cluster_settings({"locks.audit.enabled": True}))
    w.hold("orders-42")
    w.queue_waiter("orders-42")
    ok(w.lc.release("orders-42", "worker-1"))
    query = {"query": {"bool": {"filter": [{"term": {"lock.key": "orders-42"}}, {"term": {"lock.owner": "worker-2"}},
                                           {"term": {"event.action": "granted"}}]}}}

    def granted():
        r = w.lc.call("POST", "/locks-history/_search", query)
        return r.status_code == 200 and r.json()["hits"]["hits"]

    wait_until(granted, 30, interval=0.25, message="worker-2's grant in the lock history")


def wait_until_green(w: World) -> None:
    """The health example's state: the indicator green, once this node read its partitions
    (docs/API.md "Health"), within a deadline."""
    deadline = time.monotonic() + 30
    status = None
    while time.monotonic() < deadline:
        status = ok(w.lc.call("GET", "/_health_report/lock_partitions"))["indicators"]["lock_partitions"]["status"]
        if status == "green":
            return
        time.sleep(0.2)
    pytest.fail(f"lock_partitions never green: {status}")


def setup_semaphore(method: str, path: str, reqs, w: World) -> None:
    """The state of the semaphore examples: free for an acquire; held by worker-1 (2 of 4) for
    release, renew and the table; full with a waiter for GET and a change of the limit."""
    if path.endswith("/_acquire"):
        return
    if path.endswith("/_release") or path.endswith("/_renew"):
        tokens = doc_tokens(reqs)
        w.hold_permits("worker-1", 2, doc_token=tokens[0] if tokens else None)
    elif method == "GET" or path.endswith("/_limit"):
        w.hold_permits("worker-1", 2)
        w.hold_permits("worker-2", 2)
        w.queue_for_permit("transfer-7")
    else:
        pytest.fail(f"no setup for the semaphore example {signature(reqs)}")


def setup_election(method: str, path: str, reqs, w: World) -> None:
    """The state of the election examples: free for a campaign; worker-1 leading for resign,
    renew and observe; worker-1 leading with worker-2 queued for GET."""
    if path.endswith("/_campaign"):
        return
    if path.endswith("/_resign") or path.endswith("/_renew"):
        w.lead(doc_token=doc_tokens(reqs)[0])
    elif method == "GET" and "/_observe" in path:
        w.lead()
    elif method == "GET":
        w.lead()
        w.queue_candidate("worker-2")
    else:
        pytest.fail(f"no setup for the election example {signature(reqs)}")


def setup_group(method: str, path: str, reqs, w: World) -> None:
    """The state of the group examples: no group for its creation; the group without members for
    a join, the listing and the deletion; worker-1 a member for the rest."""
    if method == "PUT":
        return
    if path.endswith("/_join") or path == "/_groups" or method == "DELETE":
        w.group()
    else:
        w.group("worker-1")


# --- the test ---------------------------------------------------------------------------------

ONE_NODE = OneNode("eslm-it-api-examples")


@pytest.fixture(scope="module")
def world(own_node):
    w = World(own_node)
    yield w
    w.reset()
    w.lc.put_cluster_settings({"locks.wait.max": None, "locks.priority.aging": None, "locks.audit.enabled": None})
    w.lc.close()


EXAMPLES = examples()


def test_docs_have_examples_to_check():
    assert len([e for e in EXAMPLES if e[1]]) >= 15, "docs/API.md lost its examples?"
    assert [e for e in EXAMPLES if e[0] is None] and len([e for e in EXAMPLES if e[0] is None]) == len(NOT_RUN)


@pytest.mark.parametrize("reqs, answer", [e for e in EXAMPLES if e[0] is not None],
                         ids=[signature(e[0])[:60] for e in EXAMPLES if e[0] is not None])
def test_example_answers_as_documented(world, reqs, answer):
    world.reset()
    setup_for(reqs, world)
    responses = []
    for method, path, body in reqs:
        for doc, live in world.subst.items():
            path, body = path.replace(doc, live), body.replace(doc, live) if body else body
        responses.append(world.lc.call(method, path, raw=body))
    last = responses[-1]
    for r in responses[:-1]:
        assert r.status_code == 200, f"{r.request.method} {r.request.url}: {r.status_code} {r.text}"
    if answer is None:
        assert last.status_code == 200, last.text
        return
    doc = doc_json(answer)
    assert last.status_code == (doc.get("status", 200) if isinstance(doc, dict) else 200), last.text
    problems: list[str] = []
    open_ended = any(signature(reqs).startswith(p) for p in OPEN_ENDED)
    same_shape(doc, last.json(), "answer", open_ended, problems)
    assert problems == [], f"{signature(reqs)}\n  " + "\n  ".join(problems) + f"\nlive: {last.text}"


@pytest.mark.parametrize("error_type", ["lock_conflict_exception", "lock_not_held_exception"])
def test_error_examples_answer_as_documented(world, error_type):
    """The stand-alone error answers in the docs (the Errors section, force-release)."""
    blocks = [b for lang, b in re.findall(r"```(\w+)\n(.*?)```", API_MD.read_text(), re.S)
              if lang == "json" and f'"type": "{error_type}"' in b.replace('":"', '": "')]
    assert blocks, f"no documented {error_type} answer"
    world.reset()
    world.hold("orders-42")
    if error_type == "lock_conflict_exception":
        live = world.lc.acquire("orders-42", "worker-2")
    else:
        ok(world.lc.call("POST", "/_locks/orders-42/_force_release", body={}))
        live = world.lc.release("orders-42", "worker-1")
    for block in blocks:
        doc = doc_json(block)
        problems: list[str] = []
        same_shape(doc, live.json(), "answer", False, problems)
        assert live.status_code == doc["status"] and problems == [], f"{problems}\nlive: {live.text}"
