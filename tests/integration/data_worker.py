"""One process of the protected-data load (tests/integration/protected_data.py, docs/RELIABILITY.md
"Protected data"): it takes a document's lock through the Python client (clients/python) and
changes the document under it, again and again, writing one JSON line per change on stdout:

    {"w", "doc", "kind", "op", "value", "token", "outcome", "error", "t0", "t1"}

`outcome` is `ok` (acknowledged), `stale` (refused by Elasticsearch: a newer holder changed the
document), `lost` (refused by the client: it already knew the lock lost, nothing sent), `fail`
(certainly not applied) or `unknown` (no answer: applied or not). Times are `time.monotonic()`,
one clock for every process of the machine.

A holder pauses past its lease as a stopped process does: it writes `{"pause": seconds}` and waits
for a line on stdin; the parent stops it (SIGSTOP) for that long, its watchdog with it, resumes it
and sends the line. Where the pause falls is the point: between the read and the write of a
read-modify-write, and before a blind change.

Kinds of document (each has a lock of its own, `lock-<doc>`):
- `counter`: a read-modify-write, `{"n": n + 1}`: with `--recipe fenced` the client's fenced
  update with a function (a fenced read, then the write); with `--recipe plain` a plain GET, then
  an index with the token as external version (`version_type=external_gte`, docs/API.md "The
  fencing recipe"), sent as Elasticsearch's client sends it, past any check of the lock client;
- `list`: a fenced append of a value of its own (`ops`);
- `flag`: a fenced delete when the document is there, else a fenced re-create with a value.

The Elasticsearch client makes no retries of its own (a retried increment would count twice);
an answer that does not come is an `unknown`."""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python" / "src"))

from elasticsearch import ApiError, ConflictError, ConnectionError as EsConnectionError  # noqa: E402
from elasticsearch import ConnectionTimeout, Elasticsearch, TransportError  # noqa: E402

import eslm  # noqa: E402
from eslm import ops  # noqa: E402


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def pause(seconds: float) -> None:
    """Asks the parent to stop this process for `seconds`; returns once it was resumed."""
    emit({"pause": seconds})
    sys.stdin.readline()


class Worker:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.rng = random.Random(f"{args.seed}-{args.name}")
        urls = args.urls.split(",")
        self.es = Elasticsearch(urls, max_retries=0, request_timeout=args.answer_s, retry_on_timeout=False)
        # No loss watch: a renewal (every third of the lease) is how this client learns of a loss,
        # so a holder resumed from a pause sends its change before it learns, as a real one may.
        self.locks = eslm.Locks(self.es, retry_for=f"{args.answer_s}s", loss_watches=0)
        self.count = 0

    def run(self, until: float) -> None:
        while time.monotonic() < until:
            doc = self.rng.choice(self.args.docs.split(","))
            try:
                held = self.locks.acquire(f"lock-{doc}", lease=f"{self.args.lease_s}s", timeout=f"{self.args.wait_s}s")
            except (eslm.LockError, TransportError, OSError):
                time.sleep(self.rng.uniform(0.05, 0.3))  # busy, or the node is down: another try
                continue
            try:
                self.change(held, doc)
            finally:
                try:
                    held.release()
                except (eslm.LockError, TransportError, OSError):
                    pass  # lost or unreachable: its lease ends it

    def should_pause(self) -> float | None:
        return self.rng.uniform(*self.args.pause_s) if self.rng.random() < self.args.pause_p else None

    def change(self, held, doc: str) -> None:
        self.count += 1
        value = f"{self.args.name}-{self.count}"
        record = {"w": self.args.name, "doc": doc, "kind": self.args.kind, "value": value,
                  "token": held.fencing_token, "t0": time.monotonic()}
        paused = self.should_pause()
        try:
            self.apply(held, doc, value, paused, record)
            record["outcome"] = "ok"
        except eslm.StaleToken as e:
            record.update(outcome="stale", error=str(e)[:200])
        except eslm.LockLost as e:
            record.update(outcome="lost", error=str(e)[:200])
        except (ConnectionTimeout, EsConnectionError, eslm.LockConnectionError) as e:
            record.update(outcome="unknown", error=type(e).__name__)
        except (ApiError, eslm.LockError) as e:
            status = getattr(e, "status", None) or getattr(e, "status_code", None)
            # a 4xx certainly changed nothing; a 5xx of a write may have (the primary wrote it)
            record.update(outcome="fail" if status and 400 <= int(status) < 500 else "unknown", error=str(e)[:200])
        record["t1"] = time.monotonic()
        emit(record)

    def apply(self, held, doc: str, value: str, paused: float | None, record: dict) -> None:
        """The change for this kind; `record["op"]` names it before it is sent (an exception then
        leaves the record saying what was tried)."""
        index = self.args.index
        if self.args.kind == "list":
            record["op"] = "append"
            if paused:
                pause(paused)
            held.update(index, doc, [ops.append("items", value)])
        elif self.args.kind == "flag":
            record["op"] = "read"
            current = held.read(index, doc)
            if paused:
                pause(paused)
            if current is not None:
                record["op"] = "delete"
                held.delete(index, doc)
            else:
                record["op"] = "create"
                held.update(index, doc, {"by": value})
        else:
            record["op"] = "inc"
            self.increment(held, doc, value, paused, record)

    def increment(self, held, doc: str, value: str, paused: float | None, record: dict) -> None:
        index = self.args.index
        if self.args.recipe == "fenced":
            def plus_one(source):
                record["read"] = (source or {}).get("n", 0)
                if paused:
                    pause(paused)
                return {"n": record["read"] + 1, "last": value}
            held.update(index, doc, plus_one)
            return
        try:
            source = self.es.get(index=index, id=doc)["_source"]
        except ApiError as e:
            if e.status_code != 404:
                raise
            source = {}
        if paused:
            pause(paused)
        record["read"] = source.get("n", 0)
        try:
            self.es.index(index=index, id=doc, document={"n": record["read"] + 1, "last": value},
                          version=held.fencing_token, version_type="external_gte")
        except ConflictError as e:
            raise eslm.StaleToken(f"plain write refused: {e}", 409, {}, "version_conflict_engine_exception") from e


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--urls", required=True)
    p.add_argument("--index", required=True)
    p.add_argument("--docs", required=True, help="comma-separated document ids")
    p.add_argument("--kind", choices=("counter", "list", "flag"), required=True)
    p.add_argument("--recipe", choices=("fenced", "plain"), default="fenced")
    p.add_argument("--name", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--lease-s", type=float, default=2.0)
    p.add_argument("--wait-s", type=float, default=5.0)
    p.add_argument("--answer-s", type=float, default=10.0)
    p.add_argument("--pause-p", type=float, default=0.125)
    p.add_argument("--pause-s", type=float, nargs=2, default=(3.0, 5.0))
    args = p.parse_args()
    worker = Worker(args)
    try:
        worker.run(time.monotonic() + args.seconds)
    finally:
        worker.locks.close()
        worker.es.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
