"""A loopback stand-in for the APM Server, for tests of what Elasticsearch's telemetry sends.

With `telemetry.metrics.enabled: true` and `telemetry.agent.server_url` pointing here, the Elastic
APM agent inside Elasticsearch POSTs its events to `/intake/v2/events`: NDJSON, compressed
(`Content-Encoding: deflate` or `gzip`), usually chunked, one request per
`telemetry.agent.api_request_time`. `Intake` keeps every `metricset` line it received, with the
time it arrived; a test reads the samples of the metrics it cares about. It answers the agent's
other questions (`GET /`, the server's version) as an APM Server would, enough for the agent to go
on sending."""

from __future__ import annotations

import gzip
import http.server
import json
import threading
import time
import zlib

INTAKE = "/intake/v2/events"


class Intake:
    """An HTTP server on 127.0.0.1:`port` in a thread of its own, collecting metricsets."""

    def __init__(self, port: int):
        self.port = port
        self.metricsets: list[tuple[float, dict]] = []  # (monotonic arrival, metricset)
        self.requests = 0
        self.errors: list[str] = []
        self._lock = threading.Lock()
        intake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet: the test prints what it needs
                pass

            def do_GET(self):
                self._answer(200, {"version": "8.15.0", "build_date": "2024-01-01T00:00:00Z",
                                   "build_sha": "0"})

            def do_POST(self):
                try:
                    body = self._body()
                    if self.path.startswith(INTAKE):
                        intake._take(body)
                    self._answer(202, None)
                except Exception as e:  # noqa: BLE001 - kept for the test to report
                    with intake._lock:
                        intake.errors.append(f"{type(e).__name__}: {e}")
                    self._answer(400, {"error": str(e)})

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    raw = bytearray()
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass  # trailers
                            break
                        raw += self.rfile.read(size)
                        self.rfile.readline()  # the chunk's CRLF
                else:
                    raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                encoding = self.headers.get("Content-Encoding", "").lower()
                if encoding == "gzip":
                    return gzip.decompress(raw)
                if encoding == "deflate":
                    return zlib.decompress(raw)
                return bytes(raw)

            def _answer(self, status: int, body):
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=f"apm-intake-{port}",
                                        daemon=True)

    def start(self) -> "Intake":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def _take(self, body: bytes) -> None:
        now = time.monotonic()
        found = []
        for line in body.decode().splitlines():
            if line.strip():
                event = json.loads(line)
                if "metricset" in event:
                    found.append((now, event["metricset"]))
        with self._lock:
            self.requests += 1
            self.metricsets.extend(found)

    def samples(self, name: str, since: float = float("-inf")) -> list[dict]:
        """Every sample of metric `name` that arrived at or after `since` (monotonic), in order."""
        with self._lock:
            return [m["samples"][name] for at, m in self.metricsets
                    if at >= since and name in m.get("samples", {})]

    def names(self, prefix: str = "") -> set[str]:
        """The names of every metric received so far that start with `prefix`."""
        with self._lock:
            return {n for _, m in self.metricsets for n in m.get("samples", {}) if n.startswith(prefix)}
