"""`eslm`, the command line of the Elasticsearch Lock Manager (clients/python/README.md "Command
line"): `eslm lock KEY -- CMD` runs a command while holding a lock, as `etcdctl lock` and
`consul lock` do, `eslm elect NAME -- CMD` while leading an election, and `eslm ls`, `eslm who`
and `eslm release --force` look at and evict locks. Installed as the `eslm` console script;
`python -m eslm.cli` is the same.

Modules: main.py (arguments, failures and exit statuses), exits.py (the statuses),
connection.py (URL and credentials), hold.py (lock, elect), child.py (the command's process and
its signals), show.py and tables.py (ls, who), release.py (release --force)."""

from .main import main

__all__ = ["main"]
