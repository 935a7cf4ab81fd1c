"""The `eslm` command line (eslm/cli, README "Command line", issue 49 item 4), run as a process
against the real node of conftest.py, as a shell user runs it: `python -m eslm.cli` with the
package from clients/python/src, and once the installed console script. Commands under a lock
learn their token from the environment, two locks on one key run their commands one after the
other (timestamps the commands write), a lost lock stops its command and the command's whole
process group, signals reach the command, and every failure of eslm itself is one line and a
documented exit status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from lockclient import unique

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
WAIT_S = 120  # the most one eslm run may take here (the machine is shared: Python starts slowly)

# Exit statuses of eslm itself (eslm/cli/exits.py, README "Command line").
USAGE, NOT_ACQUIRED, LOST, CONNECTION, REFUSED, NOT_HELD, NOT_FOUND = 110, 111, 112, 113, 114, 115, 127


def environment(url: str) -> dict:
    """This process's environment without any Elasticsearch settings of its own, the package on
    the path, and the node's URL where eslm reads it. Python's fault handler is on, so an eslm
    that does not end in time shows where each of its threads was (`finished`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELASTICSEARCH_")}
    return {**env, "PYTHONPATH": str(SRC), "ELASTICSEARCH_URL": url, "PYTHONFAULTHANDLER": "1"}


def eslm(url: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`eslm ARGS` to its end: its status, stdout and stderr."""
    return subprocess.run([sys.executable, "-m", "eslm.cli", *args], env=env or environment(url),
                          capture_output=True, text=True, timeout=WAIT_S)


def python(code: str, *args: str) -> list[str]:
    """A command that runs `code` (dedented) in this interpreter."""
    return [sys.executable, "-c", textwrap.dedent(code), *args]


@pytest.fixture()
def started(es_node):
    """`started(*args)`: `eslm ARGS` running in the background (stdout and stderr piped); any
    still running at the end of the test is killed. It starts with SIGINT and SIGQUIT at their
    defaults, as from a terminal: `make client-test` runs one of its pytest runs as a background
    job of a shell, which starts with both ignored, and eslm leaves a signal it was started
    ignoring ignored (as under nohup), so SIGINT would not reach it."""
    running: list[subprocess.Popen] = []

    def start(*args: str) -> subprocess.Popen:
        process = subprocess.Popen([sys.executable, "-m", "eslm.cli", *args], env=environment(es_node.url),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   preexec_fn=signals_at_their_defaults)
        running.append(process)
        return process

    yield start
    for process in running:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=WAIT_S)


def signals_at_their_defaults() -> None:
    for signum in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)


def finished(process: subprocess.Popen) -> tuple[int, str, str]:
    """Its status, stdout and stderr once it ended; a failure with the stacks of its threads
    (SIGABRT: the fault handler prints them) when it does not end within WAIT_S."""
    try:
        out, err = process.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        out, err = process.communicate(timeout=WAIT_S)
        pytest.fail(f"eslm did not end within {WAIT_S}s; its threads then:\n{err}\n{out}")
    return process.returncode, out, err


def one_line(stderr: str) -> str:
    """eslm's own failure: exactly one line, `eslm: ` first, no traceback."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("eslm: ") and "Traceback" not in stderr, stderr
    return lines[0]


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie does not: it has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


# What the commands under a lock look at: the lock through plain HTTP, from the environment eslm
# gives them (ELASTICSEARCH_URL is the test's, inherited).
SHOW_LOCK = """
    import json, os, sys, urllib.parse, urllib.request
    url = os.environ["ELASTICSEARCH_URL"] + "/_locks/" + urllib.parse.quote(os.environ["ESLM_LOCK_KEY"], safe="")
    state = json.load(urllib.request.urlopen(url))
    print(json.dumps({"env": {k: v for k, v in os.environ.items() if k.startswith("ESLM_")},
                      "holders": state["holders"]}))
    sys.exit(int(sys.argv[1]))
"""


def test_a_command_runs_under_the_lock_with_its_token_and_its_exit_status(es_node, holders):
    key = unique("cli")
    done = eslm(es_node.url, "lock", "--lease", "20s", key, "--", *python(SHOW_LOCK, "7"))
    assert done.returncode == 7, done.stderr
    seen = json.loads(done.stdout)
    env, holder = seen["env"], seen["holders"]
    assert env["ESLM_LOCK_KEY"] == key
    assert len(holder) == 1 and holder[0]["mode"] == "exclusive"
    assert (holder[0]["fencing_token"], holder[0]["owner"]) == (int(env["ESLM_FENCING_TOKEN"]), env["ESLM_LOCK_OWNER"])
    assert holders(key) == [], "released once the command ended"
    assert done.stderr == ""


def test_two_locks_on_one_key_run_their_commands_one_after_the_other(es_node, started, tmp_path):
    """Both start at once; each command records when it began and ended (its work: a second).
    The intervals must not overlap, and the later one has the larger token."""
    key, log = unique("cli-serial"), tmp_path / "log"
    record = """
        import os, sys, time
        began = time.time()
        time.sleep(1.0)  # the work done under the lock
        with open(sys.argv[1], "a") as log:
            log.write(f"{os.environ['ESLM_FENCING_TOKEN']} {began} {time.time()}\\n")
    """
    runs = [started("lock", key, "--", *python(record, str(log))) for _ in range(2)]
    for run in runs:
        status, _, err = finished(run)
        assert status == 0, err
    entries = sorted(tuple(float(x) for x in line.split()) for line in log.read_text().splitlines())
    assert len(entries) == 2, entries
    (first_token, first_began, first_ended), (second_token, second_began, _) = sorted(entries, key=lambda e: e[1])
    assert second_began >= first_ended, f"the commands overlapped: {entries}"
    assert second_token > first_token


def test_a_timeout_that_runs_out_refuses_with_its_status_and_runs_nothing(es_node, locks, tmp_path):
    key, marker = unique("cli-timeout"), tmp_path / "ran"
    command = python("import pathlib, sys; pathlib.Path(sys.argv[1]).touch()", str(marker))
    with locks.lock(key):
        waited = eslm(es_node.url, "lock", "--timeout", "1s", key, "--", *command)
        tried = eslm(es_node.url, "lock", "--timeout", "0", key, "--", *command)
    assert waited.returncode == NOT_ACQUIRED and "--timeout" in one_line(waited.stderr)
    assert tried.returncode == NOT_ACQUIRED and "held by" in one_line(tried.stderr)
    assert not marker.exists()


def test_a_lost_lock_stops_the_command_and_everything_it_started(es_node, locks, started, tmp_path, noticed):
    """The command ignores SIGTERM and leaves a grandchild that ignores it too: both are gone
    once the lock is force-released (SIGKILL after the 1 s grace), and eslm says why."""
    key, pids = unique("cli-lost"), tmp_path / "pids"
    stubborn = """
        import os, signal, subprocess, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the grandchild
        grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        with open(sys.argv[1] + ".tmp", "w") as f:
            f.write(f"{os.getpid()} {grandchild.pid}")
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(300)
    """
    run = started("lock", "--grace", "1s", key, "--", *python(stubborn, str(pids)))
    assert noticed(pids.exists, WAIT_S), finished(run)
    child, grandchild = (int(p) for p in pids.read_text().split())
    assert alive(child) and alive(grandchild)
    released = locks.force_release(key, reason="test_cli: lost lock")
    assert len(released["released"]) == 1
    status, _, err = finished(run)
    assert status == LOST, err
    assert "force_released" in err and "SIGKILL" in err and "Traceback" not in err, err
    assert noticed(lambda: not alive(child) and not alive(grandchild), 10), "the command's group outlived the lock"


def test_signals_reach_the_command_which_still_holds_the_lock_until_it_exits(es_node, holders, started, tmp_path,
                                                                            noticed):
    key, ready = unique("cli-signal"), tmp_path / "ready"
    handles_term = """
        import json, os, signal, sys, time, urllib.parse, urllib.request
        def stop(signum, frame):
            url = os.environ["ELASTICSEARCH_URL"] + "/_locks/" + urllib.parse.quote(os.environ["ESLM_LOCK_KEY"])
            tokens = [h["fencing_token"] for h in json.load(urllib.request.urlopen(url))["holders"]]
            print(signal.Signals(signum).name, tokens == [int(os.environ["ESLM_FENCING_TOKEN"])], flush=True)
            sys.exit(3)
        signal.signal(signal.SIGTERM, stop)
        open(sys.argv[1], "w").close()
        time.sleep(300)
    """
    run = started("lock", key, "--", *python(handles_term, str(ready)))
    assert noticed(ready.exists, WAIT_S), finished(run)
    run.send_signal(signal.SIGTERM)
    status, out, err = finished(run)
    assert (status, out.strip(), err) == (3, "SIGTERM True", "")
    assert holders(key) == []


def test_a_signal_while_waiting_for_the_lock_cancels_the_wait(es_node, locks, started, tmp_path, noticed):
    key, marker = unique("cli-wait-signal"), tmp_path / "ran"
    with locks.lock(key):
        run = started("lock", key, "--", *python("import pathlib, sys; pathlib.Path(sys.argv[1]).touch()",
                                                 str(marker)))
        assert noticed(lambda: locks.get(key)["waiters"] != [], WAIT_S), "eslm's acquire never queued"
        run.send_signal(signal.SIGINT)
        status, _, err = finished(run)
        assert status == 128 + signal.SIGINT and "SIGINT" in one_line(err)
        assert noticed(lambda: locks.get(key)["waiters"] == [], 10), "the waiter stayed queued"
    assert not marker.exists()


def test_elect_waits_until_elected_and_runs_the_command_with_its_term(es_node, locks, started, noticed):
    name = unique("cli-elect")
    shows_leader = """
        import json, os, sys, urllib.request
        state = json.load(urllib.request.urlopen(os.environ["ELASTICSEARCH_URL"] + "/_elections/" + sys.argv[1]))
        print(json.dumps({"env": {k: v for k, v in os.environ.items() if k.startswith("ESLM_")}, "state": state}))
        sys.exit(5)
    """
    with locks.leadership(name) as first:
        run = started("elect", "--value", "10.0.0.7:8080", name, "--", *python(shows_leader, name))
        assert noticed(lambda: locks.election(name)["candidates"] != [], WAIT_S), finished(run)
    status, out, err = finished(run)
    assert status == 5, err
    seen = json.loads(out)
    env, state = seen["env"], seen["state"]
    assert env["ESLM_ELECTION_NAME"] == name
    assert int(env["ESLM_ELECTION_TERM"]) == int(env["ESLM_FENCING_TOKEN"]) == state["term"] > first.term
    assert (state["leader"], state["value"]) == (env["ESLM_LOCK_OWNER"], "10.0.0.7:8080")
    assert locks.election(name)["leader"] is None, "resigned once the command ended"


def test_a_lost_leadership_stops_the_command(es_node, locks, started, tmp_path, noticed):
    name, ready = unique("cli-elect-lost"), tmp_path / "ready"
    run = started("elect", name, "--", *python("import sys, time; open(sys.argv[1], 'w').close(); time.sleep(300)",
                                               str(ready)))
    assert noticed(ready.exists, WAIT_S), finished(run)
    locks.es.perform_request("POST", f"/_locks/{name}/_force_release", body={"scope": "election"},
                             headers={"content-type": "application/json", "accept": "application/json"})
    status, _, err = finished(run)
    assert status == LOST and "leadership of" in err and "the server ended it" in err and "Traceback" not in err, err


def test_ls_lists_the_held_locks_as_a_table_and_as_json(es_node, locks, other):
    prefix = unique("cli-ls") + "/"
    with locks.lock(prefix + "a") as a, other.lock(prefix + "b", mode="shared") as b:
        table = eslm(es_node.url, "ls", "--prefix", prefix)
        mine = eslm(es_node.url, "ls", "--prefix", prefix, "--owner", b.owner, "--json")
        none = eslm(es_node.url, "ls", "--prefix", prefix + "nothing")
    assert table.returncode == 0, table.stderr
    header, *rows = table.stdout.splitlines()
    assert header.split()[:5] == ["KEY", "SCOPE", "OWNER", "MODE", "TOKEN"]
    assert [r.split()[:5] for r in rows] == [[prefix + "a", "key", a.owner, "exclusive", str(a.fencing_token)],
                                             [prefix + "b", "key", b.owner, "shared", str(b.fencing_token)]]
    listed = json.loads(mine.stdout)
    assert [(h["key"], h["owner"], h["fencing_token"]) for h in listed] == [(prefix + "b", b.owner, b.fencing_token)]
    assert (none.returncode, none.stdout, one_line(none.stderr)) == (0, "", "eslm: no locks held that match")


def test_who_shows_the_holders_and_the_waiters(es_node, locks, other, noticed):
    key = unique("cli-who")
    with locks.lock(key) as held:
        waiter = threading.Thread(target=lambda: other.lock(key, timeout="60s").acquire())
        waiter.start()
        assert noticed(lambda: locks.get(key)["waiters"] != [], WAIT_S)
        shown = eslm(es_node.url, "who", key)
        as_json = eslm(es_node.url, "who", key, "--json")
        waiting = locks.get(key)["waiters"][0]["owner"]
    waiter.join(WAIT_S)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == f"{key} (key): 1 holding, 1 waiting"
    assert f"{held.owner}  exclusive  {held.fencing_token}" in shown.stdout
    assert waiting in shown.stdout and "WAITER" in shown.stdout
    state = json.loads(as_json.stdout)
    assert [h["owner"] for h in state["holders"]] == [held.owner]
    assert [w["owner"] for w in state["waiters"]] == [waiting]
    assert eslm(es_node.url, "who", unique("cli-free")).stdout.strip().endswith("(key): free")


def test_release_force_evicts_the_holders_and_says_who(es_node, locks, noticed):
    key = unique("cli-release")
    held = locks.acquire(key)
    refused = eslm(es_node.url, "release", key)
    assert refused.returncode == USAGE and "--force" in one_line(refused.stderr)
    assert held.owned()
    done = eslm(es_node.url, "release", "--force", "--reason", "test_cli", key)
    assert done.returncode == 0, done.stderr
    assert f"{held.owner}  {held.fencing_token}" in done.stdout
    assert noticed(lambda: held.lost, 10), "the holder never heard of the eviction"
    again = eslm(es_node.url, "release", "--force", key)
    assert again.returncode == NOT_HELD and key in one_line(again.stderr)


@pytest.mark.parametrize("args, status, says", [
    (["lock", "k"], USAGE, "no command to run"),
    (["lock", "--timeout", "5parsecs", "k", "--", "true"], USAGE, "[timeout] is not a duration"),
    (["lock", "--lease", "-3s", "k", "--", "true"], USAGE, "lease"),
    (["lock", "", "--", "true"], USAGE, "[key]"),
    (["frobnicate"], USAGE, "invalid choice"),
    (["ls", "--url", "localhost:9200"], USAGE, "not an http(s) URL"),
    (["ls", "--url", "http://localhost"], USAGE, "names no port"),
    (["ls", "--username", "someone"], USAGE, "needs a password"),
    (["ls", "--api-key", "k", "--username", "u", "--password", "p"], USAGE, "not both"),
    (["who", "k", "--ca-certs", "/nonexistent/ca.pem"], USAGE, "does not exist"),
    (["lock", "k", "--", "no-such-command-eslm"], NOT_FOUND, "command not found"),
    (["lock", "--lease", "30d", "k", "--", "true"], REFUSED, "locks.lease.max"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_input_is_one_line_and_a_documented_status(es_node, args, status, says):
    done = eslm(es_node.url, *args)
    assert done.returncode == status, done.stderr
    assert says in one_line(done.stderr)
    assert done.stdout == ""


def test_no_answer_is_its_own_status_and_a_flag_overrides_the_environment(es_node):
    env = {**environment(es_node.url), "ELASTICSEARCH_URL": "http://127.0.0.1:1"}
    refused = eslm(es_node.url, "ls", env=env)
    assert refused.returncode == CONNECTION and "no answer from Elasticsearch" in one_line(refused.stderr)
    overridden = eslm(es_node.url, "ls", "--url", es_node.url, "--prefix", unique("cli-none"), env=env)
    assert overridden.returncode == 0, overridden.stderr


def test_the_installed_console_script_runs_a_command_under_a_lock(es_node, tmp_path):
    """`pip install ./clients/python` puts `eslm` on the PATH (pyproject.toml's [project.scripts]).
    Installed with `--target` rather than into a venv, so the script runs on this interpreter with
    its own elasticsearch client (make client-test runs this suite with elasticsearch-py 8.0 too)."""
    target = tmp_path / "installed"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                    str(HERE.parent)], check=True, capture_output=True, text=True, timeout=600)
    script = target / "bin" / "eslm"
    assert script.read_text().startswith(f"#!{sys.executable}"), script.read_text()[:200]
    env = {**environment(es_node.url), "PYTHONPATH": str(target)}
    key = unique("cli-script")
    done = subprocess.run([str(script), "lock", key, "--", *python(SHOW_LOCK, "0")], env=env,
                          capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["holders"][0]["fencing_token"] == int(seen["env"]["ESLM_FENCING_TOKEN"])
