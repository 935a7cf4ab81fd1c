"""`make run` (scripts/node.py `run`) stops its node when the wrapper itself gets SIGTERM or
SIGHUP — a supervisor stopping it, a closed terminal — not only on Ctrl-C: Python's default for
those signals ends the wrapper without its clean-up, which left Elasticsearch running.

The wrapper runs as `make run` runs it, on free ports; only the wrapper's own pid is signalled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

import node as esnode

ROOT = Path(__file__).resolve().parents[2]
# The node stops on SIGTERM from the wrapper: a few seconds on an idle node.
GONE_WITHIN_S = 60.0


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_the_wrapper_stops_its_node_when_signalled(sig):
    port = esnode.free_port()
    wrapper = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "node.py"), "run", "--port", str(port),
         "--transport-port", str(esnode.free_port())],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, text=True)
    pid_file = esnode.cluster_home("eslm-run") / "node-0" / "es.pid"
    launcher = server = None
    try:
        deadline = time.monotonic() + 240
        while True:
            assert wrapper.poll() is None, f"wrapper exited with {wrapper.returncode}: {wrapper.stdout.read()}"
            assert time.monotonic() < deadline, "the node did not answer in time"
            try:
                if requests.get(f"http://127.0.0.1:{port}/_locks/_node/diagnostics", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            time.sleep(0.5)
        launcher = _children(wrapper.pid)
        server = int(pid_file.read_text().strip())
        assert launcher and _alive(server)

        os.kill(wrapper.pid, sig)  # the wrapper only, not its process group
        stopped = time.monotonic()
        code = wrapper.wait(timeout=GONE_WITHIN_S + 30)
        output = wrapper.stdout.read()
        assert code == 128 + sig, output
        assert "stopping" in output and "stopped" in output, output
        while any(_alive(p) for p in (server, *launcher)):
            assert time.monotonic() - stopped < GONE_WITHIN_S, f"Elasticsearch still running after {sig.name}"
            time.sleep(0.2)
        with pytest.raises(requests.ConnectionError):
            requests.get(f"http://127.0.0.1:{port}/", timeout=2)
    finally:
        if wrapper.poll() is None:
            wrapper.kill()
            wrapper.wait()
        for pid in (server, *(launcher or [])):
            if pid is not None and _alive(pid):
                os.kill(pid, signal.SIGKILL)
