#!/usr/bin/env python3
"""Writes the format-1 state-log fixture beside this script (see README.md): one node of the
plugin as it was at commit d1df89a (`PLUGIN_ZIP`, built from that commit), some locks of every
kind taken over HTTP, the node stopped, its partition's state log copied out, and what the node
listed before it stopped written to `expected.json`.

    PLUGIN_ZIP=/tmp/eslm-d1df89a.zip ES_VERSION=9.5.3 python3 make_fixture.py
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[7]
sys.path.insert(0, str(ROOT / "scripts"))
import node as nodes  # noqa: E402

LEASE = "4m"


def post(n: nodes.Node, path: str, body: dict) -> dict:
    req = urllib.request.Request(
        n.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def take_locks(n: nodes.Node) -> dict:
    """Every kind of holder the table keeps; answers the session (its id is not listed)."""
    post(n, "/_locks/orders-1/_acquire", {"owner": "w-1", "lease": LEASE})
    post(n, "/_locks/orders-2/_acquire", {"owner": "w-2", "lease": LEASE})
    post(n, "/_locks/reports/_acquire", {"owner": "r-1", "mode": "shared", "lease": LEASE})
    post(n, "/_locks/reports/_acquire", {"owner": "r-2", "mode": "shared", "lease": LEASE})
    post(n, "/_locks/%2Ftree%2Fa%2Fb/_acquire", {"owner": "t-1", "scope": "tree", "lease": LEASE})
    post(n, "/_semaphores/api-quota/_acquire", {"owner": "s-1", "permits": 2, "limit": 4, "lease": LEASE})
    post(n, "/_semaphores/api-quota/_acquire", {"owner": "s-2", "limit": 4, "lease": LEASE})
    post(n, "/_elections/db-primary/_campaign", {"candidate": "e-1", "value": "10.0.0.7:5432", "lease": LEASE})
    session = post(n, "/_locks/_session", {"owner": "sess-1", "ttl": LEASE})
    post(n, "/_locks/jobs-9/_acquire", {"owner": "sess-1", "session": session["session"]})
    # A released lock and a renewal, so the log holds deltas that remove and update.
    post(n, "/_locks/temp/_acquire", {"owner": "w-9", "lease": LEASE})
    post(n, "/_locks/temp/_release", {"owner": "w-9"})
    post(n, "/_locks/orders-1/_renew", {"owner": "w-1", "lease": LEASE})
    return session


def main() -> int:
    zip_file = Path(os.environ["PLUGIN_ZIP"])
    n = nodes.Node("eslm-fixture-format1", "node-0", nodes.free_port(), nodes.free_port())
    n.install(nodes.es_version(), zip_file)
    n.start()
    try:
        n.wait_until_ready()
        session = take_locks(n)
        listed = n.get("/_locks?size=1000")["locks"]
    finally:
        code = n.stop()
    assert code in (0, 143), f"node exited with {code}"
    logs = sorted(n.data.glob("indices/*/0/_state/locks-batches.log"))
    assert len(logs) == 1, logs
    shutil.copyfile(logs[0], HERE / "locks-batches.log")
    keep = ("key", "scope", "owner", "mode", "fencing_token", "session")
    expected = {
        "locks": [{k: lock[k] for k in keep} for lock in listed],
        "sessions": [{"session": session["session"].split("_", 1)[1], "owner": "sess-1", "ttl_ms": 240000}],
    }
    (HERE / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    print(f"wrote {HERE / 'locks-batches.log'} ({logs[0].stat().st_size} bytes), {len(listed)} locks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
