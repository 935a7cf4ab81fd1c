"""The package as a type checker sees it once installed (issue 27): `py.typed` ships in the
wheel, so mypy reads the hints; the acquire options are typed keywords, so a misspelt or
mistyped option is an error before anything runs. The package is installed into a throwaway
venv (without dependencies: the venv sees this interpreter's), and mypy checks two snippets."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

GOOD = """
from elasticsearch import Elasticsearch
from eslm import FencedResult, Locks, HeldLock, ops

with Locks(Elasticsearch("http://127.0.0.1:9200")) as locks:
    with locks.lock("orders-42", lease="30s", wait=5, mode="shared", reentrant=True) as held:
        token: int = held.fencing_token
        doc: dict | None = held.update("orders", "42", [ops.inc("items"), ops.set("status", "packed")])
        results: list[FencedResult] = held.bulk([("orders", "43", ops.DELETE)], refresh=True)
    later: HeldLock | None = locks.try_lock("orders-42", owner="worker-2", priority="background")
    with locks.write_lock("orders-42", timeout="5s") as writer:
        writer.downgrade()
        mode: str = writer.mode
    with locks.read_lock("orders-42", lease="30s", scope="key"):
        pass
"""

BAD = """
from elasticsearch import Elasticsearch
from eslm import Locks

locks = Locks(Elasticsearch("http://127.0.0.1:9200"))
locks.lock("orders-42", leese="30s")
locks.acquire("orders-42", mode="sole")
locks.try_lock("orders-42", reentrant="yes")
"""


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("typed-venv")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps",
                    str(HERE.parent)], check=True, capture_output=True, text=True)
    return python


@pytest.fixture(scope="module")
def checked(venv_python, tmp_path_factory) -> dict[str, list[str]]:
    """mypy's errors in each snippet, `good.py` and `bad.py`, from one run over both (mypy reads
    the installed package and the elasticsearch client's hints once: most of its time)."""
    folder = tmp_path_factory.mktemp("snippets")
    for name, code in (("good.py", GOOD), ("bad.py", BAD)):
        (folder / name).write_text(textwrap.dedent(code))
    done = subprocess.run([sys.executable, "-m", "mypy", "--python-executable", str(venv_python),
                           "--no-incremental", "--follow-imports=silent", "good.py", "bad.py"],
                          capture_output=True, text=True, cwd=folder, timeout=300)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: errors found, 2: mypy failed
    assert "py.typed" not in done.stdout, done.stdout
    errors: dict[str, list[str]] = {"good.py": [], "bad.py": []}
    for line in done.stdout.splitlines():
        if ": error:" in line:
            errors.setdefault(line.split(":", 1)[0], []).append(line)
    return errors


def test_installed_package_is_typed_and_good_calls_check(checked):
    assert checked["good.py"] == []


def test_misspelt_and_mistyped_options_are_type_errors(checked):
    errors = checked["bad.py"]
    assert len(errors) == 3, errors
    assert '"leese"' in errors[0] and ":6:" in errors[0]
    assert ":7:" in errors[1] and "mode" in errors[1]
    assert ":8:" in errors[2] and "reentrant" in errors[2]


def test_every_public_class_method_and_property_has_a_docstring():
    import inspect

    import eslm

    missing = []
    for name in eslm.__all__:
        cls = getattr(eslm, name)
        if not cls.__doc__:
            missing.append(name)
        for attr, value in vars(cls).items() if inspect.isclass(cls) else ():
            if attr.startswith("_") or not (inspect.isfunction(value) or isinstance(value, property)):
                continue
            if not inspect.getdoc(getattr(cls, attr)):
                missing.append(f"{name}.{attr}")
    assert missing == []
