"""The lock services compared by bench/run.py: how to start each one on loopback, and a client
per peer with one interface:

    c = peer.client(i)            # one connection (one session) per client thread
    tok = c.acquire(key, prio)    # blocks until granted (server-side queue or client polling)
    c.release(key, tok)
    c.requests                    # requests this client sent to the server so far
    c.close()

Every server is started by this module in a temporary folder, on a free 127.0.0.1 port, and
stopped by `stop()`. Nothing listens on another address."""

from __future__ import annotations

import base64
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import node as esnode  # noqa: E402

WAIT_S = 30  # longest server-side wait of one acquire (never reached in a healthy run)
LEASE_S = 60  # lease / TTL of every grant (longer than any workload)
POLL_S = 0.001  # polling peers: sleep between tries (the Kestra seed's Thread.sleep(1))
SEMAPHORE_LIMIT = 4  # the semaphore workload: one permit of a semaphore of this limit
# Heap of every plugin node (bench/run.py --plugin-heap). With 1 GB or less Elasticsearch reads
# HTTP bodies into unpooled buffers (~110 KB of garbage per request), so a small heap costs
# latency; the machine the figures come from has 24 GiB.
PLUGIN_HEAP = "2g"


class BenchError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 60.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise BenchError(f"server exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise BenchError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


def cpu_seconds(pid: int | tuple[int, ...] | None) -> float | None:
    """User+system CPU seconds of a process, or the sum over several (a three-server peer), for
    server CPU per grant."""
    if not pid:
        return None
    if isinstance(pid, tuple):
        parts = [cpu_seconds(p) for p in pid]
        return None if None in parts else sum(parts)
    try:
        return stat_cpu_seconds(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split())
    except (OSError, IndexError, ValueError):
        return None


def stat_cpu_seconds(fields: list[str]) -> float:
    """User+system CPU seconds from the fields of a /proc stat line after the command name
    (utime and stime, proc(5) fields 14 and 15, in clock ticks): of a process or of one thread."""
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- installation of missing peers -------------------------------------------------------------

APT = {"zookeeper": "zookeeper", "etcd": "etcd-server", "redis": "redis-server"}
PIP = {"kazoo": "kazoo", "redis": "redis", "matplotlib": "matplotlib"}


def ensure_installed(peers: list[str], log=print) -> None:
    """apt-get installs the Debian packages of the chosen peers and pip-installs the Python
    clients, each only when missing (a fresh CI machine has none of them). The three-server
    peers (`zookeeper-3`, `etcd-3`) need what their single-server peers need."""
    peers = sorted({p.removesuffix("-3") for p in peers})
    need_apt = []
    if "zookeeper" in peers and not Path("/usr/share/java/zookeeper.jar").exists():
        need_apt.append(APT["zookeeper"])
    if "etcd" in peers and not shutil.which("etcd"):
        need_apt.append(APT["etcd"])
    if "redis" in peers and not shutil.which("redis-server"):
        need_apt.append(APT["redis"])
    if need_apt:
        log(f"apt-get install {' '.join(need_apt)} ...")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        # no-install-recommends; services are not started by us (policy-rc.d in containers),
        # and we never use the system instances: every server below runs on its own port.
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *need_apt],
                       check=True, env=env, stdout=subprocess.DEVNULL)
    need_pip = []
    for mod, pkg in PIP.items():
        if mod == "kazoo" and "zookeeper" not in peers and "zookeeper-prefix" not in peers:
            continue
        if mod == "redis" and "redis" not in peers:
            continue
        try:
            __import__(mod)
        except ImportError:
            need_pip.append(pkg)
    if need_pip:
        log(f"pip install {' '.join(need_pip)} ...")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *need_pip], check=True)


# --- a minimal keep-alive JSON-over-HTTP client ------------------------------------------------


class Http:
    """One persistent HTTP/1.1 connection (keep-alive), JSON in and out. Lighter on the client's
    CPU than `requests` (the client shares 2 cores with the servers), same wire traffic."""

    def __init__(self, port: int, timeout: float = WAIT_S + 30):
        self.port = port
        self.timeout = timeout
        self.conn: http.client.HTTPConnection | None = None
        self.requests = 0

    def _connect(self):
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        self.conn.connect()
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def call(self, method: str, path: str, body=None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        for attempt in (0, 1):
            if self.conn is None:
                self._connect()
            try:
                self.requests += 1
                self.conn.request(method, path, body=data, headers=headers)
                r = self.conn.getresponse()
                raw = r.read()
                return r.status, (json.loads(raw) if raw else {})
            except (http.client.HTTPException, ConnectionError, OSError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self):
        if self.conn is not None:
            self.conn.close()


# --- peers -------------------------------------------------------------------------------------


class Peer:
    name = "?"
    label = "?"
    priorities = False  # does the client's acquire honour a priority?

    def start(self, workdir: Path, log=print) -> None: ...

    def stop(self) -> None: ...

    def client(self, i: int): ...

    def server_pid(self) -> int | None:
        return None

    def version(self) -> str:
        return "?"

    def setup_key(self, key: str) -> None:
        """Called once before a workload for each key it uses (persistent parents, ...)."""

    def after_workload(self) -> dict:
        """Figures the server itself reports about the workload just run, added to its result."""
        return {}


def replication_figures(node) -> dict:
    """Partition 0's batch round trips over the owner's last 1024 batches, from its
    `GET /_locks/_node/diagnostics` (docs/API.md): what replication adds to every hand-off, as
    the plugin measured it. Empty when `node` does not replicate partition 0 (memory mode)."""
    for part in node.get("/_locks/_node/diagnostics").get("core", {}).get("partitions", []):
        trip = (part.get("replication") or {}).get("round_trip_ms") if part.get("id") == 0 else None
        if trip:
            return {"replication_round_trip_p50_ms": trip["p50"],
                    "replication_round_trip_p99_ms": trip["p99"]}
    return {}


class EsNode:
    """One Elasticsearch node with the plugin. `ES` is shared by the plugin, the document recipe
    and the ES floor; `ES_MEMORY` is the memory-mode plugin's own node. Each has its own folder
    (build/<folder>-<pid>), ports, data and process, so both can run in one bench process;
    `settings` go to the node as `-E key=value` (say `locks.durability`), and the effective
    `locks.durability` is read back from the node's diagnostics."""

    def __init__(self, settings: dict[str, str] | None = None, folder: str = "eslm-bench"):
        self.node = None
        self.settings = dict(settings or {})
        self.folder = folder
        self.durability = None
        self.heap = None

    def start(self, log=print) -> None:
        if self.node is not None:
            return
        self.heap = PLUGIN_HEAP
        version = esnode.es_version()
        zip_ = esnode.plugin_zip(version)
        self.version = version
        # a folder of its own per run (build/<folder>-<pid>), removed by stop(): two runs
        # (say the smoke test and a full run) never share a node folder, nor two nodes of a run
        self.node = esnode.Node(f"{self.folder}-{os.getpid()}", "node-0", esnode.free_port(),
                                esnode.free_port(), heap=PLUGIN_HEAP, extra_settings=self.settings)
        log(f"Elasticsearch {version} + {zip_.name} on 127.0.0.1:{self.node.http_port}"
            f" (heap {PLUGIN_HEAP})"
            + "".join(f" -E {k}={v}" for k, v in self.settings.items()) + " ...")
        try:
            self.node.install(version, zip_)
            self.node.start()
            self.node.wait_until_ready()
        except Exception:
            self.stop()
            raise
        h = Http(self.node.http_port)
        st, body = h.call("PUT", "/lock", {"settings": {"number_of_shards": 1,
                                                        "number_of_replicas": 0}})
        if st != 200:
            raise BenchError(f"cannot create the lock index: {st} {body}")
        h.call("GET", "/_cluster/health/lock?wait_for_status=green&timeout=30s")
        diag = h.call("GET", "/_locks/_node/diagnostics")[1]
        self.plugin_version = diag.get("plugin", {})
        self.durability = diag.get("settings", {}).get("locks.durability")
        h.close()

    def pid(self) -> int | None:
        return None if self.node is None else self.node.server_pid()

    def stop(self) -> None:
        if self.node is not None:
            self.node.stop()
            shutil.rmtree(self.node.home.parent, ignore_errors=True)
            self.node = None


ES = EsNode()
# the memory-mode single node (peer plugin-memory): the old behaviour, on its own node and folder
ES_MEMORY = EsNode(settings={"locks.durability": "memory"}, folder="eslm-bench-memory")


class PluginClient:
    """Locks (`/_locks/{key}`); `SemaphoreClient` the same calls on `/_semaphores/{name}`."""

    base = "/_locks"
    extra: dict = {}

    def __init__(self, port: int, i: int, prefix: str):
        self.h = Http(port)
        self.owner = f"{prefix}-c{i}"

    @property
    def requests(self):
        return self.h.requests

    def acquire(self, key: str, priority: str = "foreground"):
        st, body = self.h.call("POST", f"{self.base}/{key}/_acquire",
                               {"owner": self.owner, "wait": f"{WAIT_S}s", "lease": f"{LEASE_S}s",
                                "priority": priority, **self.extra})
        if st != 200:
            raise BenchError(f"plugin acquire {self.base}/{key}: {st} {body}")
        return body["fencing_token"]

    def release(self, key: str, token):
        st, body = self.h.call("POST", f"{self.base}/{key}/_release",
                               {"owner": self.owner, "fencing_token": token})
        if st != 200:
            raise BenchError(f"plugin release {self.base}/{key}: {st} {body}")

    def close(self):
        self.h.close()


class SemaphoreClient(PluginClient):
    """One permit of a semaphore of limit SEMAPHORE_LIMIT (docs/API.md, "Semaphores")."""

    base = "/_semaphores"
    extra = {"permits": 1, "limit": SEMAPHORE_LIMIT}


class Plugin(Peer):
    """This plugin on one node (`ES`, shared with the document recipe and the ES floor), with
    the node's default `locks.durability` (replicated)."""

    name = "plugin"
    label = "this plugin (ES REST)"
    priorities = True
    es = ES
    owner_prefix = "r"

    def start(self, workdir, log=print):
        self.es.start(log)
        self._n = 0

    def stop(self):
        pass  # the node is stopped once, after the document recipe too (see run.py)

    def client(self, i, kind=PluginClient):
        self._n += 1
        return kind(self.es.node.http_port, i, f"{self.owner_prefix}{self._n}")

    def semaphore_client(self, i):
        return self.client(i, SemaphoreClient)

    def server_pid(self):
        return self.es.pid()

    def after_workload(self):
        return replication_figures(self.es.node)

    @property
    def durability(self):
        return self.es.durability

    def version(self):
        p = getattr(self.es, "plugin_version", {}) or {}
        return (f"Elasticsearch {self.es.version}, plugin {p.get('version', '?')} "
                f"({p.get('native_version', '?')}); locks.durability: {self.es.durability or '?'}; "
                f"heap {self.es.heap}")


class PluginMemory(Plugin):
    """As `plugin`, but on a node of its own started with `locks.durability: memory` (the
    behaviour before replication: lock state in the owner's memory only, no log, no fsync)."""

    name = "plugin-memory"
    label = "this plugin, locks.durability: memory (ES REST)"
    es = ES_MEMORY
    owner_prefix = "m"

    def stop(self):
        self.es.stop()  # no other peer uses this node (stop_shared stops it too, idempotently)


class DocClient:
    """The seeds' document lock: `PUT lock/_create/{id}`; 409 → sleep and retry (the Kestra
    seed's loop sleeps 1 ms between tries); release = `DELETE lock/_doc/{id}`."""

    def __init__(self, port: int, i: int):
        self.h = Http(port)
        self.owner = f"c{i}"

    @property
    def requests(self):
        return self.h.requests

    def acquire(self, key: str, priority: str = "foreground"):
        deadline = time.monotonic() + WAIT_S
        while True:
            st, body = self.h.call("PUT", f"/lock/_create/{key}", {"owner": self.owner})
            if st in (200, 201):
                return body.get("_seq_no")
            if st != 409:
                raise BenchError(f"doc create {key}: {st} {body}")
            if time.monotonic() > deadline:
                raise BenchError(f"doc lock {key}: not granted in {WAIT_S}s")
            time.sleep(POLL_S)

    def release(self, key: str, token):
        st, body = self.h.call("DELETE", f"/lock/_doc/{key}")
        if st != 200:
            raise BenchError(f"doc delete {key}: {st} {body}")

    def close(self):
        self.h.close()


class DocRecipe(Peer):
    name = "doc-recipe"
    label = "document lock (_create/DELETE)"

    def start(self, workdir, log=print):
        ES.start(log)

    def client(self, i):
        return DocClient(ES.node.http_port, i)

    def server_pid(self):
        return ES.pid()

    def version(self):
        return f"Elasticsearch {ES.version} (same node), index `lock` 1 shard 0 replicas"


class FloorClient:
    """Not a lock: two trivial Elasticsearch requests (a realtime GET of a missing document,
    answered 404 by a shard-level transport action on the same node) per "pair". The floor
    of any REST lock on this node: HTTP, REST dispatch, a transport action, a tiny JSON answer."""

    def __init__(self, port: int, i: int):
        self.h = Http(port)
        self.path = f"/lock/_doc/floor-{i}"

    @property
    def requests(self):
        return self.h.requests

    def acquire(self, key: str, priority: str = "foreground"):
        st, body = self.h.call("GET", self.path)
        if st != 404:
            raise BenchError(f"floor GET: {st} {body}")
        return None

    def release(self, key: str, token):
        self.acquire(key)

    def close(self):
        self.h.close()


class EsFloor(Peer):
    name = "es-floor"
    label = "ES floor: 2 trivial GETs (not a lock)"

    def start(self, workdir, log=print):
        ES.start(log)

    def client(self, i):
        return FloorClient(ES.node.http_port, i)

    def server_pid(self):
        return ES.pid()

    def version(self):
        return f"Elasticsearch {ES.version} (same node): 2 × GET /lock/_doc/<missing> per pair"


class Plugin3(Peer):
    """Three Elasticsearch nodes with the plugin (scripts/node.py's `Cluster`, every node
    master-eligible, heap PLUGIN_HEAP each like the single node), in build/eslm-bench3-<pid>, removed
    by stop(). The lock index `.locks` (auto_expand_replicas 0-1) has one replica on three
    nodes; start() waits for it to be green and notes which node owns partition 0 (the
    primary), from each node's `GET /_locks/_node/diagnostics`.

    Clients: `route = "spread"` (the default) deals client i to node i mod 3, as a client with
    the node list (or a load balancer) would, and as the ZooKeeper and etcd ensembles' clients
    are dealt here; so two clients in three reach the owner through one more transport hop.
    `route = "owner"` sends every client to the owner of partition 0 (every key of the bench is
    there while `locks.partitions` is 1): the figure without that hop.

    `settings` go to every node as `-E key=value` (say `locks.durability`); the effective
    `locks.durability` is read back from the diagnostics and shown with the figures."""

    name = "plugin-3"
    label = "this plugin, 3 nodes, 1 replica (ES REST)"
    priorities = True
    route = "spread"

    def __init__(self):
        self.cluster = None
        self.owner = None
        self.settings: dict[str, str] = {}
        self.durability = None
        self._n = 0

    def start(self, workdir, log=print):
        version = esnode.es_version()
        zip_ = esnode.plugin_zip(version)
        self.es_version = version
        self.cluster = esnode.Cluster(f"eslm-bench3-{os.getpid()}", 3, heap=PLUGIN_HEAP,
                                      extra_settings=self.settings)
        log(f"Elasticsearch {version} + {zip_.name}, 3 nodes on 127.0.0.1:"
            f"{','.join(str(n.http_port) for n in self.cluster.nodes)} (heap {PLUGIN_HEAP} each) ...")
        try:
            self.cluster.start()  # every node ready, then .locks green
            self._find_owner()
        except Exception:
            self.stop()
            raise

    def _find_owner(self) -> None:
        """The node that owns partition 0, once it is active and confirmed by the master and no copy
        of `.locks` moves (the plugin moves copies off the elected master); the shards of `.locks`
        (one primary and one replica expected)."""
        deadline = time.monotonic() + 60
        while True:  # every copy started, none moving
            self.shards = self.cluster.nodes[0].get(
                "/_cat/shards/.locks?format=json&h=shard,prirep,state,node", timeout=10)
            if self.shards and all(s.get("state") == "STARTED" for s in self.shards) or time.monotonic() > deadline:
                break
            time.sleep(0.25)
        while True:
            for node in self.cluster.nodes:
                diag = node.get("/_locks/_node/diagnostics")
                for part in diag.get("core", {}).get("partitions", []):
                    if part.get("id") == 0 and part.get("confirmed", True):
                        self.owner = node
                        self.plugin_version = diag.get("plugin", {})
                        self.durability = diag.get("settings", {}).get("locks.durability")
            if self.owner is not None:
                break
            if time.monotonic() > deadline:
                raise BenchError("no node owns lock partition 0 after 60 s")
            time.sleep(0.25)
        replicas = [s for s in self.shards if s.get("prirep") == "r" and s.get("state") == "STARTED"]
        if not replicas:
            raise BenchError(f".locks has no started replica on 3 nodes: {self.shards}")

    def stop(self):
        if self.cluster is not None:
            self.cluster.stop()
            shutil.rmtree(self.cluster.nodes[0].home.parent, ignore_errors=True)
            self.cluster = None

    def client(self, i, kind=PluginClient):
        self._n += 1
        nodes = self.cluster.nodes
        node = self.owner if self.route == "owner" else nodes[i % len(nodes)]
        return kind(node.http_port, i, f"t{self._n}")

    def semaphore_client(self, i):
        return self.client(i, SemaphoreClient)

    def after_workload(self):
        return replication_figures(self.owner)

    def server_pid(self):
        pids = tuple(n.server_pid() for n in self.cluster.nodes) if self.cluster is not None else ()
        return pids if pids and None not in pids else None

    def version(self):
        p = getattr(self, "plugin_version", {}) or {}
        shards = ", ".join(f"{'primary' if s['prirep'] == 'p' else 'replica'} on {s['node']}"
                           for s in getattr(self, "shards", []))
        route = ("client i to node-(i mod 3)" if self.route == "spread"
                 else f"every client to the owner {self.owner.name}")
        return (f"Elasticsearch {self.es_version}, plugin {p.get('version', '?')} "
                f"({p.get('native_version', '?')}); 3 nodes, `.locks` {shards}; "
                f"partition 0 owned by {self.owner.name if self.owner else '?'}; "
                f"locks.durability: {self.durability or '?'}; heap {PLUGIN_HEAP} per node; {route}"
                + "".join(f"; -E {k}={v}" for k, v in self.settings.items()))


def spawn(argv, log_path: Path, cwd: Path, env=None) -> subprocess.Popen:
    """A server process in a session of its own (Ctrl-C of the run does not reach it; `stop_proc`
    does), its output appended to `log_path`."""
    out = open(log_path, "ab")
    return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True, cwd=cwd)


def kill9(proc: subprocess.Popen) -> None:
    """kill -9, and reap it (a failover measurement's node death)."""
    proc.kill()
    proc.wait()


def stop_proc(proc: subprocess.Popen | None) -> None:
    """SIGTERM, then SIGKILL after 15 s."""
    if proc is not None and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class ServerProcess(Peer):
    """A peer that is one server process we start ourselves."""

    proc: subprocess.Popen | None = None

    def _spawn(self, argv, workdir: Path, port: int, env=None, timeout=60.0):
        self.proc = spawn(argv, workdir / f"{self.name}.log", workdir, env)
        try:
            wait_port(port, timeout, self.proc)
        except Exception:
            self.stop()
            raise

    def stop(self):
        stop_proc(self.proc)
        self.proc = None

    def server_pid(self):
        return self.proc.pid if self.proc is not None else None


# ZooKeeper -------------------------------------------------------------------------------------


class ZooKeeperServer:
    """ZooKeeper (Debian's jars): one standalone server (`ZooKeeperServerMain`), shared by the
    kazoo Lock peer and the prefix recipe, or with `servers=3` an ensemble of three
    (`QuorumPeerMain`, `server.1..3` on loopback ports, a `myid` per data folder; every write is
    agreed by a majority before it is answered). Defaults kept (forceSync=yes: every write is
    fsynced, as users run it), except maxClientCnxns=0 (the default 60 per address is below 64
    clients + 1)."""

    def __init__(self, servers: int = 1):
        self.servers = servers
        self.procs: list[subprocess.Popen] = []
        self.ports: list[int] = []
        self.modes: list[str] = []
        self.spawned: list[tuple] = []  # each server's (argv, log, cwd), to start it again

    def kill_member(self, k: int) -> None:
        """kill -9 of server k (bench/failover.py)."""
        kill9(self.procs[k])

    def restart_member(self, k: int) -> None:
        """Server k again, on its data folder; answers once every server answers `srvr`."""
        self.procs[k] = spawn(*self.spawned[k])
        wait_port(self.ports[k], 60, self.procs[k])
        self.modes = [self._srvr(port) for port in self.ports]

    @property
    def port(self) -> int:
        return self.ports[0]

    def hosts(self, first: int = 0) -> str:
        """kazoo's connect string, every server, starting at server `first` (mod n)."""
        k = first % len(self.ports)
        return ",".join(f"127.0.0.1:{p}" for p in self.ports[k:] + self.ports[:k])

    def pids(self):
        """The server pid, or a tuple of them for an ensemble (cpu_seconds sums them)."""
        if not self.procs:
            return None
        return self.procs[0].pid if self.servers == 1 else tuple(p.pid for p in self.procs)

    def start(self, workdir: Path, log=print):
        if self.procs:
            return
        n = self.servers
        base = workdir / ("zookeeper" if n == 1 else f"zookeeper-{n}")
        self.ports = [free_port() for _ in range(n)]
        quorum = [(free_port(), free_port()) for _ in range(n)] if n > 1 else []
        java = shutil.which("java") or "/usr/bin/java"
        cp = ("/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:"
              "/usr/share/java/log4j-1.2.jar")
        log(f"ZooKeeper{'' if n == 1 else f' ensemble of {n}'} on 127.0.0.1:"
            f"{','.join(map(str, self.ports))} ...")
        for k in range(n):
            d = base if n == 1 else base / f"s{k + 1}"
            (d / "data").mkdir(parents=True, exist_ok=True)
            cfg = (f"tickTime=2000\ndataDir={d / 'data'}\nclientPort={self.ports[k]}\n"
                   "clientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n"
                   "4lw.commands.whitelist=srvr\n")
            if n > 1:
                cfg += "initLimit=10\nsyncLimit=5\n" + "".join(
                    f"server.{j + 1}=127.0.0.1:{q}:{e}\n" for j, (q, e) in enumerate(quorum))
                (d / "data" / "myid").write_text(f"{k + 1}\n")
            (d / "zoo.cfg").write_text(cfg)
            (d / "log4j.properties").write_text(
                "log4j.rootLogger=WARN, F\nlog4j.appender.F=org.apache.log4j.FileAppender\n"
                f"log4j.appender.F.File={d / 'zookeeper.log'}\n"
                "log4j.appender.F.layout=org.apache.log4j.PatternLayout\n"
                "log4j.appender.F.layout.ConversionPattern=%d %p %c: %m%n\n")
            main = ("org.apache.zookeeper.server.ZooKeeperServerMain" if n == 1
                    else "org.apache.zookeeper.server.quorum.QuorumPeerMain")
            argv = [java, "-Xmx512m", f"-Dlog4j.configuration=file:{d / 'log4j.properties'}",
                    "-Dzookeeper.admin.enableServer=false", "-cp", cp, main, str(d / "zoo.cfg")]
            self.spawned.append((argv, d / "stdout.txt", d))
            self.procs.append(spawn(argv, d / "stdout.txt", d))
        try:
            for port, proc in zip(self.ports, self.procs):
                wait_port(port, 60, proc)
            # ready = every server answers `srvr` (an ensemble member only once it has a leader)
            self.modes = [self._srvr(port) for port in self.ports]
        except Exception:
            self.stop()
            raise

    def _srvr(self, port: int) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
                    s.sendall(b"srvr")
                    reply = s.recv(4096).decode(errors="replace")
                if "Zookeeper version" in reply:
                    self.version = reply.splitlines()[0].split(":", 1)[1].strip().split(",")[0]
                    return next((ln.split(":", 1)[1].strip() for ln in reply.splitlines()
                                 if ln.startswith("Mode:")), "?")
            except OSError:
                pass
            time.sleep(0.2)
        raise BenchError(f"ZooKeeper on {port} did not answer srvr")

    def stop(self):
        for proc in self.procs:
            stop_proc(proc)
        self.procs = []


ZK = ZooKeeperServer()
ZK3 = ZooKeeperServer(servers=3)


def _counted_kazoo(hosts: str):
    """A started KazooClient whose requests to the server are counted (every ZooKeeper request
    of kazoo goes through `_call`). `hosts` is a connect string; with several servers the client
    connects to the first one (not a random one: the bench deals clients over the servers)."""
    import logging

    from kazoo.client import KazooClient

    logging.getLogger("kazoo").setLevel(logging.ERROR)
    zk = KazooClient(hosts=hosts, timeout=10.0, randomize_hosts=False)
    zk.start(timeout=30)
    counter = [0]
    orig = zk._call

    def _call(request, async_object):
        counter[0] += 1
        return orig(request, async_object)

    zk._call = _call
    return zk, counter


class KazooClientLock:
    """kazoo's standard Lock recipe (sequential ephemeral node, watch the predecessor)."""

    def __init__(self, hosts: str, i: int):
        self.zk, self.counter = _counted_kazoo(hosts)
        self.i = i
        self.locks = {}

    @property
    def requests(self):
        return self.counter[0]

    def acquire(self, key: str, priority: str = "foreground"):
        lock = self.locks.get(key)
        if lock is None:
            lock = self.locks[key] = self.zk.Lock(f"/bench/{key}", f"c{self.i}")
        if not lock.acquire(timeout=WAIT_S):
            raise BenchError(f"kazoo lock {key}: not granted in {WAIT_S}s")
        return lock.node

    def release(self, key: str, token):
        self.locks[key].release()

    def close(self):
        try:
            self.zk.stop()
            self.zk.close()
        except Exception:
            pass


class KazooClientSemaphore(KazooClientLock):
    """kazoo's Semaphore recipe (`max_leases` SEMAPHORE_LIMIT): a kazoo Lock on `<path>/lock`
    guards the count of ephemeral lease nodes under `<path>/leases`; a full semaphore watches
    them."""

    def acquire(self, key: str, priority: str = "foreground"):
        sem = self.locks.get(key)
        if sem is None:
            sem = self.locks[key] = self.zk.Semaphore(f"/bench-sem/{key}", f"c{self.i}",
                                                      max_leases=SEMAPHORE_LIMIT)
        if not sem.acquire(timeout=WAIT_S):
            raise BenchError(f"kazoo semaphore {key}: not granted in {WAIT_S}s")
        return None


class ZooKeeper(Peer):
    name = "zookeeper"
    label = "ZooKeeper + kazoo Lock"
    server = ZK
    route = "spread"  # an ensemble's clients: "spread" (i mod 3) or "owner" (all on the leader)

    def start(self, workdir, log=print):
        self.server.start(workdir, log)

    def _server_of(self, i: int) -> int:
        """An ensemble's client i connects to server i mod 3 first (the others are its
        fallbacks), or with route "owner" to the leader, as the plugin's clients go to the owner."""
        if self.route == "owner" and "leader" in self.server.modes:
            return self.server.modes.index("leader")
        return i

    def client(self, i):
        return KazooClientLock(self.server.hosts(self._server_of(i)), i)

    def semaphore_client(self, i):
        return KazooClientSemaphore(self.server.hosts(self._server_of(i)), i)

    def server_pid(self):
        return self.server.pids()

    def version(self):
        import kazoo.version

        v = f"ZooKeeper {getattr(self.server, 'version', '?')}, kazoo {kazoo.version.__version__}"
        if self.server.servers > 1:
            v += (f"; ensemble of {self.server.servers} ({', '.join(self.server.modes)}), "
                  + ("every client connects to the leader" if self.route == "owner"
                     else "client i connects to server i mod 3"))
        return v


class Plugin3Partitions(Plugin3):
    """Plugin3 with three lock partitions and one primary on each node (issue 51 item 4):
    `locks.partitions: 3`, and the copies allowed on the elected master
    (`locks.allocation.avoid_master: false`) so that the master owns one too. Where Elasticsearch's
    allocator put two primaries on one node, start() fails one of them over to a replica on a node
    without a primary (reroute `cancel` with `allow_primary`), until each node owns one
    partition. A key's partition follows from its hash, so the clients (`route = "spread"`)
    reach their key's owner directly one time in three, as with one partition; "owner" sends
    every client to partition 0's owner, which then owns a third of the keys only."""

    name = "plugin-3x3"
    label = "this plugin, 3 nodes, 3 partitions (one primary per node), 1 replica (ES REST)"

    def __init__(self):
        super().__init__()
        self.settings = {"locks.partitions": "3", "locks.allocation.avoid_master": "false"}

    def start(self, workdir, log=print):
        super().start(workdir, log)
        try:
            self._one_primary_per_node(log)
            self.owner = None
            self._find_owner()
        except Exception:
            self.stop()
            raise

    def _one_primary_per_node(self, log) -> None:
        node = self.cluster.nodes[0]
        deadline = time.monotonic() + 120
        while True:
            shards = node.get("/_cat/shards/.locks?format=json&h=shard,prirep,state,node", timeout=10)
            primaries: dict[str, list[str]] = {}
            for s in shards:
                if s.get("prirep") == "p":
                    primaries.setdefault(s["node"], []).append(s["shard"])
            started = len(shards) == 6 and all(s.get("state") == "STARTED" for s in shards)
            if started and len(primaries) == 3:
                return
            if time.monotonic() > deadline:
                raise BenchError(f"no primary of `.locks` on each node after 120 s: {shards}")
            crowded = [(n, sh) for n, held in primaries.items() if len(held) > 1 for sh in held]
            replica_on = {s["shard"]: s["node"] for s in shards if s.get("prirep") == "r"}
            fail = next(((n, sh) for n, sh in crowded if replica_on.get(sh) not in primaries), None)
            if started and fail is not None:
                log(f"plugin-3x3: shard {fail[1]}'s primary fails over from {fail[0]} to "
                    f"{replica_on[fail[1]]}, which owns no partition")
                admin = Http(node.http_port, timeout=30)
                try:
                    status, answer = admin.call("POST", "/_cluster/reroute", {"commands": [{"cancel": {
                        "index": ".locks", "shard": int(fail[1]), "node": fail[0], "allow_primary": True}}]})
                finally:
                    admin.close()
                if status != 200:
                    raise BenchError(f"reroute cancel of shard {fail[1]}: {status} {answer}")
            time.sleep(0.5)


class ZooKeeper3(ZooKeeper):
    name = "zookeeper-3"
    label = "ZooKeeper ensemble of 3 + kazoo Lock"
    server = ZK3

    def stop(self):
        ZK3.stop()  # no other peer uses the ensemble (stop_shared stops it too, idempotently)


class PrefixClient:
    """The seeds' ZooKeeper foreground/background recipe (shared/seeds, 'Lock Acquisition
    Algorithm'): an ephemeral sequential child `A-` (foreground) or `B-` (background) under the
    key's persistent node; children sorted by name, so every `A-` sorts before every `B-`; the
    first child takes the ephemeral `privateLock` node (which a later, lower-sorting foreground
    child cannot steal); everybody else watches the parent's children and re-checks. Release
    deletes `privateLock` and the own child in one multi-op."""

    def __init__(self, hosts: str, i: int):
        self.zk, self.counter = _counted_kazoo(hosts)
        self.i = i
        self.mine = {}

    @property
    def requests(self):
        return self.counter[0]

    def acquire(self, key: str, priority: str = "foreground"):
        from kazoo.exceptions import NodeExistsError

        parent = f"/prefix/{key}"
        prefix = "A-" if priority == "foreground" else "B-"
        me = self.zk.create(f"{parent}/{prefix}", b"", ephemeral=True, sequence=True)
        name = me.rsplit("/", 1)[1]
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            changed = threading.Event()
            children = sorted(c for c in self.zk.get_children(parent,
                                                              watch=lambda e: changed.set())
                              if c != "privateLock")
            if children and children[0] == name:
                try:
                    self.zk.create(f"{parent}/privateLock", b"", ephemeral=True)
                    self.mine[key] = me
                    return me
                except NodeExistsError:
                    # the holder sorted after us (we are a later foreground): wait until it goes
                    if self.zk.exists(f"{parent}/privateLock", watch=lambda e: changed.set()):
                        changed.wait(max(0.0, deadline - time.monotonic()))
                    continue
            changed.wait(max(0.0, deadline - time.monotonic()))
        self.zk.delete(me)
        raise BenchError(f"prefix lock {key}: not granted in {WAIT_S}s")

    def release(self, key: str, token):
        t = self.zk.transaction()
        t.delete(f"/prefix/{key}/privateLock")
        t.delete(self.mine.pop(key))
        t.commit()

    def close(self):
        try:
            self.zk.stop()
            self.zk.close()
        except Exception:
            pass


class ZooKeeperPrefix(Peer):
    name = "zookeeper-prefix"
    label = "ZooKeeper A-/B- prefix recipe (seeds)"
    priorities = True

    def start(self, workdir, log=print):
        ZK.start(workdir, log)

    def client(self, i):
        return PrefixClient(ZK.hosts(), i)

    def setup_key(self, key):
        zk, _ = _counted_kazoo(ZK.hosts())
        try:
            zk.ensure_path(f"/prefix/{key}")
        finally:
            zk.stop()
            zk.close()

    def server_pid(self):
        return ZK.pids()

    def version(self):
        return ZooKeeper().version()


# etcd ------------------------------------------------------------------------------------------


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


class EtcdClient:
    """etcd's lock service through its JSON gateway (/v3/lock/lock waits server-side for the
    predecessor's key to go; /v3/lock/unlock deletes the own key), under one lease per client
    (/v3/lease/grant)."""

    def __init__(self, port: int, i: int):
        self.h = Http(port)
        st, body = self.h.call("POST", "/v3/lease/grant", {"TTL": LEASE_S * 5})
        if st != 200:
            raise BenchError(f"etcd lease grant: {st} {body}")
        self.lease = body["ID"]

    @property
    def requests(self):
        return self.h.requests

    def acquire(self, key: str, priority: str = "foreground"):
        st, body = self.h.call("POST", "/v3/lock/lock", {"name": _b64(key), "lease": self.lease})
        if st != 200 or "key" not in body:
            raise BenchError(f"etcd lock {key}: {st} {body}")
        return body["key"]

    def release(self, key: str, token):
        st, body = self.h.call("POST", "/v3/lock/unlock", {"key": token})
        if st != 200:
            raise BenchError(f"etcd unlock {key}: {st} {body}")

    def close(self):
        try:
            self.h.call("POST", "/v3/lease/revoke", {"ID": self.lease})
        except Exception:
            pass
        self.h.close()


class Etcd(Peer):
    """etcd, one member, or with `members = 3` a static cluster of three (`--initial-cluster`
    with three loopback peer URLs; a write is answered once a majority has it in its log)."""

    name = "etcd"
    label = "etcd lock API (HTTP gateway)"
    members = 1
    route = "spread"  # a cluster's clients: "spread" (i mod 3) or "owner" (all on the leader)

    def __init__(self):
        self.procs: list[subprocess.Popen] = []
        self.ports: list[int] = []
        self.spawned: list[tuple] = []  # each member's (argv, log, cwd), to start it again

    @property
    def port(self) -> int:
        return self.ports[0]

    def kill_member(self, k: int) -> None:
        """kill -9 of member k (bench/failover.py)."""
        kill9(self.procs[k])

    def restart_member(self, k: int) -> None:
        """Member k again, on its data folder; answers once every member is healthy."""
        self.procs[k] = spawn(*self.spawned[k])
        wait_port(self.ports[k], 60, self.procs[k])
        self._ready([f"m{j + 1}" for j in range(len(self.ports))])

    def start(self, workdir, log=print):
        n = self.members
        self.ports = [free_port() for _ in range(n)]
        peer_ports = [free_port() for _ in range(n)]
        names = ["bench"] if n == 1 else [f"m{k + 1}" for k in range(n)]
        cluster = ",".join(f"{m}=http://127.0.0.1:{p}" for m, p in zip(names, peer_ports))
        log(f"etcd{'' if n == 1 else f' cluster of {n}'} on 127.0.0.1:"
            f"{','.join(map(str, self.ports))} ...")
        for k in range(n):
            d = workdir / "etcd" if n == 1 else workdir / f"etcd-{n}" / names[k]
            d.mkdir(parents=True, exist_ok=True)
            argv = ["etcd", "--name", names[k], "--data-dir", str(d / "data"),
                    "--listen-client-urls", f"http://127.0.0.1:{self.ports[k]}",
                    "--advertise-client-urls", f"http://127.0.0.1:{self.ports[k]}",
                    "--listen-peer-urls", f"http://127.0.0.1:{peer_ports[k]}",
                    "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_ports[k]}",
                    "--initial-cluster", cluster, "--log-level", "warn"]
            if n > 1:
                argv += ["--initial-cluster-state", "new", "--initial-cluster-token",
                         f"eslm-bench-{os.getpid()}"]
            log_path = workdir / "etcd.log" if n == 1 else d / "etcd.log"
            self.spawned.append((argv, log_path, workdir))
            self.procs.append(spawn(argv, log_path, workdir))
        try:
            for port, proc in zip(self.ports, self.procs):
                wait_port(port, 60, proc)
            self._ready(names)
        except Exception:
            self.stop()
            raise

    def _ready(self, names: list[str]) -> None:
        """Every member answers /version, and in a cluster /health (true once it has a leader);
        notes which member leads."""
        for k, port in enumerate(self.ports):
            h = Http(port, timeout=5)
            deadline = time.monotonic() + 60
            try:
                while True:
                    try:
                        st, body = h.call("GET", "/version")
                        healthy = len(self.ports) == 1 or (
                            st == 200 and h.call("GET", "/health")[1].get("health") == "true")
                        if st == 200 and healthy:
                            self._version = body.get("etcdserver", "?")
                            break
                    except (OSError, ValueError, http.client.HTTPException):
                        pass
                    if time.monotonic() > deadline:
                        raise BenchError(f"etcd member {names[k]} not healthy after 60 s")
                    time.sleep(0.2)
                if len(self.ports) > 1:
                    st, body = h.call("POST", "/v3/maintenance/status", {})
                    if st == 200 and body.get("leader") == body.get("header", {}).get("member_id"):
                        self._leader = names[k]
                        self._leader_port = port
            finally:
                h.close()

    def stop(self):
        for proc in self.procs:
            stop_proc(proc)
        self.procs = []

    def server_pid(self):
        if not self.procs:
            return None
        return self.procs[0].pid if len(self.procs) == 1 else tuple(p.pid for p in self.procs)

    def client(self, i):
        # a cluster: client i talks to member i mod 3 (a follower forwards writes to the leader),
        # or with route "owner" every client to the leader, as the plugin's clients to the owner
        if self.route == "owner" and getattr(self, "_leader_port", None):
            return EtcdClient(self._leader_port, i)
        return EtcdClient(self.ports[i % len(self.ports)], i)

    def version(self):
        v = f"etcd {getattr(self, '_version', '?')} (v3 JSON gateway)"
        if self.members > 1:
            v += (f"; cluster of {self.members} (leader {getattr(self, '_leader', '?')}), "
                  + ("every client talks to the leader" if self.route == "owner"
                     else "client i talks to member i mod 3"))
        return v


class Etcd3(Etcd):
    name = "etcd-3"
    label = "etcd cluster of 3, lock API (HTTP gateway)"
    members = 3


# Redis -----------------------------------------------------------------------------------------

RELEASE_LUA = ("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
               "else return 0 end")


class RedisClient:
    """`SET key token NX PX ttl`; on conflict sleep POLL_S and retry; release = compare-and-delete
    Lua script (EVALSHA)."""

    def __init__(self, port: int, i: int):
        import redis

        self.r = redis.Redis(host="127.0.0.1", port=port, single_connection_client=True)
        self.sha = self.r.script_load(RELEASE_LUA)
        self.i = i
        self.n = 0
        self.requests = 1

    def acquire(self, key: str, priority: str = "foreground"):
        self.n += 1
        token = f"c{self.i}-{self.n}"
        deadline = time.monotonic() + WAIT_S
        while True:
            self.requests += 1
            if self.r.set(key, token, nx=True, px=LEASE_S * 1000):
                return token
            if time.monotonic() > deadline:
                raise BenchError(f"redis lock {key}: not granted in {WAIT_S}s")
            time.sleep(POLL_S)

    def release(self, key: str, token):
        self.requests += 1
        if self.r.evalsha(self.sha, 1, key, token) != 1:
            raise BenchError(f"redis release {key}: not held")

    def close(self):
        self.r.close()


class Redis(ServerProcess):
    name = "redis"
    label = "Redis SET NX PX (polling)"

    def start(self, workdir, log=print):
        self.port = free_port()
        d = workdir / "redis"
        d.mkdir(parents=True, exist_ok=True)
        log(f"Redis on 127.0.0.1:{self.port} ...")
        # no persistence (no RDB snapshots, no AOF): Redis's fastest mode; no system config file.
        self._spawn(["redis-server", "--bind", "127.0.0.1", "--port", str(self.port),
                     "--dir", str(d), "--save", "", "--appendonly", "no", "--daemonize", "no",
                     "--maxclients", "1000"], workdir, self.port)

    def client(self, i):
        return RedisClient(self.port, i)

    def version(self):
        import redis

        out = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout
        v = next((w.split("=", 1)[1] for w in out.split() if w.startswith("v=")), "?")
        return f"Redis {v}, redis-py {redis.__version__}"


PEERS = {p.name: p for p in (Plugin, PluginMemory, DocRecipe, ZooKeeper, ZooKeeperPrefix, Etcd,
                              Redis, EsFloor, Plugin3, Plugin3Partitions, ZooKeeper3, Etcd3)}
# the replicated three-server peers, and the single-server peer each is compared with
THREE = {"plugin-3": "plugin", "plugin-3x3": "plugin", "zookeeper-3": "zookeeper", "etcd-3": "etcd"}


def stop_shared():
    ES.stop()
    ES_MEMORY.stop()
    ZK.stop()
    ZK3.stop()


# random jitter helper shared by workloads
rng = random.Random(42)
