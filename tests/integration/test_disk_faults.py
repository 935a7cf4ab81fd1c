"""Disk faults on a real node (issue 48 item 4; docs/RELIABILITY.md "Disk faults"): the state log's
disk fails an fsync (libfiu's POSIX wrappers preloaded into the node, switched on by `fiu-ctrl` while
grants stream in), fills up (a tmpfs of the test's own as the node's data path, filled by a file
until ENOSPC), or loses what was written since the last fsync (a power loss, simulated: the
fault-injection build records beside each log the length its last force covered, and the test cuts
the log back there after a kill -9). The promise: every grant acknowledged before the fault comes
back; while the fault lasts the partition answers 503 naming the error; nothing is acknowledged
that was not forced to disk; the node stays up, and serves again within seconds once the disk does.
The last test runs the power loss on a build that acknowledges batches it never forced, and shows
that the check finds the lost grants.

One node each, `.locks` on no replica: the log on the node's disk is the partition's only copy."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
import requests

import node as esnode
from lockclient import LockClient, ok, unique, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.figures]

# Leases outlive the test: a grant missing after the restart is lost, never expired.
LEASE = "10m"
FAULT_INJECTION = "fault-injection"
# libfiu (Debian fiu-utils): its run-time preload (the control fifo) and its POSIX wrappers.
FIU_LIBS = Path("/usr/lib/fiu")
FIU_SYNC = "posix/io/sync/*"  # fsync, fdatasync, msync, sync_file_range: the whole disk fails to sync
EIO = 5
FORCED_SUFFIX = ".forced"  # org.eslm.replication.StateLogFaults
# How soon the partition must serve again once the disk does: it is reopened a second after each
# batch that failed (cluster.PartitionManager.RECHECK_AFTER_FAILED_BATCH).
RECOVERY_BOUND_S = 15
# How late an answer whose batch was forced before the fault may still arrive.
IN_FLIGHT_S = 2
# The full disk's size: the node's whole data path (cluster state, the lock shard) fits in a few MB.
TMPFS_MB = 64


class PreloadedNode(esnode.Node):
    """A node whose server JVM, and only it, runs with libfiu preloaded (`preload`). Preloaded into
    the launcher's JVM as well, libfiu breaks the JDK's process start (`Exec failed, error: 16`), and
    the launcher could not start the server: so the node's Java is a copy of the JDK whose `java`
    is a script that sets LD_PRELOAD only for the server's command line (Elasticsearch hands its
    environment on to the server)."""

    SERVER_MAIN = "org.elasticsearch.bootstrap.Elasticsearch"

    def __init__(self, *args, preload: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.preload = preload

    def _java_home(self) -> Path:
        """The JDK hard-linked into the node's folder (the launcher hands the server JVM its own
        `java.home`, which the JVM finds from its binary's real path: so the binary is linked, not
        wrapped), its `java` a script that runs the real binary, `java.real`."""
        real = Path(esnode.java_home())
        fake = self.home / "jdk-preloading"
        if not (fake / "bin" / "java.real").exists():
            shutil.rmtree(fake, ignore_errors=True)
            shutil.copytree(real, fake, symlinks=True, copy_function=link_or_copy)
            (fake / "bin" / "java").rename(fake / "bin" / "java.real")
            script = fake / "bin" / "java"
            script.write_text("#!/bin/sh\n"
                              f'case " $* " in *{self.SERVER_MAIN}*) export LD_PRELOAD="$ESLM_SERVER_PRELOAD";; esac\n'
                              f'exec "$(dirname "$0")/java.real" "$@"\n')
            script.chmod(0o755)
        return fake

    def _env(self) -> dict:
        env = super()._env()
        env["ES_JAVA_HOME"] = str(self._java_home())
        env["ESLM_SERVER_PRELOAD"] = self.preload
        return env


def link_or_copy(src: str, dst: str) -> None:
    """A hard link where the file system allows it (the JDK and build/ on one disk), else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


@contextlib.contextmanager
def disk_node(name, variant=None, env=None, tmpfs_mb=None, node_class=esnode.Node, **node_args):
    """One node in a folder of its own under build/ (`node_home(name)`): the plugin zip `variant`,
    `env` for its processes, and with `tmpfs_mb` a tmpfs of that size as its data path (mounted
    before it starts, unmounted after it stopped; a mount that fails fails the test). Killed if it
    did not stop by itself."""
    # Elasticsearch's disk watermarks are off (scripts/node.py sets it for every test node; said
    # again here because this module depends on it): a small data path is above the high and
    # flood-stage watermarks as soon as it is filled, and the test is about what the plugin does
    # when a write fails, not about Elasticsearch's protection against ever getting there.
    settings = {"cluster.routing.allocation.disk.threshold_enabled": "false"}
    node = node_class(name, "node-0", esnode.free_port(), esnode.free_port(), extra_settings=settings, env=env,
                      **node_args)
    version = esnode.es_version()
    node.install(version, esnode.plugin_zip(version, variant))
    mounted = False
    try:
        if tmpfs_mb is not None:
            node.data.mkdir(parents=True, exist_ok=True)
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={tmpfs_mb}m,mode=0755", "tmpfs", str(node.data)],
                               capture_output=True, text=True, timeout=30)
            if r.returncode != 0:
                pytest.fail(f"cannot mount a tmpfs on {node.data} (the test needs root): {r.stderr.strip()}")
            mounted = True
        node.start()
        node.wait_until_ready()
        yield node
    finally:
        if node.stop() not in (0, 143, None):
            print(node.tail_log(), flush=True)
        node.kill()
        if mounted:
            r = subprocess.run(["umount", str(node.data)], capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, f"umount {node.data}: {r.stderr}"


def fresh_name() -> str:
    return f"eslm-it-disk-{uuid.uuid4().hex[:6]}"


def node_home(name: str) -> Path:
    return esnode.cluster_home(name) / "node-0"


class Grants:
    """Workers that each take fresh keys, one after the other, through their own client: what was
    answered 200 (key -> owner, token, when), what was refused (status and reason, counted) and how
    many outcomes are unknown (no answer: not counted either way)."""

    def __init__(self, node, workers=4, prefix="disk"):
        self.node, self.prefix = node, f"{prefix}-{uuid.uuid4().hex[:6]}"
        self.granted: dict[str, tuple[str, int, float]] = {}
        self.refused: Counter = Counter()
        self.unknown = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(workers)]

    def _run(self, i):
        lc = LockClient(self.node.url, timeout=30)
        n = 0
        while not self.stop.is_set():
            key, owner = f"{self.prefix}-{i}-{n}", f"w{i}"
            n += 1
            try:
                r = lc.acquire(key, owner, lease=LEASE)
            except requests.RequestException:
                with self.lock:
                    self.unknown += 1
                continue
            with self.lock:
                if r.status_code == 200:
                    self.granted[key] = (owner, r.json()["fencing_token"], time.monotonic())
                else:
                    try:
                        reason = r.json()["error"]["reason"]
                    except (ValueError, KeyError, TypeError):
                        reason = r.text[:300]
                    self.refused[(r.status_code, reason)] += 1

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(60)

    def count(self) -> int:
        with self.lock:
            return len(self.granted)

    def granted_after(self, t: float) -> int:
        with self.lock:
            return sum(1 for _, _, at in self.granted.values() if at > t)

    def first_after(self, t: float) -> float | None:
        """When the first grant after `t` was answered, or None."""
        with self.lock:
            return min((at for _, _, at in self.granted.values() if at > t), default=None)

    def refusals(self, *words) -> int:
        with self.lock:
            return sum(n for (_, reason), n in self.refused.items() if all(w in reason for w in words))

    def refusals_by_reason(self) -> dict[str, int]:
        with self.lock:
            return {f"{status} {reason}": n for (status, reason), n in self.refused.items()}

    def answered(self) -> dict[str, tuple[str, int]]:
        with self.lock:
            return {k: (owner, token) for k, (owner, token, _) in self.granted.items()}


def listed(node, prefix: str) -> dict[str, tuple[str, int]]:
    """Every held lock under `prefix`, as the node lists them (once it answers the listing)."""
    lc = LockClient(node.url)
    out, after = {}, None
    while True:
        page = wait_until(lambda: _page(lc, prefix, after), 60, interval=0.5, message="a listing")
        out.update({entry["key"]: (entry["owner"], entry["fencing_token"]) for entry in page["locks"]})
        after = page.get("next")
        if not after:
            return out


def _page(lc, prefix, after):
    r = lc.list(prefix=prefix, size=1000, **({"after": after} if after else {}))
    return r.json() if r.status_code == 200 else None


def power_loss(node) -> dict[Path, int]:
    """What a power loss does to the node's state logs, after its kill -9: each cut back to the
    length its last force covered (the fault-injection build's `<log>.forced`), the writes never
    forced lost. Answers the bytes cut per log."""
    logs = sorted(node.data.glob("indices/*/*/_state/locks-batches.log"))
    assert logs, f"no lock state log under {node.data}"
    cut = {}
    for log in logs:
        sidecar = log.with_name(log.name + FORCED_SUFFIX)
        assert sidecar.exists(), f"{sidecar} is missing: not the fault-injection build?"
        forced, size = int(sidecar.read_text()), log.stat().st_size
        assert forced <= size, f"{log}: forced length {forced} is beyond its {size} bytes"
        os.truncate(log, forced)
        cut[log] = size - forced
    return cut


def restarted_and_lost(node, grants: Grants, cut_unforced: bool) -> tuple[dict, int]:
    """Kills the node (-9) while `grants` stream in, optionally cuts what was never forced off its
    logs, restarts it and answers (the acknowledged grants it no longer lists, the bytes cut). Also
    checks that the next token is above every token answered, unless grants were lost."""
    node.kill()
    grants.__exit__()
    answered = grants.answered()
    cut = sum(power_loss(node).values()) if cut_unforced else 0
    node.start()
    node.wait_until_ready()
    now = listed(node, grants.prefix)
    lost = {k: v for k, v in answered.items() if now.get(k) != v}
    if not lost:
        newer = ok(LockClient(node.url).acquire(unique("disk-after"), "after", lease=LEASE))["fencing_token"]
        assert newer > max(t for _, t in answered.values()), "a token after the restart repeats an answered one"
    print(f"kill -9 after {len(answered)} acknowledged grants ({grants.unknown} unknown outcomes), "
          f"{cut} unforced bytes cut: {len(lost)} lost", flush=True)
    return lost, cut


def fill(path: Path) -> int:
    """Writes `path` until the file system is full (ENOSPC), in ever smaller pieces so that no
    free block is left; answers the bytes written."""
    written = 0
    with open(path, "wb", buffering=0) as f:
        for size in (1 << 20, 1 << 16, 1 << 12, 1 << 9, 1):
            piece = b"\0" * size
            while True:
                try:
                    written += f.write(piece)
                except OSError as e:
                    assert e.errno == 28, e  # ENOSPC
                    break
    free = os.statvfs(path).f_bavail
    assert free == 0, f"{free} blocks still free after filling"
    return written


def log_says(node, *words) -> bool:
    text = node.log_file.read_text(errors="replace") if node.log_file.exists() else ""
    return any(all(w in line for w in words) for line in text.splitlines())


def fiu(node, command: str, prefix: Path) -> None:
    """One libfiu control command to the node's server JVM (through its control fifo)."""
    pid = node.server_pid()
    assert pid is not None, "the node is not running"
    r = subprocess.run(["fiu-ctrl", "-f", str(prefix), "-c", command, str(pid)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "error" not in (r.stdout + r.stderr).lower(), f"fiu-ctrl {command}: {r.stdout}{r.stderr}"


def healthy(node) -> bool:
    """The process runs and answers HTTP."""
    if node.process is None or node.process.poll() is not None:
        return False
    try:
        return requests.get(node.url + "/_cluster/health", timeout=10).status_code == 200
    except requests.RequestException:
        return False


def test_a_failing_fsync_is_refused_with_its_error_and_loses_no_acknowledged_grant():
    """The disk fails every sync (EIO) for a few seconds while grants stream in; then a power loss
    at a kill -9. No grant answered before, during or after the fault is lost; meanwhile the
    partition answers 503 naming the error, the node stays up, and it serves again by itself."""
    for tool in ("fiu-ctrl", "fiu-run"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: apt-get install fiu-utils")
    for lib in ("fiu_run_preload.so", "fiu_posix_preload.so"):
        assert (FIU_LIBS / lib).exists(), f"{FIU_LIBS / lib} is missing: apt-get install fiu-utils"
    name = fresh_name()
    fifo = node_home(name) / "fiu-ctrl"  # each preloaded process makes its control fifos there
    env = {"FIU_CTRL_FIFO": str(fifo), "FIU_ENABLE": ""}
    preload = f"{FIU_LIBS / 'fiu_run_preload.so'} {FIU_LIBS / 'fiu_posix_preload.so'}"
    with disk_node(name, FAULT_INJECTION, env, node_class=PreloadedNode, preload=preload) as node, \
            Grants(node) as grants:
        wait_until(lambda: grants.count() >= 100, 60, interval=0.05, message="100 grants before the fault")
        # Every sync of every file fails with EIO: Lucene's and Elasticsearch's too, as on a
        # failing disk; libfiu cannot aim at one file. Nothing else syncs on this idle node in
        # the few seconds it lasts (the lock index holds no documents).
        fiu(node, f"enable name={FIU_SYNC},failinfo={EIO}", fifo)
        began = time.monotonic()
        try:
            wait_until(lambda: log_says(node, "lock state log [", "failed"), 30, interval=0.1,
                       message="the plugin's log of a state log that failed")
            failing = time.monotonic()
            wait_until(lambda: grants.refusals("cannot persist its state", "Input/output error") >= 2, 60,
                       interval=0.1, message="two 503s naming the I/O error")
            assert healthy(node), "the node died of a failed fsync"
        finally:
            disabling = time.monotonic()
            fiu(node, f"disable name={FIU_SYNC}", fifo)
        healed = time.monotonic()
        # No batch can be forced while every sync fails, so no grant may be answered then: from
        # the plugin's first failure (plus IN_FLIGHT_S for an answer forced before it, still on
        # its way) until the disk syncs again.
        answered_failing = grants.granted_after(failing + IN_FLIGHT_S) - grants.granted_after(disabling)
        assert disabling - failing > IN_FLIGHT_S, "the fault did not last long enough to be checked"
        assert answered_failing == 0, f"{answered_failing} grants answered while no sync could succeed"
        during = grants.granted_after(began) - grants.granted_after(healed)
        back = wait_until(lambda: grants.first_after(healed), RECOVERY_BOUND_S, interval=0.05,
                          message=f"a grant within {RECOVERY_BOUND_S}s of the disk syncing again") - healed
        wait_until(lambda: grants.granted_after(healed) >= 100, 60, interval=0.05, message="100 grants after")
        assert healthy(node)
        print(f"fsync EIO for {healed - began:.1f}s: {during} grants answered meanwhile, none of them "
              f"{IN_FLIGHT_S}s or more after the first failure ({disabling - failing:.1f}s before the disk synced), "
              f"refusals {grants.refusals_by_reason()}; granting again {back:.2f}s after the disk synced", flush=True)
        assert log_says(node, "replaced by a checkpoint of the whole state"), "the untrusted log was rewritten"
        lost, cut = restarted_and_lost(node, grants, cut_unforced=True)
        assert not lost, f"{len(lost)} acknowledged grants lost: {list(lost.items())[:5]}"


def test_a_full_disk_is_refused_with_its_error_and_serves_again_once_space_returns():
    """The node's data path is a small tmpfs; a file fills it (ENOSPC) while grants stream in, then
    is deleted. While full the partition answers 503 naming the full disk and the node stays up;
    once space returns it serves again without an operator; a kill -9 and restart then bring every
    acknowledged grant back (a record cut short by the full disk must not damage the log)."""
    name = fresh_name()
    with disk_node(name, tmpfs_mb=TMPFS_MB) as node, Grants(node) as grants:
        wait_until(lambda: grants.count() >= 100, 60, interval=0.05, message="100 grants before the disk fills")
        filler = node.data / "filler"
        began = time.monotonic()
        filled = fill(filler)
        try:
            wait_until(lambda: log_says(node, "lock state log [", "failed"), 30, interval=0.1,
                       message="the plugin's log of a state log that failed")
            wait_until(lambda: grants.refusals("cannot persist its state", "No space left on device") >= 2, 60,
                       interval=0.1, message="two 503s naming the full disk")
            assert healthy(node), "the node died of a full disk"
        finally:
            filler.unlink()
        freed = time.monotonic()
        during = grants.granted_after(began) - grants.granted_after(freed)
        back = wait_until(lambda: grants.first_after(freed), RECOVERY_BOUND_S, interval=0.05,
                          message=f"a grant within {RECOVERY_BOUND_S}s of the space returning") - freed
        wait_until(lambda: grants.granted_after(freed) >= 100, 60, interval=0.05, message="100 grants after")
        assert healthy(node)
        print(f"disk full ({filled >> 20} MB filler) for {freed - began:.1f}s: {during} grants answered meanwhile, "
              f"refusals {grants.refusals_by_reason()}; granting again {back:.2f}s after the filler was deleted",
              flush=True)
        lost, _ = restarted_and_lost(node, grants, cut_unforced=False)
        assert not lost, f"{len(lost)} acknowledged grants lost: {list(lost.items())[:5]}"


def test_the_power_loss_check_finds_a_build_that_acknowledges_unforced_batches():
    """The same power loss on the fault-injection build with the flaw `unforced_batches` (batches
    acknowledged, never forced): the check must find acknowledged grants lost, or it could not
    find the bug it is there for."""
    name = fresh_name()
    with disk_node(name, FAULT_INJECTION, {"ESLM_FAULT_FLAW": "unforced_batches"}) as node, Grants(node) as grants:
        assert log_says(node, "acknowledged WITHOUT being forced"), "the flaw is not on"
        wait_until(lambda: grants.count() >= 100, 60, interval=0.05, message="100 grants")
        lost, cut = restarted_and_lost(node, grants, cut_unforced=True)
        assert cut > 0 and lost, "a build that acknowledges unforced batches lost nothing at a power loss"
        print(f"the flawed build lost {len(lost)} of {len(grants.answered())} acknowledged grants", flush=True)
