"""The deployment files (docs/OPERATIONS.md "Deploying") do what they say, where no Docker and no
Kubernetes run: deploy/docker/Dockerfile's steps and deploy/eck/elasticsearch.yaml's init
container are read, checked against the build (the Elasticsearch version of pom.xml, the plugin
zip's name), and their install commands run by the real `elasticsearch-plugin` in a copy of the
integ-test-zip of that version, whose layout is the image's (`/usr/share/elasticsearch`: `bin/`,
`plugins/`). A version bump that forgets a file, or a command that no longer installs, fails here."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import node as esnode  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "deploy" / "docker" / "Dockerfile"
ECK = ROOT / "deploy" / "eck" / "elasticsearch.yaml"


def pom_version() -> str:
    """The plugin's version: the project's own <version> in pom.xml (the zip's name carries it)."""
    return re.search(r"<artifactId>elasticsearch-lock-manager</artifactId>\s*<version>([^<]+)</version>",
                     (ROOT / "pom.xml").read_text()).group(1)


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of each instruction, comments and line continuations resolved."""
    text = re.sub(r"\\\n", " ", "\n".join(line for line in dockerfile.read_text().splitlines()
                                          if not line.lstrip().startswith("#")))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in text.splitlines() if line.strip()]


def expand(text: str, args: dict) -> str:
    return re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], text)


def installed_in_copy(tmp_path: Path, command: str, replaced: str, by: str) -> str:
    """Runs `command` (`replaced` by `by` in it) in a copy of the distribution, as the image's
    working directory; answers `elasticsearch-plugin list` there."""
    home = tmp_path / "elasticsearch"
    shutil.copytree(esnode.distribution(esnode.es_version()), home, symlinks=True)
    env = esnode.Node("eslm-deploy", "n", 1, 1)._env()
    run = command.replace(replaced, by)
    done = subprocess.run(["sh", "-c", run], cwd=home, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{run}\n{done.stdout}\n{done.stderr}"
    listed = subprocess.run([str(home / "bin" / "elasticsearch-plugin"), "list"], cwd=home, env=env,
                            capture_output=True, text=True, timeout=120)
    return listed.stdout


def test_the_dockerfile_installs_this_builds_zip_into_the_official_image_of_its_version(tmp_path):
    steps = instructions(DOCKERFILE)
    kinds = [k for k, _ in steps]
    assert set(kinds) <= {"ARG", "FROM", "COPY", "RUN"}, f"an instruction this test cannot follow: {kinds}"
    args: dict[str, str] = {}
    copied, runs, image = {}, [], None
    for kind, rest in steps:
        if kind == "ARG":
            name, _, default = rest.partition("=")
            if default:
                args[name.strip()] = default.strip()
        elif kind == "FROM":
            image = expand(rest, args)
        elif kind == "COPY":
            parts = [p for p in shlex.split(expand(rest, args)) if not p.startswith("--")]
            copied[parts[1]] = parts[0]
        else:
            runs.append(expand(rest, args))
    version = esnode.default_es_version()
    assert image == f"docker.elastic.co/elasticsearch/elasticsearch:{version}", image
    zip_file = esnode.plugin_zip(version)
    assert zip_file.name == f"elasticsearch-lock-manager-{pom_version()}-es{version}.zip"
    ((target, source),) = copied.items()
    assert source == zip_file.name, f"the Dockerfile copies {source}; `make dist` makes {zip_file.name}"
    assert len(runs) == 1 and "--batch" in runs[0], runs
    here = tmp_path / Path(target).name  # the COPY, to a folder of the test's own
    shutil.copy(zip_file, here)
    assert "lock-manager" in installed_in_copy(tmp_path, runs[0], target, str(here)).split()
    assert not here.exists(), "the RUN step leaves the zip behind in the image"


def test_the_eck_manifest_installs_the_zip_of_its_elasticsearch_version(tmp_path):
    manifest = yaml.safe_load(ECK.read_text())
    version = manifest["spec"]["version"]
    assert version == esnode.default_es_version(), f"deploy/eck says {version}"
    (node_set,) = manifest["spec"]["nodeSets"]
    assert node_set["count"] >= 3, "a majority must survive a lost node"
    (init,) = node_set["podTemplate"]["spec"]["initContainers"]
    assert init["command"][:2] == ["sh", "-c"], init
    command = init["command"][2]
    url = re.search(r"https://\S+\.zip", command).group(0)
    zip_file = esnode.plugin_zip(version)
    assert url.rsplit("/", 1)[1] == zip_file.name, f"{url} is not {zip_file.name}"
    assert "--batch" in command
    assert "lock-manager" in installed_in_copy(tmp_path, command, url, zip_file.as_uri()).split()
