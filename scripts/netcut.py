"""Network partitions between test nodes on one machine (docs/RELIABILITY.md "The run"): a node's
transport traffic is cut both ways while clients still reach its HTTP port. Each node of a
scripts/node.py Cluster runs as a Unix user of its own, so iptables can tell its packets apart:

    mangle OUTPUT  -m owner --uid-owner <user> ! --sport <HTTP port>  CONNMARK --set-mark <uid>
                   (`mark`: every transport connection the node takes part in carries its mark)
    INPUT          -p tcp --dport <its transport port>                DROP  (nobody reaches it)
    INPUT          -m connmark --mark <uid>                           DROP  (nor answers it)
    OUTPUT         -p tcp -m owner --uid-owner <user> ! --sport <HTTP port>  DROP  (it reaches
                                                                      nobody, but answers HTTP)

Without the mark, a connection the node opened itself would still deliver to it what the others
send: it could hear the cluster without being heard. Packets are dropped, not refused: the others
see what a real partition looks like (timeouts, no reset), and Elasticsearch's own fault detection
decides when the node is gone. Every rule carries the comment TAG and the Unix user of the node it
is about, and `heal_all(nodes)` deletes the rules of those nodes: at the start of a run (a run
killed half-way leaves none behind for the next) and at its end. Only those: the test lanes run
clusters with cuts side by side, and a heal of every rule at one cluster's end took the cut off
another's master mid-test (a fresh-clone CI run of 29c1f67: no new master within 150 s, since none
of the three nodes ever lost the cut master). `cut_one_way(src, dst)` adds one more kind of rule: what `src` sends to `dst`'s transport
port is dropped (see its docs for why that is a one-way cut between TCP peers). Needs root and the Debian package `iptables` (.ci/run installs it)."""

from __future__ import annotations

import shutil
import subprocess

TAG = "eslm-netcut"


def _iptables(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["iptables", "-w", *args], capture_output=True, text=True)


def usable() -> str | None:
    """None when iptables can cut traffic here, else why not."""
    if shutil.which("iptables") is None:
        return "iptables is not installed (Debian package iptables)"
    r = _iptables("-L", "OUTPUT", "-n")
    return None if r.returncode == 0 else f"iptables cannot be used: {r.stderr.strip()}"


def _uid(node) -> str:
    return subprocess.run(["id", "-u", node.user], capture_output=True, text=True, check=True).stdout.strip()


def _comment(node) -> list[str]:
    return ["-m", "comment", "--comment", _tag(node)]


def _tag(node) -> str:
    """The comment of `node`'s rules: its user, which no cluster running beside it shares
    (scripts/node.py `Cluster`), unlike its name."""
    return f"{TAG} {node.user}"


def _marking(node) -> tuple[str, list[str]]:
    return ("OUTPUT", ["-t", "mangle", "-m", "owner", "--uid-owner", node.user, "-p", "tcp", "!", "--sport",
                       str(node.http_port), *_comment(node), "-j", "CONNMARK", "--set-mark", _uid(node)])


def _rules(node) -> list[tuple[str, list[str]]]:
    return [
        ("INPUT", ["-p", "tcp", "--dport", str(node.transport_port), *_comment(node), "-j", "DROP"]),
        ("INPUT", ["-m", "connmark", "--mark", _uid(node), *_comment(node), "-j", "DROP"]),
        ("OUTPUT", ["-p", "tcp", "-m", "owner", "--uid-owner", node.user, "!", "--sport",
                    str(node.http_port), *_comment(node), "-j", "DROP"]),
    ]


def _insert(chain: str, rule: list[str]) -> None:
    table = rule[:2] if rule[:1] == ["-t"] else []
    spec = rule[2:] if table else rule
    if _iptables(*table, "-C", chain, *spec).returncode == 0:
        return  # already there
    r = _iptables(*table, "-I", chain, *spec)
    if r.returncode != 0:
        raise RuntimeError(f"iptables -I {chain} {' '.join(rule)}: {r.stderr.strip()}")


def _delete(chain: str, rule: list[str]) -> None:
    table = rule[:2] if rule[:1] == ["-t"] else []
    spec = rule[2:] if table else rule
    _iptables(*table, "-D", chain, *spec)


def mark(node) -> None:
    """Marks the connections `node` takes part in (see the module docs): done before any cut, so
    that the connections open at the cut are marked already."""
    _insert(*_marking(node))


def cut(node) -> None:
    """Cuts `node`'s transport traffic both ways; its HTTP port stays reachable."""
    mark(node)
    for chain, rule in _rules(node):
        _insert(chain, rule)


def heal(node) -> None:
    """Removes `node`'s cut (each rule once; a rule already gone is fine). The mark stays."""
    for chain, rule in _rules(node):
        _delete(chain, rule)


def _one_way(src, dst) -> tuple[str, list[str]]:
    return ("OUTPUT", ["-p", "tcp", "-m", "owner", "--uid-owner", src.user, "--dport", str(dst.transport_port),
                       *_comment(src), "-j", "DROP"])


def cut_one_way(src, dst) -> None:
    """Drops what `src` sends on the connections it opened to `dst`: `src`'s requests to `dst`
    (and on those connections, everything) go unanswered, while `dst`'s requests to `src`, on
    the connections `dst` opened, still come and go with their answers. Between two TCP peers a
    one-way cut is one of connection direction: a byte nobody acknowledges stops its connection
    both ways. Elasticsearch sends each request on a connection its sender opened, so this is
    "`dst` hears `src` no more, `src` still hears `dst`" for every request (follower and leader
    checks, publications, the plugin's batches and ownership checks)."""
    _insert(*_one_way(src, dst))


def heal_one_way(src, dst) -> None:
    _delete(*_one_way(src, dst))


def heal_all(nodes) -> int:
    """Deletes every rule this module added about `nodes` (cuts, one-way cuts from them, marks),
    and no other cluster's; answers how many."""
    tags = {f'"{_tag(n)}"' for n in nodes}
    removed = 0
    for table, chain in (("filter", "INPUT"), ("filter", "OUTPUT"), ("mangle", "OUTPUT")):
        for line in _iptables("-t", table, "-S", chain).stdout.splitlines():
            if line.startswith("-A ") and any(tag in line for tag in tags):
                # `-S` quotes the comment: join its words back into one argument
                spec = [part.strip('"') for part in _join_comment(line.split()[2:])]
                if _iptables("-t", table, "-D", chain, *spec).returncode == 0:
                    removed += 1
    return removed


def _join_comment(parts: list[str]) -> list[str]:
    """`-S` prints `--comment "eslm-netcut eslmcut1"` as two words; joins them back into one."""
    out, i = [], 0
    while i < len(parts):
        if parts[i] == "--comment" and i + 1 < len(parts) and parts[i + 1].startswith('"'):
            words = [parts[i + 1]]
            i += 2
            while not words[-1].endswith('"') and i < len(parts):
                words.append(parts[i])
                i += 1
            out += ["--comment", " ".join(words)]
            continue
        out.append(parts[i])
        i += 1
    return out
