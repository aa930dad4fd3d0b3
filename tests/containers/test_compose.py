"""docker/compose.yaml and docker/compose.forward.yaml, run end to end with podman-compose (1.0.x) on the
image built from a clean checkout: the runner's exit code, results.json on the results volume, the careful
agent passing and the naive one failing (docker/compose.naive.yaml), and the forward variant's agent, an
image with its URLs baked in, reaching HTTPS hosts through HTTPS_PROXY with the CA from the shared volume.

The forward variant's world: two services named api.openai.com and quotes.example.com (compose's DNS gives
them those names) serve the demo's upstream over TLS with a certificate from a test CA, which the sidecar
trusts through `proxy.upstream_ca` (a real deployment reaches the real hosts and needs none). That one line
is what the test adds to docker/flakeproxy.forward.yaml; the compose file runs as it is."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tests.conftest import REPO
from tests.containers.conftest import WORLD
from tests.containers.engine import PREFIX, project_leftovers, read_volume, wait_exit
from tests.support.tls import make_ca

pytestmark = [pytest.mark.containers, pytest.mark.timeout(600)]
DOCKER = REPO / "docker"
TOKEN = "t0ken-for-compose"


@contextmanager
def project(name: str) -> Iterator[str]:
    """A compose project name of this session; whatever podman-compose made for it is removed after."""
    name = f"{PREFIX}-{name}"
    try:
        yield name
    finally:
        project_leftovers(name).remove()


def compose(name: str, files: list[Path], *args: str, env: dict[str, str]) -> Compose:
    """podman-compose, its output in a file: the `podman start -a` children it leaves attached to the
    containers that still run would hold a pipe open after it exits."""
    command = ["podman-compose", "-p", name, *(f"-f={f}" for f in files), *args]
    environment = {**os.environ, "FLAKEPROXY_TOKEN": TOKEN, **env}
    with tempfile.TemporaryFile("w+") as log:
        code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=environment, timeout=400).returncode
        log.seek(0)
        return Compose(code, log.read())


@dataclass
class Compose:
    returncode: int
    output: str


def _image(image: str) -> dict[str, str]:
    return {"FLAKEPROXY_IMAGE": image}


def results(image: str, name: str) -> dict[str, Any]:
    return dict(json.loads(read_volume(image, f"{name}_results", "results.json")))


def outcomes(data: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(c["invariant"], c["scenario"]): c["outcome"] for c in data["cells"]}


def test_compose_runs_the_demo_world_and_the_careful_agent_passes(image: str) -> None:
    with project("careful") as name:
        out = compose(name, [DOCKER / "compose.yaml"], "up", "--exit-code-from", "runner", env=_image(image))
        assert out.returncode == 0, out.output[-5000:]
        data = results(image, name)
    assert data["score"]["passed"] is True
    assert len(data["episodes"]) == 3
    assert set(outcomes(data).values()) == {"pass", "not_applicable"}, outcomes(data)
    assert outcomes(data)[("never-fabricate-when-tools-fail", "tool-down")] == "pass"


def test_compose_with_the_naive_agent_fails_the_contract(image: str) -> None:
    files = [DOCKER / "compose.yaml", DOCKER / "compose.naive.yaml"]
    with project("naive") as name:
        out = compose(name, files, "up", "--exit-code-from", "runner", env=_image(image))
        assert out.returncode == 1, out.output[-5000:]
        data = results(image, name)
    assert data["score"]["passed"] is False
    assert outcomes(data)[("never-fabricate-when-tools-fail", "tool-down")] == "fail"


def _forward_world(folder: Path, image: str) -> Path:
    """The override that puts the forward variant in a test world: the HTTPS hosts, and the sidecar's config
    with the test CA trusted for upstreams (mounted where the compose file mounts the config)."""
    ca = make_ca(folder / "upstream-ca")
    ca.leaf(["api.openai.com", "quotes.example.com"])  # writes upstream-ca/api.openai.com.pem, key and chain
    config = (DOCKER / "flakeproxy.forward.yaml").read_text()
    trust = "  upstream_ca: /etc/flakeproxy-upstream-ca.pem\n"
    config = config.replace("  intercept: targets\n", "  intercept: targets\n" + trust)
    assert "upstream_ca:" in config
    (folder / "flakeproxy.forward.yaml").write_text(config)
    mount = f"{folder / 'flakeproxy.forward.yaml'}:/etc/flakeproxy/flakeproxy.yaml:ro"
    host = {
        "image": image,
        "user": "root",  # port 443
        "entrypoint": ["python", "/world/tls_upstream.py", "/ca/api.openai.com.pem", "443"],
        "volumes": [f"{WORLD}:/world:ro", f"{folder / 'upstream-ca'}:/ca:ro"],
    }
    override = {
        "services": {
            "api.openai.com": host,
            "quotes.example.com": host,
            "ca": {"volumes": [mount]},
            "flakeproxy": {"volumes": [mount, f"{ca.cert_file}:/etc/flakeproxy-upstream-ca.pem:ro"]},
            "runner": {"volumes": [mount]},
        }
    }
    path = folder / "compose.world.yaml"
    path.write_text(yaml.safe_dump(override, sort_keys=False))
    return path


def test_compose_forward_agent_reaches_https_hosts_through_the_sidecar(
    image: str, agent_image: str, tmp_path: Path
) -> None:
    files = [DOCKER / "compose.forward.yaml", _forward_world(tmp_path, image)]
    env = {"FLAKEPROXY_IMAGE": image, "AGENT_IMAGE": agent_image}
    with project("forward") as name:
        # podman-compose 1.0.x ignores `depends_on: condition`: the CA job first, as docs/staging.md says
        first = compose(name, files, "up", "-d", "ca", env=env)
        assert first.returncode == 0, first.output[-3000:]
        assert wait_exit(f"{name}_ca_1") == 0
        up = compose(name, files, "up", "-d", env=env)
        assert up.returncode == 0, up.output[-3000:]
        code = wait_exit(f"{name}_runner_1")
        runner_log = subprocess.run(["podman", "logs", f"{name}_runner_1"], capture_output=True, text=True)
        assert code == 0, runner_log.stdout[-3000:] + runner_log.stderr[-3000:]
        data = results(image, name)
    assert data["score"]["passed"] is True
    journal = [entry for episode in data["episodes"] for entry in episode["journal"]]
    hosts = {urlsplit(entry["url"]).hostname for entry in journal}
    assert {"api.openai.com", "quotes.example.com"} <= hosts, hosts  # decrypted: the CA on the volume was trusted
    applied = {e["scenario"]: [j["fault"] for j in e["journal"] if (j.get("fault") or {}).get("applied", True)]
               for e in data["episodes"]}  # fmt: skip
    assert all(applied[s] for s in ("tool-down", "llm-rate-limited", "llm-stream-cut")), applied
