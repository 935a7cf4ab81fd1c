#!/usr/bin/env python3
"""Real Elasticsearch nodes with the lock-manager plugin installed, for `make run` and the tests.

Everything lives under the project's build folder:

    build/dist/elasticsearch-<v>.zip      the integ-test-zip, fetched from Maven Central by Maven
    build/dist/elasticsearch-<v>/         its pristine unpacked tree
    build/dist/installed/<v>-<digest>/    that tree with the plugin installed, once per zip
    build/<cluster>/<node>/es/            a per-node copy of it
    build/<cluster>/<node>/{data,logs}/   the node's data and logs

The plugin is installed the way a user installs it: `bin/elasticsearch-plugin install --batch
file:///...zip` (into a copy of the distribution that nodes then copy, see
`installed_distribution`). Nodes bind to 127.0.0.1 only, without security (plain HTTP) unless started with
a `Security` (one node with security on, HTTP still without TLS: see that class). Elasticsearch
refuses to run as root, so when this script runs as root it starts nodes as the unprivileged
system user `eslm` (created on first use) and hands the node's folder to it.

CLI: `python3 scripts/node.py run [--port 9200]` builds nothing; it expects `mvn package` to have
produced the plugin zip (the Makefile's `run` target does both).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import http.client
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
PLUGIN_NAME = "lock-manager"
# The lane a test run is in (scripts/lanes.py sets it): node folders are per lane.
LANE_ENV = "ESLM_LANE"


def es_version() -> str:
    """The Elasticsearch version: $ES_VERSION, else the default (`default_es_version`)."""
    return os.environ.get("ES_VERSION") or default_es_version()


def default_es_version() -> str:
    """The default Elasticsearch version: the `es.version` property of pom.xml."""
    match = re.search(r"<es\.version>([^<]+)</es\.version>", (ROOT / "pom.xml").read_text())
    if not match:
        raise SystemExit("pom.xml has no <es.version> property")
    return match.group(1)


def cluster_home(cluster: str) -> Path:
    """The folder of a cluster's nodes: build/<cluster> on the default version, build/<cluster>-es<v>
    on another, and with `-<lane>` added inside a lane of scripts/lanes.py ($ESLM_LANE):
    `make integration-test` runs test modules that share fixtures (tests/conftest.py) in lanes at
    once, on one version and on both."""
    version = es_version()
    name = cluster if version == default_es_version() else f"{cluster}-es{version}"
    lane = os.environ.get(LANE_ENV)
    return BUILD / (f"{name}-{lane}" if lane else name)


def java_home() -> str:
    """A JDK 21+ for Elasticsearch (the integ-test-zip bundles none)."""
    return subprocess.run(
        [str(ROOT / "scripts" / "find-jdk")], check=True, capture_output=True, text=True
    ).stdout.strip()


def plugin_zip(version: str, variant: str | None = None) -> Path:
    """The plugin zip `mvn package` built for `version`; with `variant="fault-injection"` the
    test-only zip `mvn package -Pfault-injection` built (`make java-test` builds both)."""
    suffix = f"-{variant}" if variant else ""
    zips = sorted((ROOT / "java" / "target").glob(f"elasticsearch-lock-manager-*-es{version}{suffix}.zip"))
    if not zips:
        raise SystemExit(
            f"no plugin zip{' (' + variant + ')' if variant else ''} for Elasticsearch {version} "
            f"in java/target: run `make java-test` first"
        )
    return zips[-1]


def example_plugin_zip(version: str) -> Path:
    """The example plugin that locks from inside Elasticsearch (examples/guarded-job-plugin),
    as `make java-test` builds it."""
    target = ROOT / "examples" / "guarded-job-plugin" / "target"
    zips = sorted(target.glob(f"guarded-job-plugin-*-es{version}.zip"))
    if not zips:
        raise SystemExit(f"no example plugin zip for Elasticsearch {version} in {target}: run `make java-test` first")
    return zips[-1]


def distribution(version: str) -> Path:
    """Fetches (once) and unpacks (once) the integ-test-zip; returns the pristine tree."""
    dist_dir = BUILD / "dist"
    tree = dist_dir / f"elasticsearch-{version}"
    if (tree / "bin" / "elasticsearch").exists():
        return tree
    dist_dir.mkdir(parents=True, exist_ok=True)
    archive = dist_dir / f"elasticsearch-{version}.zip"
    if not archive.exists():
        artifact = f"org.elasticsearch.distribution.integ-test-zip:elasticsearch:{version}:zip"
        print(f"fetching {artifact} from Maven Central ...", flush=True)
        fetched = dist_dir / f".fetch-{os.getpid()}"
        subprocess.run(
            ["mvn", "-q", "-B", "dependency:copy", f"-Dartifact={artifact}",
             f"-DoutputDirectory={fetched}", "-Dmdep.overWriteIfNewer=true"],
            check=True, cwd=ROOT, env=maven_env(),
        )
        # renamed into place whole, so that runs side by side never read a half-written zip
        (fetched / archive.name).replace(archive)
        shutil.rmtree(fetched, ignore_errors=True)
    staging = dist_dir / f".unpack-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    with zipfile.ZipFile(archive) as z:
        z.extractall(staging)
    for script in (staging / f"elasticsearch-{version}" / "bin").iterdir():
        script.chmod(0o755)
    jdk_bin = staging / f"elasticsearch-{version}" / "jdk"
    assert not jdk_bin.exists(), "the integ-test-zip is expected to carry no JDK"
    _move_into_place(staging / f"elasticsearch-{version}", tree, tree / "bin" / "elasticsearch")
    shutil.rmtree(staging, ignore_errors=True)
    return tree


def _move_into_place(made: Path, tree: Path, complete: Path) -> None:
    """Renames the folder `made` in staging to `tree`, so that nobody sees half of it. When a run
    beside this one put `tree` there first (`complete`, a file of a finished tree, exists), theirs
    is used and `made` is left for the caller to remove (make integration-test runs lanes at once)."""
    try:
        made.rename(tree)
    except OSError:
        if not complete.exists():
            raise


def maven_env() -> dict:
    env = dict(os.environ)
    env["JAVA_HOME"] = java_home()
    return env


RUN_AS = "eslm"

# More JVM options for every node this script starts (and its launcher's and the plugin CLI's JVMs),
# from $ESLM_NODE_JAVA_OPTS. The Makefile's test targets set `-XX:TieredStopAtLevel=1
# -XX:-AlwaysPreTouch -XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote` (C1 only,
# the heap not touched at start, loaded classes not verified: a node boots in about half the CPU,
# which on a two-core machine is most of a test's set-up); a node measured for figures runs
# without them, as users run theirs (bench/run.py refuses them outside --quick).
NODE_JAVA_OPTS_ENV = "ESLM_NODE_JAVA_OPTS"


def extra_java_options() -> str:
    """The options of $ESLM_NODE_JAVA_OPTS, or "" when unset."""
    return os.environ.get(NODE_JAVA_OPTS_ENV, "").strip()


# The CLI's output, written into a tree once every plugin is installed (see installed_distribution).
INSTALLED_MARK = ".eslm-installed"
# How many installed trees build/dist/installed/ keeps (the newest): every build of the plugin zip
# makes a new one.
INSTALLED_KEPT = 8


def installed_distribution(version: str, plugins: tuple[Path, ...], env: dict) -> Path:
    """The distribution of `version` with `plugins` installed in that order by the real CLI
    (`bin/elasticsearch-plugin install --batch file://...`), made once per version and plugin
    contents under build/dist/installed/ and copied by each node: the CLI is a JVM of its own, and
    on two cores starting it for every node of a test run adds up to minutes. Made in a staging
    folder and renamed into place, so runs side by side never see half a tree."""
    digest = hashlib.sha256(version.encode())
    for zip_file in plugins:
        digest.update(zip_file.read_bytes())
    root = BUILD / "dist" / "installed"
    tree = root / f"{version}-{digest.hexdigest()[:16]}"
    if (tree / INSTALLED_MARK).exists():
        return tree
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f".staging-{os.getpid()}-{tree.name}"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(distribution(version), staging, symlinks=True)
    output = ""
    for zip_file in plugins:
        result = subprocess.run(
            [str(staging / "bin" / "elasticsearch-plugin"), "install", "--batch", zip_file.as_uri()],
            env=env, capture_output=True, text=True,
        )
        if result.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise RuntimeError(
                f"elasticsearch-plugin install of {zip_file.name} failed ({result.returncode}):\n"
                f"{result.stdout}\n{result.stderr}"
            )
        output += result.stdout + result.stderr
    (staging / INSTALLED_MARK).write_text(output)
    _move_into_place(staging, tree, tree / INSTALLED_MARK)
    shutil.rmtree(staging, ignore_errors=True)
    _prune_installed(root)
    return tree


def linked_copy(template: Path, es: Path) -> None:
    """A node's own Elasticsearch home made from an installed tree: every file hard-linked to the
    template's, except `config/`, which is copied because the node writes there (keystore, the
    security test's users and roles). Elasticsearch never writes to its lib, modules, plugins or
    bin, so the links are safe, and a test run that starts ~100 nodes takes megabytes of disk
    instead of ~180 MB a node (19 GB a run, enough to fill a CI machine's disk). Falls back to a
    copy where links are not possible (another file system)."""
    def link_or_copy(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(template, es, symlinks=True, copy_function=link_or_copy,
                    ignore=lambda folder, _: ["config"] if Path(folder) == template else [])
    shutil.copytree(template / "config", es / "config", symlinks=True)


def _prune_installed(root: Path) -> None:
    """Removes all but the INSTALLED_KEPT newest installed trees."""
    trees = sorted((t for t in root.iterdir() if (t / INSTALLED_MARK).exists()),
                   key=lambda t: (t / INSTALLED_MARK).stat().st_mtime, reverse=True)
    for old in trees[INSTALLED_KEPT:]:
        shutil.rmtree(old, ignore_errors=True)


def ensure_run_as_user(user: str = RUN_AS) -> None:
    """Creates the unprivileged user `user` that runs Elasticsearch when we are root. Test runs side
    by side may create users at the same moment: useradd then fails on /etc/passwd's lock (or
    finds the user made), so it is tried again, a bounded number of times."""
    failure = None
    for _ in range(50):
        if subprocess.run(["id", "-u", user], capture_output=True).returncode == 0:
            return
        failure = subprocess.run(
            ["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", user],
            capture_output=True, text=True)
        if failure.returncode == 0:
            return
        time.sleep(0.1)
    raise RuntimeError(f"useradd {user} failed ({failure.returncode}): {failure.stderr.strip()}")


def run_as_prefix(user: str = RUN_AS, pid: int | None = None) -> list[str]:
    """Command prefix that drops root for Elasticsearch (which refuses to run as root): as `user`,
    or as the owner of process `pid` (a tool such as jcmd must run as its JVM's user)."""
    if os.geteuid() != 0:
        return []
    if pid is not None:
        uid = Path(f"/proc/{pid}").stat().st_uid
        return ["setpriv", f"--reuid={uid}", f"--regid={Path(f'/proc/{pid}').stat().st_gid}", "--clear-groups", "--"]
    ensure_run_as_user(user)
    return ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"]


def check_reachable(path: Path) -> None:
    """Every ancestor of the build folder must be searchable by the user running the node."""
    if os.geteuid() != 0:
        return
    for parent in [path, *path.parents]:
        if parent.exists() and not parent.stat().st_mode & 0o001:
            raise SystemExit(
                f"{parent} is not searchable by other users, so Elasticsearch (run as "
                f"'{RUN_AS}', since it refuses root) cannot reach {path}: chmod o+x {parent}"
            )


def thread_stats(pid: int) -> dict[int, list[str]]:
    """Each live thread of process `pid` with the fields of its /proc/<pid>/task/<tid>/stat
    after the command name, so that field N of proc(5) is at index N - 3 (utime 14 at 11,
    stime 15 at 12, nice 19 at 16). Threads that end while they are read are left out."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out[int(task.name)] = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
    return out


def forget_attach_socket(pid: int) -> None:
    """Removes `/tmp/.java_pid<pid>`, the attach socket a JVM killed with -9 leaves behind
    (Elasticsearch attaches its entitlement agent to itself at boot). Left there, it makes a later
    node that gets the same pid under another Unix user (scripts/node.py runs each node of a
    cluster as its own) fail to boot: "well-known file ... is not secure"."""
    Path(f"/tmp/.java_pid{pid}").unlink(missing_ok=True)


def forget_dead_attach_sockets() -> None:
    """Removes the attach socket of every JVM that is gone, whoever killed it (a test, a bench
    peer, a timeout): run before a node starts, so its pid can never meet a stale one."""
    for socket_file in Path("/tmp").glob(".java_pid*"):
        pid = socket_file.name[len(".java_pid"):]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            try:
                socket_file.unlink(missing_ok=True)
            except PermissionError:  # another user's, and we are not root: not ours to clean
                pass


class Security:
    """Elasticsearch security on for one node (`Node(..., security=Security(...))`): the file
    realm's users, made with `bin/elasticsearch-users useradd` as an operator makes them, the
    roles of `roles_file` as the node's `config/roles.yml`, and HTTP without TLS (the node binds
    to loopback only; transport TLS is not needed by a single node). `users` maps a user name
    to its password and its roles; an administrator with the built-in `superuser` role is added
    for the node's own requests (readiness checks, `Node.get`)."""

    ADMIN = "eslm-admin"
    ADMIN_PASSWORD = "eslm-admin-password"

    def __init__(self, roles_file: Path, users: dict[str, tuple[str, list[str]]]):
        self.roles_file = Path(roles_file)
        self.users = {self.ADMIN: (self.ADMIN_PASSWORD, ["superuser"]), **users}

    def settings(self) -> dict[str, str]:
        return {
            "xpack.security.enabled": "true",
            "xpack.security.http.ssl.enabled": "false",
            "xpack.security.transport.ssl.enabled": "false",
        }

    def configure(self, es: Path, env: dict) -> None:
        """Copies the roles into the node's config folder and adds the users."""
        shutil.copyfile(self.roles_file, es / "config" / "roles.yml")
        for name, (password, roles) in self.users.items():
            result = subprocess.run(
                [str(es / "bin" / "elasticsearch-users"), "useradd", name, "-p", password, "-r", ",".join(roles)],
                env=env, capture_output=True, text=True,
            )
            if result.returncode != 0:
                raise RuntimeError(
                    f"elasticsearch-users useradd {name} failed ({result.returncode}):\n"
                    f"{result.stdout}\n{result.stderr}"
                )

    def authorization(self, user: str = ADMIN) -> str:
        """The `Authorization` header of `user` (basic authentication)."""
        password = self.users[user][0]
        return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


# Test nodes listen on ports below Linux's ephemeral range (32768-60999 by default), so that no
# outgoing connection's local port takes one. A node binds its ports only once it has booted
# (tens of seconds on a busy machine), and `make test` runs lanes side by side: CI saw a node's
# HTTP port answered by another node's transport, and a node fail to bind its port. So every port
# handed out is reserved for the life of the process that asked (a file named after it in
# PORT_RESERVATIONS, holding that process's pid), and no other process takes it meanwhile.
TEST_PORTS = range(20000, 32000)
PORT_RESERVATIONS = Path("/tmp/eslm-test-ports")
_handed_out: set[int] = set()


def _reserve(port: int) -> bool:
    """Whether `port` is now reserved for this process (a reservation of a dead process is taken over)."""
    PORT_RESERVATIONS.mkdir(exist_ok=True)
    path = PORT_RESERVATIONS / str(port)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                pid = int(path.read_text() or "0")
                os.kill(pid, 0)
                return False  # held by a live process
            except (ValueError, ProcessLookupError, FileNotFoundError):
                path.unlink(missing_ok=True)  # its process is gone: take it over
                continue
            except PermissionError:
                return False
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        return True
    return False


def free_port() -> int:
    """A port of TEST_PORTS reserved for this process that nothing on 127.0.0.1 listens on now."""
    rng = random.SystemRandom()
    for _ in range(500):
        port = rng.randrange(TEST_PORTS.start, TEST_PORTS.stop)
        if port in _handed_out or not _reserve(port):
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use by something outside the tests: keep it reserved, pick another
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free port in {TEST_PORTS}")


#: The environment variable of a library preloaded into a node's processes (`Node(env=...)`).
PRELOAD = "LD_PRELOAD"


class Node:
    """One Elasticsearch process with the plugin installed, on 127.0.0.1."""

    def __init__(self, cluster: str, name: str, http_port: int, transport_port: int,
                 seed_ports: list[int] | None = None, heap: str = "512m",
                 extra_settings: dict | None = None, user: str = RUN_AS,
                 security: Security | None = None, env: dict | None = None):
        if security is not None and seed_ports is not None:
            raise ValueError("security is set up for a single node only (no transport TLS)")
        self.cluster = cluster
        self.name = name
        self.http_port = http_port
        self.transport_port = transport_port
        self.seed_ports = seed_ports
        self.heap = heap
        self.extra_settings = dict(extra_settings or {})  # more `-E k=v`, e.g. locks.* settings
        # More environment for its processes, e.g. ESLM_FAULT_FLAW for a fault-injection plugin's
        # native library (docs/RELIABILITY.md "Who may serve"). An LD_PRELOAD among it (libfaketime:
        # docs/RELIABILITY.md "Clocks") reaches only the processes of the node's own user, not the
        # setpriv that drops root nor the plugin CLI (see `start`).
        self.extra_env = dict(env or {})
        # The Unix user that runs it when we are root: a node of its own in a cluster, so that a
        # test can cut its traffic by owner (scripts/netcut.py).
        self.user = user
        self.security = security  # None: security off, plain HTTP without users
        self.home = cluster_home(cluster) / name
        self.es = self.home / "es"
        self.data = self.home / "data"
        self.logs = self.home / "logs"
        self.process: subprocess.Popen | None = None
        self.wait_for_locks = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def log_file(self) -> Path:
        return self.logs / f"{self.cluster}.log"

    def install(self, version: str, plugin: Path, *more: Path) -> None:
        """A fresh node: its folder (data and logs too) is wiped, then a fresh copy of the
        distribution gets the plugin (and `more` plugins after it, e.g. one that extends it)
        installed by the real CLI. A restart keeps the node's data (see `start`)."""
        shutil.rmtree(self.home, ignore_errors=True)
        self.home.mkdir(parents=True, exist_ok=True)
        self._install_es(version, plugin, *more)

    def upgrade(self, version: str, plugin: Path) -> None:
        """Replaces the stopped node's Elasticsearch with a fresh copy of `version` holding
        `plugin`, keeping its data and logs: what an operator does to one node of a rolling
        upgrade (docs/OPERATIONS.md), or to every node of a full-cluster restart."""
        assert self.process is None or self.process.poll() is not None, "stop the node first"
        shutil.rmtree(self.es)
        self._install_es(version, plugin)

    def _install_es(self, version: str, plugin: Path, *more: Path) -> None:
        template = installed_distribution(version, (plugin, *more), self._env())
        linked_copy(template, self.es)
        self.version = version
        self.install_output = (template / INSTALLED_MARK).read_text()
        if self.security is not None:
            self.security.configure(self.es, self._env())
        if os.geteuid() == 0:
            ensure_run_as_user(self.user)
            check_reachable(self.home)
            subprocess.run(["chown", "-R", f"{self.user}:{self.user}", str(self.home)], check=True)

    def _env(self) -> dict:
        env = {**os.environ, **self.extra_env}
        if PRELOAD in self.extra_env:
            del env[PRELOAD]  # set by `start` once root is dropped
        env["ES_JAVA_HOME"] = java_home()
        env.pop("JAVA_HOME", None)  # ignored by Elasticsearch, with a warning
        env["HOME"] = str(self.home)
        env["ES_JAVA_OPTS"] = " ".join(filter(None, (
            f"-Xms{self.heap} -Xmx{self.heap} --enable-native-access=ALL-UNNAMED", extra_java_options())))
        if extra_java_options():
            env["CLI_JAVA_OPTS"] = extra_java_options()  # the launcher's and the plugin CLI's JVM
        return env

    def settings(self) -> list[str]:
        s = {
            "cluster.name": self.cluster,
            "node.name": self.name,
            "network.host": "127.0.0.1",
            "http.port": str(self.http_port),
            "transport.port": str(self.transport_port),
            "path.data": str(self.data),
            "path.logs": str(self.logs),
            "xpack.security.enabled": "false",
            **(self.security.settings() if self.security is not None else {}),
            "cluster.routing.allocation.disk.threshold_enabled": "false",
        }
        if self.seed_ports is None:
            s["discovery.type"] = "single-node"
        else:
            s["discovery.seed_hosts"] = ",".join(f"127.0.0.1:{p}" for p in self.seed_ports)
        s.update({k: str(v) for k, v in self.extra_settings.items()})
        return [arg for k, v in s.items() for arg in ("-E", f"{k}={v}")]

    @property
    def pid_file(self) -> Path:
        return self.home / "es.pid"

    def start(self, stdout=None) -> None:
        """Starts the node. With `stdout` given it runs in the caller's process group (so Ctrl-C
        reaches it); otherwise in a session of its own, output to logs/stdout.txt."""
        for d in (self.logs, self.data):
            d.mkdir(parents=True, exist_ok=True)
            if os.geteuid() == 0:
                shutil.chown(d, self.user, self.user)
        self.pid_file.unlink(missing_ok=True)
        forget_dead_attach_sockets()
        out = stdout if stdout is not None else open(self.home / "stdout.txt", "ab")
        # A preloaded library is set by `env` once root is dropped: libfaketime's first preloaded
        # process creates the semaphore and shared memory that its children open (it keeps their
        # common start time there), and one created by root (setpriv) the node's user cannot open.
        preload = self.extra_env.get(PRELOAD)
        self.process = subprocess.Popen(
            [*run_as_prefix(self.user), *(["env", f"{PRELOAD}={preload}"] if preload else []),
             str(self.es / "bin" / "elasticsearch"), "-p", str(self.pid_file), *self.settings()],
            env=self._env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=stdout is None,
        )

    def get(self, path: str, timeout: float = 5.0) -> dict:
        """GET as JSON; with security on, as the node's administrator (`Security.ADMIN`)."""
        headers = {} if self.security is None else {"Authorization": self.security.authorization()}
        with urllib.request.urlopen(urllib.request.Request(self.url + path, headers=headers), timeout=timeout) as r:
            return json.load(r)

    def wait_until_ready(self, timeout: float = 180.0, status: str = "yellow") -> dict:
        """Polls the cluster health until the node answers with at least `status` (this
        distribution serves no `GET /`); fails at once if the process dies. `"red"` waits only
        for an answer (a test that left an index with no usable copy). Returns the node's
        `_nodes/_local` entry."""
        deadline = time.monotonic() + timeout
        last_error = None
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with {self.process.returncode}; see {self.logs}\n"
                    + self.tail_log()
                )
            try:
                self.get(f"/_cluster/health?wait_for_status={status}&timeout=2s")
                if self.wait_for_locks:
                    # The lock index is created by the master once the cluster forms.
                    self.get("/_cluster/health/.locks?wait_for_status=yellow&timeout=2s")
                    if self.seed_ports is None:
                        self.check_serving()
                return next(iter(self.get("/_nodes/_local")["nodes"].values()))
            except (urllib.error.URLError, http.client.HTTPException, ConnectionError, OSError, StopIteration) as e:
                # HTTPException: something else answered on the port (a clash): the node then
                # fails to bind it and exits, which the check above reports with its log.
                last_error = e
            time.sleep(0.25)
        raise TimeoutError(f"{self.name} did not answer on {self.url} within {timeout}s: {last_error}")

    def check_serving(self) -> None:
        """Raises ConnectionError until this single node serves its lock partitions: each open and
        confirmed (an owner answers only on a current lease, docs/ARCHITECTURE.md "Silent
        owners"; right after a start the first confirmation may still be on its way, and a listing
        or grant then answers a retryable 503). A plugin too old to report `confirmed` counts as
        confirmed once open."""
        partitions = self.get("/_locks/_node/diagnostics")["core"]["partitions"]
        if not partitions:
            raise ConnectionError("lock partitions not open yet")
        unconfirmed = [p["id"] for p in partitions if not p.get("confirmed", True)]
        if unconfirmed:
            raise ConnectionError(f"lock partitions {unconfirmed} not confirmed yet")

    def stop(self, timeout: float = 60.0) -> int | None:
        """SIGTERM, then wait (SIGKILL after `timeout`). Returns the exit code."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def kill(self) -> None:
        """kill -9 of the server JVM (from its pid file) and its launcher: no clean-up at all,
        but for the JVM's attach socket, which the test's machine would otherwise keep."""
        pid = self.server_pid()
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if pid is not None:
            forget_attach_socket(pid)

    def server_pid(self) -> int | None:
        """The server JVM's pid from its pid file (the launcher's child), or None before it is
        written or after the node is gone. A JVM killed with -9 leaves its pid file behind, and
        pids wrap (at 32768 on the CI machines, where every JVM thread takes one): the pid counts
        only while its process is this node's server, or a signal meant for a dead node would
        stop or kill whatever process, of any test lane, got its number."""
        try:
            pid = int(self.pid_file.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return None
        return pid if f"-Des.path.home={self.es}\0".encode() in cmdline else None

    def freeze(self) -> bool:
        """SIGSTOP of the server JVM: alive but silent, like a long GC pause or a network cut.
        Returns whether a process was frozen."""
        return self._signal(signal.SIGSTOP)

    def thaw(self) -> bool:
        """SIGCONT: the frozen JVM runs on from where it stopped, with its stale view."""
        return self._signal(signal.SIGCONT)

    def _signal(self, sig: int) -> bool:
        pid = self.server_pid()
        if pid is None:
            return False
        try:
            os.kill(pid, sig)
            return True
        except ProcessLookupError:
            return False

    def tail_log(self, lines: int = 40) -> str:
        for f in (self.log_file, self.home / "stdout.txt"):
            if f.exists():
                return "\n".join(f.read_text(errors="replace").splitlines()[-lines:])
        return "(no log yet)"


def running(node: Node, variant: str | None = None, also: tuple[Path, ...] = ()):
    """Installs `node` fresh (its folder is wiped: no data or settings carried over), starts it,
    yields it once it serves locks, and stops it, checking that it stopped cleanly. `variant`
    picks the plugin zip (`"fault-injection"`: the test-only one, see `plugin_zip`); `also`
    names more plugin zips installed after it (a plugin that extends it). A generator, for
    pytest fixtures: `yield from running(Node(...))`."""
    version = es_version()
    node.install(version, plugin_zip(version, variant), *also)
    node.start()
    try:
        node.wait_until_ready()
        yield node
    finally:
        code = node.stop()
        assert code in (0, 143, None), f"node exited with {code}:\n{node.tail_log()}"


class Cluster:
    """`size` nodes on loopback forming one cluster (every node master-eligible). Node i runs as the
    Unix user `<users><i>`: scripts/netcut.py cuts a node's traffic by its user, so a cluster
    whose nodes get cut takes users no cluster running beside it shares."""

    def __init__(self, name: str, size: int, extra_settings: dict | None = None, heap: str = "384m",
                 variant: str | None = None, users: str = RUN_AS, env: dict | None = None):
        self.variant = variant  # which plugin zip (see plugin_zip)
        transport_ports = [free_port() for _ in range(size)]
        names = [f"node-{i}" for i in range(size)]
        settings = {"cluster.initial_master_nodes": ",".join(names), **(extra_settings or {})}
        self.nodes = [
            Node(name, names[i], free_port(), transport_ports[i], seed_ports=transport_ports,
                 heap=heap, extra_settings=settings, user=f"{users}{i}", env=env)
            for i in range(size)
        ]

    def start(self, version: str | None = None, plugin: Path | None = None) -> None:
        """Installs every node fresh, with Elasticsearch `version` (default: `es_version()`) and
        the `plugin` zip (default: the one built for that version), and starts them."""
        version = version or es_version()
        for node in self.nodes:
            node.install(version, plugin or plugin_zip(version, self.variant))
        try:
            for node in self.nodes:
                node.start()
            for node in self.nodes:
                node.wait_until_ready()
            # Every partition's replica placed too, so tests start from a settled cluster.
            self.nodes[0].get("/_cluster/health/.locks?wait_for_status=green&timeout=120s", timeout=130)
        except BaseException:
            self.stop()  # a node that did not come up must not leave the others running
            raise

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


class Signalled(Exception):
    """SIGTERM or SIGHUP reached `run`: it stops its node before it exits."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_signalled(signum, _frame):
    _ignore_stop_signals()  # a second signal must not interrupt the node's stop
    raise Signalled(signum)


def _ignore_stop_signals() -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)


def run(args: argparse.Namespace) -> int:
    """`make run`: one node in the foreground, stopped (SIGTERM, then SIGKILL after a minute) when
    this wrapper ends for any reason: Ctrl-C, SIGTERM or SIGHUP (a closed terminal, a supervisor)
    included. Python's default for SIGTERM and SIGHUP ends the process without `finally`, which
    left the node running."""
    version = es_version()
    node = Node("eslm-run", "node-0", args.port, args.transport_port)
    print(f"installing {plugin_zip(version).name} into Elasticsearch {version} ...", flush=True)
    node.install(version, plugin_zip(version))
    print(f"starting Elasticsearch {version} on {node.url} (data: {node.data}) ...", flush=True)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _raise_signalled)
    try:
        node.start(stdout=open(node.home / "stdout.txt", "ab"))
        info = node.wait_until_ready()
        print(f"\nElasticsearch {info['version']} with the lock manager is up at {node.url}")
        print(f"logs: {node.log_file}\n", flush=True)
        print("Try it:")
        print(f"  curl -s -XPOST '{node.url}/_locks/orders-42/_acquire' -H 'Content-Type: application/json' -d '{{\"owner\":\"worker-1\",\"acquisition\":\"a-1\"}}'")
        print(f"  curl -s '{node.url}/_locks/orders-42'")
        print(f"  curl -s -XPOST '{node.url}/_locks/orders-42/_release' -H 'Content-Type: application/json' -d '{{\"owner\":\"worker-1\",\"acquisition\":\"a-1\"}}'")
        print(f"  curl -s '{node.url}/_locks/_node/diagnostics?pretty'")
        print("\nCtrl-C stops the node.", flush=True)
        return node.process.wait()
    except (KeyboardInterrupt, Signalled) as e:
        _ignore_stop_signals()
        print(f"\n{e if isinstance(e, Signalled) else 'interrupted'}: stopping ...", flush=True)
        code = node.stop()
        print(f"stopped (exit code {code})", flush=True)
        return 128 + e.signum if isinstance(e, Signalled) else 0
    finally:
        _ignore_stop_signals()
        node.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="install the plugin and run one node in the foreground")
    r.add_argument("--port", type=int, default=9200, help="HTTP port (default 9200)")
    r.add_argument("--transport-port", type=int, default=9300, help="transport port (default 9300)")
    sub.add_parser("version", help="print the Elasticsearch version in use")
    sub.add_parser("fetch", help="fetch and unpack the Elasticsearch distribution")
    args = parser.parse_args()
    if args.command == "run":
        return run(args)
    if args.command == "version":
        print(es_version())
        return 0
    if args.command == "fetch":
        print(distribution(es_version()))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
