"""Bad input over HTTP against a real node: every case gets a 4xx in Elasticsearch's error JSON
with the offending field named, and changes no lock state (a held key keeps its holder, token
and lease; free keys stay free; the intruding owner holds nothing anywhere). Then a seeded
fuzzer throws thousands of generated bodies at the mutating endpoints while a sentinel lock is
held, and bad node settings are refused at start-up and by the cluster settings API."""

from __future__ import annotations

import json
import os
import random
import time
import uuid

import pytest

from cluster_kit import refused_start
from lockclient import LockClient, assert_error, duration_ms, enc, error_of, ok, unique, wait_until

# --- the table of bad requests --------------------------------------------------------------
#
# Each case: (id, method, path, body, raw, status, error type, names that must appear).
# Placeholders, filled per test: $FREE/$FREE2 free keys, $HELD a key held by $HOLDER with token
# $TOKEN ("$TOKEN+1" is the next integer), $INTRUDER the owner every bad request uses, $TREE a
# fresh tree name. In paths they are URL-encoded as one segment.

PARSE = "x_content_parse_exception"
ILLEGAL = "illegal_argument_exception"
EOF = "x_content_e_o_f_exception"
NOT_HELD = "lock_not_held_exception"
NO_SESSION = "session_not_found_exception"
# Every error type docs/API.md "Errors" lists for a request that is wrong or cannot be granted.
FUZZ_ERROR_TYPES = {PARSE, ILLEGAL, EOF, NOT_HELD, NO_SESSION, "lock_conflict_exception",
                    "lock_wait_timeout_exception", "lock_limit_exceeded_exception",
                    "deadlock_exception", "status_exception"}
ACQ = "/_locks/$FREE/_acquire"
REL = "/_locks/$HELD/_release"
REN = "/_locks/$HELD/_renew"
MULTI = "/_locks/_acquire"
MREL = "/_locks/_release"
SESS = "/_locks/_session"
ME = "$INTRUDER"
# A session id of the issued form (partition 0, 32 hex digits) that no node issued.
GUESSED = "0_00000000000000000000000000000001"
E_ACUTE_257 = "é" * 257   # 257 characters, 514 bytes: too long although under 512 characters


def _c(cid, method, path, body, raw, status, error_type, *names):
    """One case: exactly one status and (for errors) exactly one error type, as docs/API.md
    "Errors" names them."""
    assert isinstance(status, int) and (error_type is None) == (status == 200), cid
    return pytest.param(method, path, body, raw, status, error_type, names, id=cid)


CASES = [
    # malformed JSON and non-object bodies
    _c("acquire-malformed-json", "POST", ACQ, None, '{"owner": "$INTRUDER",', 400, PARSE, "[1:"),
    _c("acquire-unquoted", "POST", ACQ, None, "{owner: x}", 400, PARSE),
    _c("acquire-array-body", "POST", ACQ, None, '["$INTRUDER"]', 400, PARSE),
    _c("acquire-string-body", "POST", ACQ, None, '"owner"', 400, PARSE),
    _c("acquire-empty-body", "POST", ACQ, None, "", 400, ILLEGAL, "body"),
    _c("multi-malformed-json", "POST", MULTI, None, '{"owner": "$INTRUDER", "locks": [', 400, PARSE),
    _c("release-malformed-json", "POST", REL, None, '{"owner": ', 400, EOF),
    # invalid UTF-8 (raw bytes) in values
    _c("acquire-owner-invalid-utf8", "POST", ACQ, None, b'{"owner": "ab\xff\xfe"}', 400, PARSE,
       "owner"),
    _c("multi-key-invalid-utf8", "POST", MULTI, None,
       b'{"owner": "$INTRUDER", "locks": [{"key": "k\xc3\x28"}]}', 400, PARSE, "locks"),
    _c("session-owner-invalid-utf8", "POST", SESS, None, b'{"owner": "s\xfe\xffs"}', 400, PARSE,
       "owner"),
    # wrong types
    _c("acquire-owner-number", "POST", ACQ, {"owner": 17}, None, 400, PARSE, "owner"),
    _c("acquire-owner-object", "POST", ACQ, {"owner": {"id": "x"}}, None, 400, PARSE, "owner"),
    _c("acquire-owner-list", "POST", ACQ, {"owner": [ME]}, None, 400, PARSE, "owner"),
    _c("acquire-owner-bool", "POST", ACQ, {"owner": True}, None, 400, PARSE, "owner"),
    _c("acquire-mode-number", "POST", ACQ, {"owner": ME, "mode": 1}, None, 400, PARSE, "mode"),
    _c("acquire-scope-list", "POST", ACQ, {"owner": ME, "scope": ["key"]}, None, 400, PARSE, "scope"),
    _c("acquire-wait-bool", "POST", ACQ, {"owner": ME, "wait": True}, None, 400, PARSE, "wait"),
    _c("acquire-wait-object", "POST", ACQ, {"owner": ME, "wait": {"s": 1}}, None, 400, PARSE, "wait"),
    _c("acquire-lease-list", "POST", ACQ, {"owner": ME, "lease": ["1s"]}, None, 400, PARSE, "lease"),
    _c("acquire-priority-float", "POST", ACQ, {"owner": ME, "priority": 3.5}, None, 400, ILLEGAL,
       "priority"),
    _c("acquire-priority-bool", "POST", ACQ, {"owner": ME, "priority": True}, None, 400, PARSE,
       "priority"),
    _c("acquire-session-object", "POST", ACQ, {"owner": ME, "session": {}}, None, 400, PARSE,
       "session"),
    _c("acquire-routing-list", "POST", ACQ, {"owner": ME, "routing": []}, None, 400, PARSE,
       "routing"),
    _c("release-token-string", "POST", REL, {"owner": "$HOLDER", "fencing_token": "x"}, None, 400,
       PARSE, "fencing_token"),
    _c("release-token-negative", "POST", REL, {"owner": "$HOLDER", "fencing_token": -5}, None, 400,
       ILLEGAL, "fencing_token"),
    _c("release-token-overflow", "POST", REL, {"owner": "$HOLDER", "fencing_token": 2 ** 64 + 3},
       None, 400, PARSE, "fencing_token"),
    _c("renew-token-object", "POST", REN, {"owner": "$HOLDER", "fencing_token": {}}, None, 400,
       PARSE, "fencing_token"),
    _c("multi-locks-string", "POST", MULTI, {"owner": ME, "locks": "$FREE"}, None, 400, PARSE,
       "locks"),
    _c("multi-lock-entry-string", "POST", MULTI, {"owner": ME, "locks": ["$FREE"]}, None, 400,
       PARSE, "locks"),
    _c("multi-release-all-string", "POST", MREL, {"owner": "$HOLDER", "all": "yes"}, None, 400,
       PARSE, "all"),
    _c("session-ttl-bool", "POST", SESS, {"owner": ME, "ttl": False}, None, 400, PARSE, "ttl"),
    # unknown fields, named
    _c("acquire-unknown-field", "POST", ACQ, {"owner": ME, "ownr": "x"}, None, 400, PARSE,
       "unknown field [ownr]"),
    _c("acquire-field-of-session", "POST", ACQ, {"owner": ME, "ttl": "1s"}, None, 400, PARSE,
       "unknown field [ttl]"),
    _c("acquire-field-of-multi", "POST", ACQ, {"owner": ME, "locks": []}, None, 400, PARSE,
       "unknown field [locks]"),
    _c("release-unknown-field", "POST", REL, {"owner": "$HOLDER", "fencing_token": "$TOKEN", "tokn": 1}, None, 400, PARSE,
       "unknown field [tokn]"),
    _c("renew-unknown-field", "POST", REN, {"owner": "$HOLDER", "fencing_token": "$TOKEN", "lease_ms": 5}, None, 400, PARSE,
       "unknown field [lease_ms]"),
    _c("multi-unknown-field", "POST", MULTI, {"owner": ME, "locks": [{"key": "$FREE"}], "keys": 1},
       None, 400, PARSE, "unknown field [keys]"),
    _c("multi-entry-unknown-field", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "$FREE", "wait": "1s"}]}, None, 400, PARSE,
       "unknown field [wait]"),
    _c("multi-release-unknown-field", "POST", MREL, {"owner": "$HOLDER", "everything": True},
       None, 400, PARSE, "unknown field [everything]"),
    _c("session-unknown-field", "POST", SESS, {"owner": ME, "lease": "1s"}, None, 400, PARSE,
       "unknown field [lease]"),
    _c("force-release-unknown-field", "POST", "/_locks/$HELD/_force_release", {"owner": "x"},
       None, 400, PARSE, "unknown field [owner]"),
    # missing owner
    _c("acquire-no-owner", "POST", ACQ, {"mode": "shared"}, None, 400, ILLEGAL,
       "[owner] is required"),
    _c("acquire-null-owner", "POST", ACQ, {"owner": None}, None, 400, PARSE, "owner"),
    _c("release-no-owner", "POST", REL, {"fencing_token": "$TOKEN"}, None, 400, ILLEGAL,
       "[owner] is required"),
    _c("renew-no-owner", "POST", REN, {"lease": "1m", "fencing_token": "$TOKEN"}, None, 400, ILLEGAL, "[owner] is required"),
    _c("multi-no-owner", "POST", MULTI, {"locks": [{"key": "$FREE"}]}, None, 400, ILLEGAL,
       "[owner] is required"),
    _c("multi-release-no-owner", "POST", MREL, {"all": True}, None, 400, ILLEGAL,
       "[owner] is required"),
    _c("session-no-owner", "POST", SESS, {"ttl": "10s"}, None, 400, ILLEGAL,
       "[owner] is required"),
    # empty / oversized / control characters in owner
    _c("acquire-owner-empty", "POST", ACQ, {"owner": ""}, None, 400, ILLEGAL, "[owner]"),
    _c("acquire-owner-513-bytes", "POST", ACQ, {"owner": "o" * 513}, None, 400, ILLEGAL,
       "[owner]"),
    _c("acquire-owner-514-utf8-bytes", "POST", ACQ, {"owner": E_ACUTE_257}, None, 400, ILLEGAL,
       "[owner]"),
    _c("acquire-owner-nul", "POST", ACQ, {"owner": "a\u0000b"}, None, 400, ILLEGAL, "[owner]"),
    _c("acquire-owner-tab", "POST", ACQ, {"owner": "a\tb"}, None, 400, ILLEGAL, "[owner]"),
    _c("release-owner-empty", "POST", REL, {"owner": "", "fencing_token": "$TOKEN"}, None, 400, ILLEGAL, "[owner]"),
    _c("multi-owner-oversized", "POST", MULTI, {"owner": "o" * 600, "locks": [{"key": "$FREE"}]},
       None, 400, ILLEGAL, "[owner]"),
    _c("session-owner-control", "POST", SESS, {"owner": "a\u001bb"}, None, 400, ILLEGAL,
       "[owner]"),
    # empty / oversized / control characters in keys
    _c("key-empty-in-url", "POST", "/_locks//_acquire", {"owner": ME}, None, 400, ILLEGAL,
       "[key]"),
    _c("key-513-bytes-in-url", "POST", "/_locks/" + "k" * 513 + "/_acquire", {"owner": ME}, None,
       400, ILLEGAL, "[key]"),
    _c("key-514-utf8-bytes-in-url", "POST", f"/_locks/{enc(E_ACUTE_257)}/_acquire", {"owner": ME},
       None, 400, ILLEGAL, "[key]"),
    _c("key-newline-in-url", "POST", "/_locks/a%0Ab/_acquire", {"owner": ME}, None, 400, ILLEGAL,
       "[key]"),
    _c("key-nul-in-url", "POST", "/_locks/a%00b/_acquire", {"owner": ME}, None, 400, ILLEGAL,
       "[key]"),
    _c("key-escape-in-url", "POST", "/_locks/a%1Bb/_acquire", {"owner": ME}, None, 400, ILLEGAL,
       "[key]"),
    _c("key-tab-in-url-release", "POST", "/_locks/a%09b/_release", {"owner": ME, "fencing_token": 1}, None, 400,
       ILLEGAL, "[key]"),
    _c("key-control-in-url-renew", "POST", "/_locks/a%0Db/_renew", {"owner": ME, "fencing_token": 1}, None, 400,
       ILLEGAL, "[key]"),
    _c("key-control-in-url-get", "GET", "/_locks/a%0Ab", None, None, 400, ILLEGAL, "[key]"),
    _c("multi-key-empty", "POST", MULTI, {"owner": ME, "locks": [{"key": ""}]}, None, 400,
       ILLEGAL, "[key]"),
    _c("multi-key-missing", "POST", MULTI, {"owner": ME, "locks": [{"mode": "shared"}]}, None,
       400, ILLEGAL, "key"),
    _c("multi-key-oversized", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "$FREE"}, {"key": "k" * 513}]}, None, 400, ILLEGAL, "[key]"),
    _c("multi-key-control", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "$FREE"}, {"key": "a\nb"}]}, None, 400, ILLEGAL, "[key]"),
    _c("multi-release-key-empty", "POST", MREL, {"owner": "$HOLDER", "acquisition": "a", "locks": [{"key": ""}]},
       None, 400, ILLEGAL, "[key]"),
    # negative, unparsable and absurd durations
    _c("wait-negative", "POST", ACQ, {"owner": ME, "wait": "-1s"}, None, 400, ILLEGAL, "[wait]"),
    _c("wait-negative-number", "POST", ACQ, {"owner": ME, "wait": -5}, None, 400, ILLEGAL, "[wait]"),
    _c("wait-minus-one", "POST", ACQ, {"owner": ME, "wait": "-1"}, None, 400, ILLEGAL, "[wait]"),
    _c("wait-no-unit", "POST", ACQ, {"owner": ME, "wait": "10"}, None, 400, ILLEGAL, "[wait]"),
    _c("wait-bad-unit", "POST", ACQ, {"owner": ME, "wait": "1x"}, None, 400, ILLEGAL, "[wait]"),
    _c("wait-text", "POST", ACQ, {"owner": ME, "wait": "soon"}, None, 400, ILLEGAL, "[wait]"),
    _c("wait-empty", "POST", ACQ, {"owner": ME, "wait": ""}, None, 400, ILLEGAL, "[wait]"),
    _c("wait-absurd-number", "POST", ACQ, {"owner": ME, "wait": 1e300}, None, 400, ILLEGAL, "[wait]"),
    _c("wait-absurd-days", "POST", ACQ, {"owner": ME, "wait": "999999999999999999d"}, None, 400,
       ILLEGAL, "[wait]"),
    _c("lease-negative", "POST", ACQ, {"owner": ME, "lease": "-10s"}, None, 400, ILLEGAL, "[lease]"),
    _c("lease-absurd-number", "POST", ACQ, {"owner": ME, "lease": 2 ** 70}, None, 400, ILLEGAL,
       "[lease]"),
    _c("lease-text", "POST", ACQ, {"owner": ME, "lease": "forever"}, None, 400, ILLEGAL, "[lease]"),
    _c("renew-lease-negative", "POST", REN, {"owner": "$HOLDER", "fencing_token": "$TOKEN", "lease": "-1m"}, None, 400, ILLEGAL,
       "[lease]"),
    _c("multi-wait-negative", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "$FREE"}], "wait": "-2s"}, None, 400, ILLEGAL, "[wait]"),
    _c("session-ttl-negative", "POST", SESS, {"owner": ME, "ttl": "-1s"}, None, 400, ILLEGAL, "[ttl]"),
    _c("session-ttl-text", "POST", SESS, {"owner": ME, "ttl": "a while"}, None, 400, ILLEGAL, "[ttl]"),
    _c("session-ttl-absurd", "POST", SESS, {"owner": ME, "ttl": "99999999999999d"}, None, 400, ILLEGAL,
       "[ttl]"),
    # beyond the caps: the field and the setting named
    _c("wait-beyond-cap", "POST", ACQ, {"owner": ME, "wait": "6m"}, None, 400, ILLEGAL, "[wait]",
       "locks.wait.max"),
    _c("wait-beyond-cap-ms", "POST", ACQ, {"owner": ME, "wait": 300_001}, None, 400, ILLEGAL,
       "[wait]", "locks.wait.max"),
    _c("lease-beyond-cap", "POST", ACQ, {"owner": ME, "lease": "11m"}, None, 400, ILLEGAL,
       "[lease]", "locks.lease.max"),
    _c("renew-lease-beyond-cap", "POST", REN, {"owner": "$HOLDER", "fencing_token": "$TOKEN", "lease": "1h"}, None, 400,
       ILLEGAL, "[lease]", "locks.lease.max"),
    _c("multi-wait-beyond-cap", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "$FREE"}], "wait": "1h"}, None, 400, ILLEGAL, "[wait]",
       "locks.wait.max"),
    _c("multi-lease-beyond-cap", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "$FREE"}], "lease": "2h"}, None, 400, ILLEGAL, "[lease]",
       "locks.lease.max"),
    # unknown mode / scope / priority
    _c("mode-unknown", "POST", ACQ, {"owner": ME, "mode": "sideways"}, None, 400, ILLEGAL, "mode"),
    _c("mode-empty", "POST", ACQ, {"owner": ME, "mode": ""}, None, 400, ILLEGAL, "mode"),
    _c("scope-unknown", "POST", ACQ, {"owner": ME, "scope": "forest"}, None, 400, ILLEGAL, "scope"),
    _c("priority-10", "POST", ACQ, {"owner": ME, "priority": 10}, None, 400, ILLEGAL, "priority"),
    _c("priority-minus-1", "POST", ACQ, {"owner": ME, "priority": -1}, None, 400, ILLEGAL, "priority"),
    _c("priority-urgent", "POST", ACQ, {"owner": ME, "priority": "urgent"}, None, 400, ILLEGAL,
       "priority"),
    _c("priority-huge", "POST", ACQ, {"owner": ME, "priority": 2 ** 40}, None, 400, ILLEGAL,
       "priority"),
    _c("multi-mode-unknown", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "$FREE", "mode": "upgrade"}]}, None, 400, ILLEGAL, "mode"),
    _c("multi-scope-unknown", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "$FREE", "scope": "subtree"}]}, None, 400, ILLEGAL, "scope"),
    _c("multi-priority-unknown", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "$FREE"}], "priority": "highest"}, None, 400, ILLEGAL,
       "priority"),
    _c("release-scope-unknown", "POST", REL, {"owner": "$HOLDER", "fencing_token": "$TOKEN", "scope": "all"}, None, 400, ILLEGAL,
       "scope"),
    _c("get-scope-unknown", "GET", "/_locks/$HELD?scope=forest", None, None, 400, ILLEGAL, "scope"),
    # tree paths
    _c("tree-not-absolute", "POST", "/_locks/$TREE%2Fb/_acquire",
       {"owner": ME, "scope": "tree"}, None, 400, ILLEGAL, "[key]"),
    _c("tree-empty-segment", "POST", "/_locks/%2F$TREE%2F%2Fb/_acquire",
       {"owner": ME, "scope": "tree"}, None, 400, ILLEGAL, "[key]"),
    _c("tree-trailing-slash", "POST", "/_locks/%2F$TREE%2Fb%2F/_acquire",
       {"owner": ME, "scope": "tree"}, None, 400, ILLEGAL, "[key]"),
    _c("tree-root-only", "POST", "/_locks/%2F/_acquire", {"owner": ME, "scope": "tree"}, None,
       400, ILLEGAL, "[key]"),
    _c("multi-tree-not-absolute", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "$FREE"}, {"key": "$TREE/b", "scope": "tree"}]}, None, 400,
       ILLEGAL, "[key]"),
    _c("multi-tree-empty-segment", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "/$TREE//c", "scope": "tree"}]}, None, 400, ILLEGAL,
       "[key]"),
    # multi-lock shape
    _c("multi-duplicate-keys", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "$FREE"}, {"key": "$FREE2"}, {"key": "$FREE"}]}, None, 400,
       ILLEGAL, "locks"),
    _c("multi-duplicate-keys-other-mode", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "$FREE"}, {"key": "$FREE", "mode": "shared"}]}, None, 400,
       ILLEGAL, "locks"),
    _c("multi-empty-list", "POST", MULTI, {"owner": ME, "locks": []}, None, 400, ILLEGAL, "locks"),
    _c("multi-no-locks", "POST", MULTI, {"owner": ME}, None, 400, ILLEGAL, "locks"),
    _c("multi-release-neither-locks-nor-all", "POST", MREL, {"owner": "$HOLDER"}, None, 400, ILLEGAL,
       "locks"),
    # a release or renew names the acquisition it ends (docs/API.md "Acquisitions")
    _c("release-names-no-acquisition", "POST", REL, {"owner": "$HOLDER"}, None, 400, ILLEGAL,
       "[acquisition] or [fencing_token] is required"),
    _c("renew-names-no-acquisition", "POST", REN, {"owner": "$HOLDER", "lease": "1m"}, None, 400,
       ILLEGAL, "[acquisition] or [fencing_token] is required"),
    _c("multi-release-names-no-acquisition", "POST", MREL, {"owner": "$HOLDER", "locks": [{"key": "$HELD"}]},
       None, 400, ILLEGAL, "[acquisition] or [locks.fencing_token] is required"),
    _c("multi-release-all-with-acquisition", "POST", MREL, {"owner": "$HOLDER", "all": True, "acquisition": "a"},
       None, 400, ILLEGAL, "[acquisition]"),
    _c("resign-names-no-term", "POST", "/_elections/$FREE/_resign", {"candidate": "$HOLDER"}, None, 400,
       ILLEGAL, "[acquisition] or [term] is required"),
    _c("semaphore-release-names-no-acquisition", "POST", "/_semaphores/$FREE/_release", {"owner": "$HOLDER"},
       None, 400, ILLEGAL, "[acquisition] or [fencing_token] is required"),
    _c("acquire-acquisition-empty", "POST", ACQ, {"owner": ME, "acquisition": ""}, None, 400, ILLEGAL,
       "[acquisition]"),
    _c("acquire-acquisition-129-bytes", "POST", ACQ, {"owner": ME, "acquisition": "a" * 129}, None, 400,
       ILLEGAL, "[acquisition]", "128"),
    _c("acquire-acquisition-control", "POST", ACQ, {"owner": ME, "acquisition": "a\u0007b"}, None, 400,
       ILLEGAL, "[acquisition]"),
    _c("release-acquisition-number", "POST", REL, {"owner": "$HOLDER", "acquisition": 7}, None, 400, PARSE,
       "acquisition"),
    _c("release-other-acquisition", "POST", REL, {"owner": "$HOLDER", "acquisition": "not-mine"}, None, 404,
       NOT_HELD),
    # wrong token, unknown session: lock outcomes, not parse errors
    _c("release-wrong-token", "POST", REL, {"owner": "$HOLDER", "fencing_token": "$TOKEN+1"},
       None, 404, NOT_HELD),
    _c("release-wrong-owner", "POST", REL, {"owner": ME, "fencing_token": "$TOKEN"}, None, 404, NOT_HELD),
    _c("renew-wrong-token", "POST", REN,
       {"owner": "$HOLDER", "fencing_token": "$TOKEN+1", "lease": "5m"}, None, 404,
       NOT_HELD),
    _c("renew-wrong-owner", "POST", REN, {"owner": ME, "fencing_token": "$TOKEN", "lease": "5m"}, None, 404,
       NOT_HELD),
    _c("multi-release-wrong-owner", "POST", MREL, {"owner": ME, "locks": [{"key": "$HELD", "fencing_token": "$TOKEN"}]},
       None, 200, None),
    _c("acquire-unknown-session", "POST", ACQ, {"owner": ME, "session": "no-such-session"}, None,
       404, NO_SESSION, "no-such-session"),
    _c("multi-unknown-session", "POST", MULTI,
       {"owner": ME, "locks": [{"key": "$FREE"}], "session": "no-such-session"}, None, 404,
       NO_SESSION),
    _c("keepalive-unknown-session", "POST", "/_locks/_session/no-such-session/_keepalive",
       {"owner": ME}, None, 404, NO_SESSION),
    _c("delete-unknown-session", "DELETE", "/_locks/_session/no-such-session", {"owner": ME},
       None, 404, NO_SESSION),
    _c("keepalive-guessed-session", "POST", f"{SESS}/{GUESSED}/_keepalive", {"owner": ME}, None,
       404, NO_SESSION, GUESSED),
    _c("delete-guessed-session", "DELETE", f"{SESS}/{GUESSED}", {"owner": ME}, None, 404,
       NO_SESSION, GUESSED),
    _c("keepalive-no-partition", "POST", f"{SESS}/9999{GUESSED[1:]}/_keepalive", {"owner": ME},
       None, 404, NO_SESSION),
    _c("keepalive-no-body", "POST", f"{SESS}/{GUESSED}/_keepalive", None, None, 400, ILLEGAL,
       "owner"),
    _c("delete-no-body", "DELETE", f"{SESS}/{GUESSED}", None, None, 400, ILLEGAL, "owner"),
    _c("keepalive-no-owner", "POST", f"{SESS}/{GUESSED}/_keepalive", {}, None, 400, ILLEGAL,
       "[owner] is required"),
    _c("delete-no-owner", "DELETE", f"{SESS}/{GUESSED}", {}, None, 400, ILLEGAL,
       "[owner] is required"),
    _c("delete-routing-field", "DELETE", f"{SESS}/{GUESSED}", {"owner": ME, "routing": "r"},
       None, 400, PARSE, "lock_session_end_request", "routing"),
    _c("keepalive-unknown-field", "POST", f"{SESS}/{GUESSED}/_keepalive",
       {"owner": ME, "ttl": "5s"}, None, 400, PARSE, "lock_session_keepalive_request", "ttl"),
    _c("delete-owner-not-a-string", "DELETE", f"{SESS}/{GUESSED}", {"owner": 7}, None, 400,
       PARSE, "owner"),
    _c("force-release-free-key", "POST", "/_locks/$FREE/_force_release", {}, None, 404,
       NOT_HELD),
    # query parameters
    _c("list-size-negative", "GET", "/_locks?size=-1", None, None, 400, ILLEGAL, "size"),
    _c("list-size-text", "GET", "/_locks?size=many", None, None, 400, ILLEGAL, "size"),
    _c("list-unknown-param", "GET", "/_locks?bogus=1", None, None, 400, ILLEGAL, "bogus"),
    _c("cat-unknown-param", "GET", "/_cat/locks?bogus=1", None, None, 400, ILLEGAL, "bogus"),
]


@pytest.fixture()
def world(locks):
    """Two free keys, a key held by a holder with a known token, an intruder owner, a tree name."""
    ctx = {
        "$FREE": unique("free"), "$FREE2": unique("free"), "$HELD": unique("held"),
        "$HOLDER": unique("holder"), "$INTRUDER": unique("intruder"), "$TREE": f"t{uuid.uuid4().hex[:8]}",
    }
    grant = ok(locks.acquire(ctx["$HELD"], ctx["$HOLDER"], lease="4m"))
    ctx["$TOKEN"] = grant["fencing_token"]
    ctx["lease_ms"] = grant["lease_ms"]
    yield ctx
    locks.release(ctx["$HELD"], ctx["$HOLDER"])


def fill(value, ctx):
    """Replaces the placeholders in a body (recursively), a path or raw bytes."""
    if isinstance(value, dict):
        return {fill(k, ctx): fill(v, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, ctx) for v in value]
    if value == "$TOKEN":
        return ctx["$TOKEN"]
    if value == "$TOKEN+1":
        return ctx["$TOKEN"] + 1
    if isinstance(value, str):
        for name in ("$FREE2", "$FREE", "$HELD", "$HOLDER", "$INTRUDER", "$TREE"):
            value = value.replace(name, ctx[name])
        return value
    if isinstance(value, bytes):
        for name in ("$FREE2", "$FREE", "$HELD", "$HOLDER", "$INTRUDER", "$TREE"):
            value = value.replace(name.encode(), ctx[name].encode())
        return value
    return value


def fill_path(path: str, ctx) -> str:
    for name in ("$FREE2", "$FREE", "$HELD", "$TREE"):
        path = path.replace(name, enc(ctx[name]))
    return path


def assert_unchanged(locks: LockClient, ctx) -> None:
    for free in ("$FREE", "$FREE2"):
        state = locks.state(ctx[free])
        assert state["holders"] == [] and state["waiters"] == [], (free, state)
    held = locks.state(ctx["$HELD"])
    assert [(h["owner"], h["fencing_token"]) for h in held["holders"]] == \
        [(ctx["$HOLDER"], ctx["$TOKEN"])], held
    assert held["waiters"] == []
    assert held["holders"][0]["lease_ms"] <= ctx["lease_ms"], "a refused renew extended the lease"
    assert ok(locks.list(owner=ctx["$INTRUDER"]))["locks"] == []
    assert locks.state(f"/{ctx['$TREE']}/b", scope="tree")["holders"] == []


@pytest.mark.parametrize("method, path, body, raw, status, types, names", CASES)
def test_bad_request_is_4xx_naming_the_field_and_changes_nothing(
        locks, world, method, path, body, raw, status, types, names):
    response = locks.call(method, fill_path(path, world), body=fill(body, world),
                          raw=fill(raw, world))
    if status != 200:
        assert_error(response, status, types, *[fill(n, world) for n in names])
    else:  # a multi-release of keys the owner does not hold: nothing released, nothing refused
        assert ok(response)["released"] == []
    assert_unchanged(locks, world)


def test_keys_and_owners_of_exactly_512_bytes_are_accepted(locks):
    key = "é" * 256  # 512 bytes
    owner = "ö" * 255 + "xy"  # 512 bytes
    g = ok(locks.acquire(key, owner))
    assert g["key"] == key and g["owner"] == owner
    assert locks.holders(key) == [owner]
    ok(locks.release(key, owner))


def test_too_many_keys_in_one_request_is_refused_naming_locks(locks):
    me = unique("owner")
    keys = [unique("many") for _ in range(101)]
    r = locks.multi_acquire(me, [{"key": k} for k in keys])
    assert_error(r, 400, ILLEGAL, "[locks]", "locks.max_keys_per_request")
    assert ok(locks.list(owner=me))["locks"] == []
    assert all(locks.holders(k) == [] for k in keys[:3] + keys[-3:])
    ok(locks.multi_acquire(me, [{"key": k} for k in keys[:100]]))  # the limit itself is fine
    assert len(ok(locks.list(owner=me, size=1000))["locks"]) == 100
    assert len(ok(locks.multi_release(me, all=True))["released"]) == 100


def test_a_request_for_a_dead_session_changes_nothing(locks):
    me = unique("owner")
    sid = ok(locks.session_create(me, ttl="30s"))["session"]
    ok(locks.session_delete(sid, me))
    k = unique()
    assert_error(locks.acquire(k, me, session=sid), 404, "session_not_found_exception")
    assert locks.state(k)["holders"] == []


# --- settings refused -----------------------------------------------------------------------

@pytest.mark.parametrize("name, value", [
    ("locks.wait.max", "-1s"),
    ("locks.wait.max", "often"),
    ("locks.lease.max", "-5m"),
    ("locks.lease.default", "soon"),
    ("locks.wait.default", "-2s"),
    ("locks.priority.aging", "-1ms"),
    ("locks.max_waiters", -1),
    ("locks.max_waiters", "lots"),
    ("locks.max_keys_per_request", 0),
    ("locks.partitions", 32),           # static: not updatable on a running cluster
    ("locks.durability", "memory"),     # static: not updatable on a running cluster
])
def test_bad_or_static_setting_is_refused_by_the_cluster_settings_api(locks, name, value):
    before = ok(locks.diagnostics())["settings"]
    r = locks.put_cluster_settings({name: value})
    assert_error(r, 400, ILLEGAL, name)
    after = ok(locks.diagnostics())["settings"]
    assert after == before
    assert name not in json.dumps(ok(locks.call("GET", "/_cluster/settings")))


def test_unknown_durability_refuses_to_start_with_a_clear_message():
    code, text = refused_start("eslm-it-badsettings", {"locks.durability": "disk"})
    assert code != 0, "the node started with an unknown durability"
    assert "[locks.durability] must be [replicated] or [memory], got [disk]" in text, text[-3000:]


# --- the fuzzer -----------------------------------------------------------------------------

FUZZ_SEED = int(os.environ.get("ESLM_FUZZ_SEED", "20261122"))
FUZZ_BODIES = int(os.environ.get("ESLM_FUZZ_BODIES", "3000"))
# Only short or refused durations: a valid body must never wait long (keeps the run fast).
SMALL_WAITS = [0, "0", "0s", "1ms", "5ms", 10, "15ms", "-1s", "6m", "1h", "x", 1e30, -3]
SMALL_LEASES = ["50ms", "200ms", "1s", "5s", 100, 2000, "11m", "-1s", 0, "0s", "abc", 2 ** 63]
PRIORITIES = [0, 2, 7, 9, "background", "foreground", 10, -1, "urgent", 3.5, None]
MODES = ["exclusive", "shared", "EXCLUSIVE", "read", "", None, 1]
SCOPES = ["key", "tree", "both", "", None]


class Fuzzer:
    def __init__(self, rng: random.Random, keys: list[str], owners: list[str]):
        self.rng = rng
        self.keys = keys
        self.owners = owners
        # Ids that name no session (made up, and guessed in the issued form); created ones are
        # added with their owners.
        self.sessions: list[str] = ["no-such-session", "0_" + "%032x" % rng.getrandbits(128)]
        self.session_owners: dict[str, str] = {}

    def text(self, max_len: int = 20) -> str:
        """Random unicode: control characters, non-BMP, lone surrogates (escaped by json)."""
        r = self.rng
        pools = [(0x00, 0x1F), (0x20, 0x7E), (0x7F, 0x9F), (0xA0, 0x2FFF), (0xD800, 0xDFFF),
                 (0xE000, 0xFFFF), (0x10000, 0x10FFFF)]
        out = []
        for _ in range(r.randint(0, max_len)):
            lo, hi = r.choice(pools)
            out.append(chr(r.randint(lo, hi)))
        return "".join(out)

    def value(self, depth: int = 0):
        r = self.rng
        kind = r.randrange(12)
        if kind == 0:
            return None
        if kind == 1:
            return r.choice([True, False])
        if kind == 2:
            return r.choice([0, 1, -1, 7, 2 ** 31, 2 ** 63 - 1, 2 ** 63, 2 ** 64, -2 ** 63, 10 ** 30])
        if kind == 3:
            return r.choice([0.5, -0.0, 1e308, -1e308, 3.14159])
        if kind == 4:
            return self.text()
        if kind == 5:
            return "x" * r.choice([0, 1, 511, 512, 513, 4096, 100_000])
        if kind == 6 and depth < 4:
            return [self.value(depth + 1) for _ in range(r.randint(0, 4))]
        if kind == 7 and depth < 4:
            return {self.text(8) or "f": self.value(depth + 1) for _ in range(r.randint(0, 4))}
        if kind == 8:
            nested = "leaf"
            for _ in range(r.randint(1, 200)):
                nested = {"n": nested} if r.random() < 0.5 else [nested]
            return nested
        if kind == 9:
            return r.choice(self.keys)
        if kind == 10:
            return r.choice(self.owners)
        return r.choice(["exclusive", "shared", "key", "tree", "5ms", "foreground", "all"])

    def maybe(self, body: dict, field: str, choices) -> None:
        if self.rng.random() < 0.4:
            v = self.rng.choice(choices)
            if v is not None:
                body[field] = v

    def key_for(self, scope) -> str:
        k = self.rng.choice(self.keys)
        return "/" + k + "/" + self.rng.choice(["a", "b"]) if scope == "tree" else k

    def valid(self, endpoint: str) -> tuple[dict, str | None]:
        """A body that is (usually) valid for `endpoint`, and the key it is about."""
        r = self.rng
        body = {"owner": r.choice(self.owners)}
        scope = r.choice(SCOPES[:2]) if r.random() < 0.3 else None
        if scope:
            body["scope"] = scope
        key = self.key_for(scope)
        if endpoint == "acquire":
            self.maybe(body, "mode", MODES[:2])
            self.maybe(body, "priority", PRIORITIES[:6])
            self.maybe(body, "wait", SMALL_WAITS[:7])
            self.maybe(body, "lease", SMALL_LEASES[:6])
            self.maybe(body, "session", self.sessions)
            if r.random() < 0.5:
                body["acquisition"] = body["owner"]
        elif endpoint in ("release", "renew"):
            self.maybe(body, "fencing_token", [1, 2 ** 40 + 1, 2 ** 62])
            if "fencing_token" not in body or r.random() < 0.3:
                body["acquisition"] = body["owner"]
            if endpoint == "renew":
                self.maybe(body, "lease", SMALL_LEASES[:6])
        elif endpoint == "multi_acquire":
            body.pop("scope", None)
            n = r.randint(1, 4)
            body["locks"] = []
            for _ in range(n):
                entry_scope = r.choice(["key", "tree", None])
                entry = {"key": self.key_for(entry_scope)}
                if entry_scope:
                    entry["scope"] = entry_scope
                if r.random() < 0.3:
                    entry["mode"] = r.choice(MODES[:2])
                body["locks"].append(entry)
            self.maybe(body, "wait", SMALL_WAITS[:7])
            self.maybe(body, "lease", SMALL_LEASES[:6])
            self.maybe(body, "priority", PRIORITIES[:6])
            self.maybe(body, "session", self.sessions)
        elif endpoint == "multi_release":
            body.pop("scope", None)
            if r.random() < 0.3:
                body["all"] = True
            else:
                body["locks"] = [{"key": r.choice(self.keys)} for _ in range(r.randint(1, 3))]
                body["acquisition"] = body["owner"]
        elif endpoint == "session":
            body.pop("scope", None)
            self.maybe(body, "ttl", ["200ms", "1s", "3s", 500, "-1s", "x"])
        return body, key

    def session_owner_body(self, sid: str) -> dict:
        """A keep-alive or end body: usually the session's own owner, else another one."""
        owner = self.session_owners.get(sid)
        if owner is None or self.rng.random() < 0.3:
            owner = self.rng.choice(self.owners)
        return {"owner": owner}

    def mutate(self, body: dict) -> dict:
        r = self.rng
        for _ in range(r.choice([0, 0, 1, 1, 2, 3])):
            op = r.randrange(6)
            fields = list(body)
            if op == 0 and fields:
                body.pop(r.choice(fields))
            elif op == 1:
                body[r.choice(["ownr", "token", "keys", "ttl", "all", "lease", "wait", "x" * 600,
                               self.text(6)])] = self.value()
            elif op == 2 and fields:
                body[r.choice(fields)] = self.value()
            elif op == 3 and fields:
                body[r.choice(fields)] = self.text(r.choice([3, 40, 600]))
            elif op == 4 and "locks" in body and isinstance(body["locks"], list) and body["locks"]:
                entry = r.choice(body["locks"])
                if isinstance(entry, dict):
                    entry[r.choice(["key", "mode", "scope", "wait", "z"])] = self.value()
                else:
                    body["locks"].append(self.value())
            elif op == 5:
                body = {"owner": body.get("owner"), "wrapped": body} if r.random() < 0.5 else body
        return body

    def encode(self, body: dict) -> bytes:
        r = self.rng
        data = json.dumps(body).encode()
        roll = r.random()
        if roll < 0.80:
            return data
        if roll < 0.85 and data:
            return data[: r.randrange(len(data))]                      # truncated
        if roll < 0.90 and data:
            i = r.randrange(len(data))
            return data[:i] + bytes([r.randrange(256)]) + data[i + 1:]  # one byte flipped
        if roll < 0.95:
            i = r.randrange(len(data) + 1)
            junk = r.choice([b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
                             b"\x00", bytes(r.randrange(256) for _ in range(8))])
            return data[:i] + junk + data[i:]                           # invalid UTF-8 inside
        return bytes(r.randrange(256) for _ in range(r.randint(0, 64)))  # noise


def test_fuzzed_bodies_get_2xx_or_4xx_and_the_sentinel_survives(single_node, locks):
    rng = random.Random(FUZZ_SEED)
    sentinel_key, sentinel_owner = unique("sentinel"), unique("sentinel-owner")
    sentinel = ok(locks.acquire(sentinel_key, sentinel_owner, lease="5m"))
    tag = uuid.uuid4().hex[:6]
    keys = [sentinel_key] + [f"fz{tag}-{i}" for i in range(40)]
    owners = [f"fz{tag}-owner-{i}" for i in range(6)]
    assert sentinel_owner not in owners
    fz = Fuzzer(rng, keys, owners)
    endpoints = ["acquire", "release", "renew", "multi_acquire", "multi_release", "session",
                 "keepalive", "session_delete", "get", "list", "cat", "force_release", "stats",
                 "diagnostics"]
    granted_owners: set[str] = set()
    statuses: dict[int, int] = {}
    started = time.monotonic()

    for i in range(FUZZ_BODIES):
        endpoint = rng.choice(endpoints)
        sid_raw = rng.choice(fz.sessions + [fz.text(5) or "s"])
        if endpoint in ("keepalive", "session_delete"):
            body, key = fz.session_owner_body(sid_raw), None
        else:
            body, key = fz.valid(endpoint if endpoint in ("acquire", "release", "renew",
                                                           "multi_acquire", "multi_release",
                                                           "session") else "acquire")
        body = fz.mutate(body)
        if body.get("owner") == sentinel_owner:
            body["owner"] = owners[0]
        if rng.random() < 0.05:
            key = fz.text(rng.choice([1, 10, 300]))  # random unicode key in the URL
        path_key = enc(key or rng.choice(keys))
        sid = enc(sid_raw)
        method, path = {
            "acquire": ("POST", f"/_locks/{path_key}/_acquire"),
            "release": ("POST", f"/_locks/{path_key}/_release"),
            "renew": ("POST", f"/_locks/{path_key}/_renew"),
            "multi_acquire": ("POST", "/_locks/_acquire"),
            "multi_release": ("POST", "/_locks/_release"),
            "session": ("POST", "/_locks/_session"),
            "keepalive": ("POST", f"/_locks/_session/{sid}/_keepalive"),
            "session_delete": ("DELETE", f"/_locks/_session/{sid}"),
            "get": ("GET", f"/_locks/{path_key}?scope={enc(rng.choice(['key', 'tree', 'x']))}"),
            "list": ("GET", f"/_locks?size={rng.choice([1, 10, -1, 'x', 10 ** 12])}"
                            f"&prefix={enc(fz.text(3))}&owner={enc(rng.choice(owners))}"),
            "cat": ("GET", f"/_cat/locks?size={rng.choice([1, 10, -1, 'x'])}"
                           f"&format={rng.choice(['json', 'txt', 'x'])}&v={rng.choice(['true', 'x'])}"),
            # never the sentinel: force-release frees any holder, by design
            "force_release": ("POST", f"/_locks/{enc(rng.choice(keys[1:] + [fz.text(4) or 'f']))}"
                                      "/_force_release"),
            "stats": ("GET", f"/_locks/_stats?{rng.choice(['', 'pretty', 'bogus=1'])}"),
            "diagnostics": ("GET", f"/_locks/_node/diagnostics?{rng.choice(['', 'human', 'bogus=1'])}"),
        }[endpoint]
        if endpoint == "force_release":
            body = rng.choice([{}, {"reason": fz.text(8)}, {"reason": 5}, {"owner": "x"},
                               {"scope": rng.choice(["key", "tree", "x"])}])
        raw = None if method == "GET" or rng.random() < 0.02 else fz.encode(body)
        try:
            r = locks.call(method, path, raw=raw, timeout=15)
        except Exception as e:  # a hang or a dropped connection is a failure too
            pytest.fail(f"fuzz #{i} ({endpoint} {path} {raw!r:.300}) got no answer: {e}")
        statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
        assert 200 <= r.status_code < 300 or 400 <= r.status_code < 500, \
            f"fuzz #{i} seed {FUZZ_SEED}: {endpoint} {path} {raw!r:.500} -> {r.status_code} {r.text}"
        if r.status_code >= 400:
            assert r.headers.get("content-type", "").startswith("application/json"), \
                f"fuzz #{i}: {endpoint} {path} -> {r.status_code} {r.headers} {r.text:.300}"
            assert error_of(r)["type"] in FUZZ_ERROR_TYPES, f"fuzz #{i}: {r.text}"
        elif endpoint != "cat" and isinstance(r.json(), dict):
            answer = r.json()
            if answer.get("acquired") and isinstance(answer.get("owner"), str):
                granted_owners.add(answer["owner"])
            if endpoint == "session" and "session" in answer:
                fz.sessions.append(answer["session"])
                fz.session_owners[answer["session"]] = answer["owner"]

    print(f"fuzz seed {FUZZ_SEED}: {FUZZ_BODIES} requests, statuses {sorted(statuses.items())}")
    assert statuses.get(200, 0) > 0, f"the fuzzer never produced a valid request: {statuses}"
    assert sum(v for s, v in statuses.items() if s >= 400) > FUZZ_BODIES // 4, statuses

    # the sentinel is untouched: same owner, same token, lease still running, renewable
    state = locks.state(sentinel_key)
    assert [(h["owner"], h["fencing_token"]) for h in state["holders"]] == \
        [(sentinel_owner, sentinel["fencing_token"])], state
    ok(locks.renew(sentinel_key, sentinel_owner, fencing_token=sentinel["fencing_token"]))

    # clean up whatever valid bodies acquired, then prove the node still serves normally
    for sid, owner in fz.session_owners.items():
        locks.session_delete(sid, owner)
    for owner in granted_owners | set(owners):
        r = locks.multi_release(owner, all=True)
        assert r.status_code in (200, 404), r.text
    assert ok(locks.list(prefix=f"fz{tag}", size=1000))["locks"] == []
    assert ok(locks.call("GET", "/_cluster/health"))["status"] in ("green", "yellow")
    k = unique()
    token = ok(locks.acquire(k, "after-fuzz"))["fencing_token"]
    ok(locks.release(k, "after-fuzz", fencing_token=token))
    ok(locks.release(sentinel_key, sentinel_owner, fencing_token=sentinel["fencing_token"]))
    assert time.monotonic() - started < 120, "the fuzzer is meant to stay fast"


def test_node_survives_a_burst_of_garbage_connections(single_node, locks):
    """Half-sent requests and raw junk on the HTTP port change nothing and hurt nothing."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(single_node.url)
    k, me = unique(), unique("owner")
    token = ok(locks.acquire(k, me))["fencing_token"]
    rng = random.Random(FUZZ_SEED + 1)
    for _ in range(30):
        with socket.create_connection((parts.hostname, parts.port), timeout=5) as s:
            payload = rng.choice([
                b"POST /_locks/x/_acquire HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"owner\"",
                bytes(rng.randrange(256) for _ in range(200)),
                b"GET /_locks/\xff\xfe HTTP/1.1\r\n\r\n",
            ])
            s.sendall(payload)
    wait_until(lambda: locks.call("GET", "/_cluster/health").status_code == 200, 10)
    assert [(h["owner"], h["fencing_token"]) for h in locks.state(k)["holders"]] == [(me, token)]
    assert duration_ms(ok(locks.diagnostics())["settings"]["locks.wait.max"]) == 300_000
    ok(locks.release(k, me))
