#!/usr/bin/env python3
"""Collects the lock manager's `GET _locks/_stats` into the data stream `locks-stats`, for the
stats panels of the Kibana dashboard beside this file (docs/OPERATIONS.md "The lock history").
Kibana charts indices, not REST answers: this is the small bridge between the two.

Every interval it asks one node for every node's stats and writes one document per node:

    {"@timestamp": <ms>, "ecs": {"version": "9.4.0"},
     "event": {"kind": "metric", "module": "locks", "dataset": "locks.stats"},
     "service": {"node": {"name": "node-0"}},
     "locks": {"grants": 5, "held": 1, ..., "wait_time_ms": {"p99": 893, ...}, "partitions": 1}}

`locks` holds the node's numbers as `_stats` names them (docs/API.md "GET /_locks/_stats"), the
wait and hold times' objects as they are, and the number of partitions the node owns. At its
start it installs the index template `locks-stats` if there is none (a data stream, retention 30
days), never replacing one: change it as your own. Python 3.8+, the standard library only.

    python3 collect_stats.py --url https://es.example:9200 --api-key "$KEY" --interval 30s
    python3 collect_stats.py --url http://localhost:9200 --once   # one round, then exit

Its user needs the cluster privileges `monitor` (`_locks/_stats` is
`cluster:monitor/locks/stats`) and, for the first start, `manage_index_templates`; `create_doc`
and `auto_configure` on `locks-stats`.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import ssl
import sys
import time
import urllib.error
import urllib.request

STREAM = "locks-stats"
ECS_VERSION = "9.4.0"
TEMPLATE = {
    "index_patterns": [STREAM],
    "data_stream": {},
    "priority": 500,
    "_meta": {"managed_by": "lock-manager collect_stats.py", "description": "GET _locks/_stats, one document a node"},
    "template": {
        "settings": {"index.number_of_shards": 1, "index.auto_expand_replicas": "0-1"},
        "mappings": {"dynamic": False, "properties": {
            "@timestamp": {"type": "date"},
            "ecs": {"properties": {"version": {"type": "keyword"}}},
            "event": {"properties": {name: {"type": "keyword"} for name in ("kind", "module", "dataset")}},
            "service": {"properties": {"node": {"properties": {"name": {"type": "keyword"}}}}},
            # Every number of a node's stats, whatever a version adds: mapped as it comes.
            "locks": {"type": "object", "dynamic": True},
        }},
        "lifecycle": {"data_retention": "30d"},
    },
}


class Elasticsearch:
    """JSON over HTTP to one node, with basic or API key authentication."""

    def __init__(self, url: str, user: str | None, password: str | None, api_key: str | None,
                 ca_cert: str | None, insecure: bool, timeout: float):
        self.url = url.rstrip("/")
        self.headers = {"Content-Type": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"ApiKey {api_key}"
        elif user:
            token = base64.b64encode(f"{user}:{password or ''}".encode()).decode()
            self.headers["Authorization"] = f"Basic {token}"
        self.context = ssl.create_default_context(cafile=ca_cert)
        if insecure:
            self.context.check_hostname = False
            self.context.verify_mode = ssl.CERT_NONE
        self.timeout = timeout

    def call(self, method: str, path: str, body: str | None = None) -> tuple[int, dict]:
        request = urllib.request.Request(self.url + path, method=method, headers=self.headers,
                                         data=body.encode() if body is not None else None)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=self.context) as answer:
                return answer.status, json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")


def install_template(es: Elasticsearch) -> None:
    """The data stream's template, unless one is there (`create`: a user's is never replaced)."""
    status, answer = es.call("PUT", f"/_index_template/{STREAM}?create=true", json.dumps(TEMPLATE))
    if status not in (200, 400) or (status == 400 and "already exists" not in json.dumps(answer)):
        raise RuntimeError(f"could not install the index template {STREAM}: {status} {answer}")


def documents(stats: dict, at_ms: int) -> list[dict]:
    """One document per node of a `GET _locks/_stats` answer."""
    out = []
    for node in stats.get("nodes", {}).values():
        locks = node.get("locks", {})
        numbers = {k: v for k, v in locks.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        numbers.update({k: v for k, v in locks.items()
                        if k.endswith("_time_ms") and isinstance(v, dict)})
        numbers["partitions"] = len(locks.get("partitions", []))
        out.append({"@timestamp": at_ms, "ecs": {"version": ECS_VERSION},
                    "event": {"kind": "metric", "module": "locks", "dataset": "locks.stats"},
                    "service": {"node": {"name": node.get("name")}}, "locks": numbers})
    return out


def collect(es: Elasticsearch) -> int:
    """One round: the stats read, their documents written; answers how many were written."""
    status, stats = es.call("GET", "/_locks/_stats")
    if status != 200:
        raise RuntimeError(f"GET /_locks/_stats answered {status}: {stats}")
    docs = documents(stats, int(time.time() * 1000))
    if not docs:
        return 0
    body = "".join('{"create":{}}\n' + json.dumps(d) + "\n" for d in docs)
    status, answer = es.call("POST", f"/{STREAM}/_bulk", body)
    if status != 200 or answer.get("errors"):
        raise RuntimeError(f"writing {len(docs)} documents to {STREAM}: {status} {json.dumps(answer)[:500]}")
    return len(docs)


def seconds(value: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h)", value)
    if not m:
        raise argparse.ArgumentTypeError(f"an interval such as 10s or 1m, not {value!r}")
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default="http://localhost:9200", help="a node's HTTP address")
    parser.add_argument("--user"), parser.add_argument("--password")
    parser.add_argument("--api-key", help="an encoded API key (the Authorization: ApiKey value)")
    parser.add_argument("--ca-cert", help="the CA of the cluster's HTTP certificate")
    parser.add_argument("--insecure", action="store_true", help="do not verify the HTTP certificate")
    parser.add_argument("--interval", type=seconds, default=seconds("30s"), help="between rounds (default 30s)")
    parser.add_argument("--timeout", type=seconds, default=seconds("30s"), help="per request (default 30s)")
    parser.add_argument("--once", action="store_true", help="one round, then exit")
    args = parser.parse_args(argv)
    es = Elasticsearch(args.url, args.user, args.password, args.api_key, args.ca_cert, args.insecure, args.timeout)
    install_template(es)
    while True:
        started = time.monotonic()
        try:
            print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} wrote {collect(es)} documents to {STREAM}", flush=True)
        except (RuntimeError, OSError) as e:
            if args.once:
                raise
            print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {e}", file=sys.stderr, flush=True)
        if args.once:
            return 0
        time.sleep(max(0.0, args.interval - (time.monotonic() - started)))


if __name__ == "__main__":
    sys.exit(main())
