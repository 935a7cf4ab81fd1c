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


def cpu_seconds(pid: int | None) -> float | None:
    """User+system CPU seconds of a process (for server CPU per grant)."""
    if not pid:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


# --- installation of missing peers -------------------------------------------------------------

APT = {"zookeeper": "zookeeper", "etcd": "etcd-server", "redis": "redis-server"}
PIP = {"kazoo": "kazoo", "redis": "redis", "matplotlib": "matplotlib"}


def ensure_installed(peers: list[str], log=print) -> None:
    """apt-get installs the Debian packages of the chosen peers and pip-installs the Python
    clients, each only when missing (a fresh CI machine has none of them)."""
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


class EsNode:
    """One Elasticsearch node with the plugin, shared by the plugin and the document recipe."""

    def __init__(self):
        self.node = None

    def start(self, log=print) -> None:
        if self.node is not None:
            return
        version = esnode.es_version()
        zip_ = esnode.plugin_zip(version)
        self.version = version
        # a folder of its own per run (build/eslm-bench-<pid>), removed by stop(): two runs
        # (say the smoke test and a full run) never share a node folder
        self.node = esnode.Node(f"eslm-bench-{os.getpid()}", "node-0", esnode.free_port(),
                                esnode.free_port(), heap="1g")
        log(f"Elasticsearch {version} + {zip_.name} on 127.0.0.1:{self.node.http_port} ...")
        self.node.install(version, zip_)
        self.node.start()
        try:
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
        self.plugin_version = h.call("GET", "/_locks/_node/diagnostics")[1].get("plugin", {})
        h.close()

    def pid(self) -> int | None:
        try:
            return int(self.node.pid_file.read_text().strip())
        except (OSError, ValueError, AttributeError):
            return None

    def stop(self) -> None:
        if self.node is not None:
            self.node.stop()
            shutil.rmtree(self.node.home.parent, ignore_errors=True)
            self.node = None


ES = EsNode()


class PluginClient:
    def __init__(self, port: int, i: int, prefix: str):
        self.h = Http(port)
        self.owner = f"{prefix}-c{i}"

    @property
    def requests(self):
        return self.h.requests

    def acquire(self, key: str, priority: str = "foreground"):
        st, body = self.h.call("POST", f"/_locks/{key}/_acquire",
                               {"owner": self.owner, "wait": f"{WAIT_S}s", "lease": f"{LEASE_S}s",
                                "priority": priority})
        if st != 200:
            raise BenchError(f"plugin acquire {key}: {st} {body}")
        return body["fencing_token"]

    def release(self, key: str, token):
        st, body = self.h.call("POST", f"/_locks/{key}/_release",
                               {"owner": self.owner, "fencing_token": token})
        if st != 200:
            raise BenchError(f"plugin release {key}: {st} {body}")

    def close(self):
        self.h.close()


class Plugin(Peer):
    name = "plugin"
    label = "this plugin (ES REST)"
    priorities = True

    def start(self, workdir, log=print):
        ES.start(log)
        self._n = 0

    def stop(self):
        pass  # the node is stopped once, after the document recipe too (see run.py)

    def client(self, i):
        self._n += 1
        return PluginClient(ES.node.http_port, i, f"r{self._n}")

    def server_pid(self):
        return ES.pid()

    def version(self):
        p = getattr(ES, "plugin_version", {}) or {}
        return (f"Elasticsearch {ES.version}, plugin {p.get('version', '?')} "
                f"({p.get('native_version', '?')})")


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


class ServerProcess(Peer):
    """A peer that is one server process we start ourselves."""

    proc: subprocess.Popen | None = None

    def _spawn(self, argv, workdir: Path, port: int, env=None, timeout=60.0):
        out = open(workdir / f"{self.name}.log", "ab")
        self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True, cwd=workdir)
        try:
            wait_port(port, timeout, self.proc)
        except Exception:
            self.stop()
            raise

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def server_pid(self):
        return self.proc.pid if self.proc is not None else None


# ZooKeeper -------------------------------------------------------------------------------------


class ZooKeeperServer:
    """One standalone ZooKeeper (Debian's jars) shared by the kazoo Lock peer and the prefix
    recipe. Defaults kept (forceSync=yes: every write is fsynced, as users run it), except
    maxClientCnxns=0 (the default 60 per address is below 64 clients + 1)."""

    def __init__(self):
        self.proc = None
        self.port = None

    def start(self, workdir: Path, log=print):
        if self.proc is not None:
            return
        d = workdir / "zookeeper"
        (d / "data").mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        (d / "zoo.cfg").write_text(
            f"tickTime=2000\ndataDir={d / 'data'}\nclientPort={self.port}\n"
            "clientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n"
            "4lw.commands.whitelist=srvr\n")
        (d / "log4j.properties").write_text(
            "log4j.rootLogger=WARN, F\nlog4j.appender.F=org.apache.log4j.FileAppender\n"
            f"log4j.appender.F.File={d / 'zookeeper.log'}\n"
            "log4j.appender.F.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.F.layout.ConversionPattern=%d %p %c: %m%n\n")
        java = shutil.which("java") or "/usr/bin/java"
        argv = [java, "-Xmx512m", f"-Dlog4j.configuration=file:{d / 'log4j.properties'}",
                "-Dzookeeper.admin.enableServer=false",
                "-cp", "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:"
                "/usr/share/java/log4j-1.2.jar",
                "org.apache.zookeeper.server.ZooKeeperServerMain", str(d / "zoo.cfg")]
        log(f"ZooKeeper on 127.0.0.1:{self.port} ...")
        out = open(d / "stdout.txt", "ab")
        self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True, cwd=d)
        wait_port(self.port, 60, self.proc)
        # ready = answers `srvr`
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
                    s.sendall(b"srvr")
                    reply = s.recv(4096).decode(errors="replace")
                if "Zookeeper version" in reply:
                    self.version = reply.splitlines()[0].split(":", 1)[1].strip().split(",")[0]
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise BenchError("ZooKeeper did not answer srvr")

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


ZK = ZooKeeperServer()


def _counted_kazoo(port: int):
    """A started KazooClient whose requests to the server are counted (every ZooKeeper request
    of kazoo goes through `_call`)."""
    import logging

    from kazoo.client import KazooClient

    logging.getLogger("kazoo").setLevel(logging.ERROR)
    zk = KazooClient(hosts=f"127.0.0.1:{port}", timeout=10.0)
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

    def __init__(self, port: int, i: int):
        self.zk, self.counter = _counted_kazoo(port)
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


class ZooKeeper(Peer):
    name = "zookeeper"
    label = "ZooKeeper + kazoo Lock"

    def start(self, workdir, log=print):
        ZK.start(workdir, log)

    def client(self, i):
        return KazooClientLock(ZK.port, i)

    def server_pid(self):
        return ZK.proc.pid if ZK.proc else None

    def version(self):
        import kazoo.version

        return f"ZooKeeper {getattr(ZK, 'version', '?')}, kazoo {kazoo.version.__version__}"


class PrefixClient:
    """The seeds' ZooKeeper foreground/background recipe (shared/seeds, 'Lock Acquisition
    Algorithm'): an ephemeral sequential child `A-` (foreground) or `B-` (background) under the
    key's persistent node; children sorted by name, so every `A-` sorts before every `B-`; the
    first child takes the ephemeral `privateLock` node (which a later, lower-sorting foreground
    child cannot steal); everybody else watches the parent's children and re-checks. Release
    deletes `privateLock` and the own child in one multi-op."""

    def __init__(self, port: int, i: int):
        self.zk, self.counter = _counted_kazoo(port)
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
        return PrefixClient(ZK.port, i)

    def setup_key(self, key):
        zk, _ = _counted_kazoo(ZK.port)
        try:
            zk.ensure_path(f"/prefix/{key}")
        finally:
            zk.stop()
            zk.close()

    def server_pid(self):
        return ZK.proc.pid if ZK.proc else None

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


class Etcd(ServerProcess):
    name = "etcd"
    label = "etcd lock API (HTTP gateway)"

    def start(self, workdir, log=print):
        self.port, peer_port = free_port(), free_port()
        d = workdir / "etcd"
        d.mkdir(parents=True, exist_ok=True)
        log(f"etcd on 127.0.0.1:{self.port} ...")
        self._spawn(["etcd", "--name", "bench", "--data-dir", str(d / "data"),
                     "--listen-client-urls", f"http://127.0.0.1:{self.port}",
                     "--advertise-client-urls", f"http://127.0.0.1:{self.port}",
                     "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
                     "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
                     "--initial-cluster", f"bench=http://127.0.0.1:{peer_port}",
                     "--log-level", "warn"], workdir, self.port)
        h = Http(self.port)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                st, body = h.call("GET", "/version")
                if st == 200:
                    self._version = body.get("etcdserver", "?")
                    break
            except OSError:
                pass
            time.sleep(0.2)
        h.close()

    def client(self, i):
        return EtcdClient(self.port, i)

    def version(self):
        return f"etcd {getattr(self, '_version', '?')} (v3 JSON gateway)"


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


PEERS = {p.name: p for p in (Plugin, DocRecipe, ZooKeeper, ZooKeeperPrefix, Etcd, Redis,
                              EsFloor)}


def stop_shared():
    ES.stop()
    ZK.stop()


# random jitter helper shared by workloads
rng = random.Random(42)
