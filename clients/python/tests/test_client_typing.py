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
from eslm import Locks, HeldLock

with Locks(Elasticsearch("http://127.0.0.1:9200")) as locks:
    with locks.lock("orders-42", lease="30s", wait=5, mode="shared", reentrant=True) as held:
        token: int = held.fencing_token
    later: HeldLock | None = locks.try_lock("orders-42", owner="worker-2", priority="background")
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


def mypy(python: Path, code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, "-m", "mypy", "--python-executable", str(python),
                           "--no-incremental", "--follow-imports=silent", str(snippet)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)


def test_installed_package_is_typed_and_good_calls_check(venv_python, tmp_path):
    done = mypy(venv_python, GOOD, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "py.typed" not in done.stdout


def test_misspelt_and_mistyped_options_are_type_errors(venv_python, tmp_path):
    done = mypy(venv_python, BAD, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 3, done.stdout
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
