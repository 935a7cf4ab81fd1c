"""One contract suite that every client passes (issue 49 item 3): every case of tests/contract/cases.py
against every client's driver (tests/contract/PROTOCOL.md), on one three-node cluster of real nodes,
reported as `test_contract[<driver>-<case>]`. Each case runs in a driver process of its own, started
with the URLs of the nodes that are up; a driver that exits, hangs or breaks the protocol fails the
case with its stderr.

The drivers, built once per module (in a background thread, while the cluster starts):

- python: clients/python/contract/driver.py, with clients/python/src on PYTHONPATH;
- java: org.eslm.client.contract.ContractDriver (clients/java/src/test/java), run with `java -cp`
  over the classpath Maven builds once (`-pl java test-compile dependency:build-classpath`);
- node: clients/node/dist/contract/driver.js after `npm ci` (when node_modules is missing) and
  `npm run build`;
- go: clients/go/cmd/eslm-contract-driver, built with `go build`. A driver that is missing or does
  not build fails every case of its client, loudly; nothing is skipped.

The disruptive case (the 503 retried through another node) kills the owner of the partition; it
runs last for each driver, and the killed node is started again in the background at the start of
the next test (cases meanwhile use only the nodes that are up); the next disruptive case first
waits until the cluster has three nodes and is green."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

import node as esnode
from cluster_kit import FAST_FAULT_DETECTION, ThreeNodes, http, live, owner_of_partition, rejoin, settled

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "tests" / "contract"
sys.path.insert(0, str(CONTRACT))
pytest.register_assert_rewrite("cases")

from cases import CASES  # noqa: E402
from runner import Context, Driver, DriverFailure, Launch, Nodes  # noqa: E402

THREE_NODES = ThreeNodes("eslm-it-contract", {
    # The partition stays where it is unless a case kills its owner (then its replica is promoted).
    "cluster.routing.rebalance.enable": "none",
    **FAST_FAULT_DETECTION,
})

DRIVERS = ("python", "java", "node", "go")
# Per driver: the cases that leave the nodes alone, then the disruptive one.
ORDER = [n for n, c in CASES.items() if not c.disruptive] + [n for n, c in CASES.items() if c.disruptive]
PLAN = [(driver, name) for driver in DRIVERS for name in ORDER]

# A driver's build. Go's first build on a machine compiles go-elasticsearch (its typed API is
# large): with the other lanes running on two cores, a fresh-clone CI run here took more than 900 s.
BUILD_TIMEOUT_S = 1800


# --- the drivers ----------------------------------------------------------------------------------

def _run(argv: list[str], cwd: Path, what: str, env: dict | None = None, timeout: float = BUILD_TIMEOUT_S) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed ({' '.join(argv)} in {cwd}, exit {done.returncode}):\n"
                           f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done.stdout


def build_python(_work: Path) -> Launch:
    src = ROOT / "clients" / "python" / "src"
    path = os.pathsep.join(filter(None, (str(src), os.environ.get("PYTHONPATH"))))
    return Launch([sys.executable, str(ROOT / "clients" / "python" / "contract" / "driver.py")], ROOT,
                  {"PYTHONPATH": path})


def build_java(work: Path) -> Launch:
    java = ROOT / "clients" / "java"
    cp_file = work / "java.classpath"
    _run(["mvn", "-B", "-q", "-f", str(ROOT / "clients" / "pom.xml"), "-pl", "java", "test-compile",
          "dependency:build-classpath", f"-Dmdep.outputFile={cp_file}"],
         ROOT, "Maven (the Java client and its contract driver)", env=esnode.maven_env())
    # The compiled classes in a jar of the module's own: other Maven runs on clients/
    # (test_java_clients.py) rebuild target/ while this module runs, and a class missing for a
    # moment would crash a driver. A jar also lets the JVM keep a class-data archive (below).
    classes = work / "java-classes"
    shutil.rmtree(classes, ignore_errors=True)
    shutil.copytree(java / "target" / "classes", classes)
    shutil.copytree(java / "target" / "test-classes" / "org" / "eslm" / "client" / "contract",
                    classes / "org" / "eslm" / "client" / "contract")
    for needed in ("org/eslm/client/LockClient.class", "org/eslm/client/contract/ContractDriver.class"):
        if not (classes / needed).is_file():
            raise RuntimeError(f"the Java build left no {needed} (target/ rebuilt meanwhile?)")
    jar = work / "java-contract-driver.jar"
    _run([str(Path(esnode.java_home()) / "bin" / "jar"), "cf", str(jar), "-C", str(classes), "."], ROOT,
         "jar (the Java client and its contract driver)")
    classpath = os.pathsep.join([str(jar), cp_file.read_text().strip()])
    binary = Path(esnode.java_home()) / "bin" / "java"
    # C1 only, the serial collector and a class-data archive made by the first run: every case
    # starts a driver, and this spares part of each JVM start.
    return Launch([str(binary), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:+AutoCreateSharedArchive",
                   f"-XX:SharedArchiveFile={work / 'java-driver.jsa'}", "-Xlog:cds=off", "-Xlog:cds+dynamic=off",
                   "-cp", classpath, "org.eslm.client.contract.ContractDriver"], ROOT)


def build_node(work: Path) -> Launch:
    client = ROOT / "clients" / "node"
    if not (client / "node_modules").is_dir():
        _run(["npm", "ci", "--no-audit", "--no-fund"], client, "npm ci (clients/node)")
    _run(["npm", "run", "build"], client, "npm run build (clients/node)")
    # A copy of dist/ (test_node_client.py removes and rebuilds it while its module runs), whose
    # imports of @elastic/elasticsearch resolve through NODE_PATH to the client's node_modules.
    dist = work / "node-dist"
    shutil.rmtree(dist, ignore_errors=True)
    shutil.copytree(client / "dist", dist)
    driver = dist / "contract" / "driver.js"
    if not driver.is_file() or not (dist / "src" / "index.js").is_file():
        raise RuntimeError(f"npm run build made no {client / 'dist' / 'contract' / 'driver.js'} (or no dist/src)")
    return Launch(["node", str(driver)], client, {"NODE_PATH": str(client / "node_modules")})


def build_go(work: Path) -> Launch:
    client = ROOT / "clients" / "go"
    source = client / "cmd" / "eslm-contract-driver"
    if not source.is_dir():
        raise RuntimeError(f"the Go client has no contract driver: {source} does not exist "
                           "(the Go client's driver is not written yet)")
    go = shutil.which("go") or "/usr/local/go/bin/go"
    binary = work / "eslm-contract-driver"
    _run([go, "build", "-o", str(binary), "./cmd/eslm-contract-driver"], client, "go build (the Go contract driver)")
    return Launch([str(binary)], client)


BUILDERS = {"python": build_python, "java": build_java, "node": build_node, "go": build_go}


class Builds:
    """Every driver built in one background thread, in DRIVERS order (the first cases need the
    first driver only); `launch` waits for one and fails the test if it could not be built."""

    def __init__(self, work: Path):
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="contract-build")
        self._built: dict[str, Future] = {d: self._pool.submit(BUILDERS[d], work) for d in DRIVERS}

    def launch(self, driver: str) -> Launch:
        try:
            return self._built[driver].result(timeout=BUILD_TIMEOUT_S)
        except Exception as e:  # noqa: BLE001 - every failure fails the case, loudly
            pytest.fail(f"the {driver} contract driver is not available: {e}", pytrace=False)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    b = Builds(tmp_path_factory.mktemp("contract-drivers"))
    yield b
    b.close()


# --- the cluster ----------------------------------------------------------------------------------

class ClusterControl:
    """The three nodes as the cases see them: which are up and serving (a node being restarted is
    not), the owner of a key's partition, kill -9 of a node, and its restart."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.down = None  # the node a case killed, until it is back
        self._restart: threading.Thread | None = None
        self._restart_error: BaseException | None = None

    def ready_nodes(self) -> list:
        return [n for n in live(self.cluster) if n is not self.down]

    def ready_urls(self) -> list[str]:
        return [n.url for n in self.ready_nodes()]

    def owner_of_key(self, key: str):
        """The node serving the partition of `key`, which must be held (the listing names it)."""
        listed = http(self.ready_nodes()[0], "GET", f"/_locks?prefix={key}").json()["locks"]
        partitions = {entry["partition"] for entry in listed if entry["key"] == key}
        assert len(partitions) == 1, f"{key} is not listed once: {listed}"
        return owner_of_partition(self.cluster, partitions.pop())[0]

    def kill(self, node) -> None:
        assert self.down is None, f"{self.down.name} is still down"
        self.down = node
        node.kill()

    def start_again(self) -> None:
        """Starts the killed node again in the background (a no-op when none is down)."""
        if self.down is None or self._restart is not None:
            return
        node, via = self.down, self.ready_nodes()[0]

        def restart():
            try:
                rejoin(node, via)
            except BaseException as e:  # noqa: BLE001 - raised by await_whole
                self._restart_error = e

        self._restart = threading.Thread(target=restart, name=f"restart-{node.name}", daemon=True)
        self._restart.start()

    def await_whole(self, timeout: float = 300) -> None:
        """Three nodes, green, nothing moving: a killed node started again and rejoined."""
        self.start_again()
        if self._restart is not None:
            self._restart.join(timeout)
            assert not self._restart.is_alive(), f"{self.down.name} did not rejoin within {timeout} s"
            error, self._restart, self._restart_error = self._restart_error, None, None
            if error is not None:
                raise AssertionError(f"{self.down.name} did not rejoin: {error}") from error
            self.down = None
        settled(self.ready_nodes()[0])
        assert len(self.ready_nodes()) == 3

    def close(self) -> None:
        if self._restart is not None:
            self._restart.join(300)  # the nodes are stopped next: not while one is starting


@pytest.fixture(scope="module")
def control(cluster):
    c = ClusterControl(cluster)
    yield c
    c.close()


# --- the suite ------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize(("driver", "name"), PLAN, ids=[f"{d}-{n}" for d, n in PLAN])
def test_contract(driver, name, builds, cluster, control, tmp_path):
    launch = builds.launch(driver)
    case = CASES[name]
    control.start_again()
    if case.disruptive:
        control.await_whole()
    urls = control.ready_urls()
    nodes = Nodes(urls)
    d = Driver(driver, launch, urls, tmp_path / f"{driver}-driver.stderr")
    passed = False
    try:
        case.run(Context(d, nodes, driver, name, control))
        passed = True
    except DriverFailure:
        raise  # carries the driver's stderr already
    except AssertionError:
        print(f"--- stderr of the {driver} driver ---\n{d.stderr_tail(120)}")
        raise
    finally:
        code = d.stop()
        nodes.close()
    if passed:
        assert code == 0, f"the {driver} driver exited with {code} after exit:\n{d.stderr_tail()}"


def test_every_case_says_what_it_expects():
    """Each case documents its expected outcome, and the plan runs every case for every driver."""
    assert {n for _, n in PLAN} == set(CASES) and {d for d, _ in PLAN} == set(DRIVERS)
    for name, case in CASES.items():
        assert len(case.doc) > 80, f"{name} does not say what it expects"
