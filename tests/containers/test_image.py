"""docker/Dockerfile built from a clean checkout and run in a real engine: it runs as non-root, holds every
file of the package, `flakeproxy --help` and `proxy` start, /healthz answers through a published port,
SIGTERM stops it within 2 s with exit 0, the CA volume keeps its certificate across restarts, the HEALTHCHECK
works in docker format (and is gone from OCI images, as docs/staging.md says), and its size is within budget."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO
from tests.containers.engine import Made, exec_in, made, podman, status, wait_exit, wait_log

pytestmark = [pytest.mark.containers, pytest.mark.timeout(600)]
TOKEN = "t0ken-for-the-image"
READY = "flakeproxy proxy ready"


def _sidecar_config(folder: Path, forward: bool = False) -> Path:
    """A sidecar's config: one listener (its upstream need not exist) and the token from the environment."""
    proxy: dict[str, Any] = {
        "admin": "0.0.0.0:8790",
        "token": "${FLAKEPROXY_TOKEN}",
        "listeners": [{"name": "tools", "listen": "0.0.0.0:8702", "upstream": "http://127.0.0.1:9"}],
    }
    if forward:
        proxy["forward"] = "0.0.0.0:8080"
    folder.mkdir(exist_ok=True)
    (folder / "flakeproxy.yaml").write_text(yaml.safe_dump({"version": "2.0", "proxy": proxy}))
    return folder


def _start(things: Made, image: str, config: Path, *extra: str, name: str = "sidecar") -> str:
    container = things.name(name)
    things.containers.append(container)
    podman(
        "run", "-d", "--name", container, "-e", f"FLAKEPROXY_TOKEN={TOKEN}",
        "-v", f"{config}:/etc/flakeproxy:ro", *extra, image,
    )  # fmt: skip
    wait_log(container, READY)
    return container


def test_it_runs_as_a_non_root_user_with_the_proxy_as_entrypoint(image: str) -> None:
    config = json.loads(podman("image", "inspect", image).stdout)[0]["Config"]
    assert config["User"] == "flakeproxy" and config["Entrypoint"] == ["flakeproxy", "proxy"]
    ids = podman("run", "--rm", "--entrypoint", "id", image).stdout
    assert ids.startswith("uid=10001(flakeproxy)"), ids


def test_help_of_the_cli_and_of_its_entrypoint(image: str) -> None:
    whole = podman("run", "--rm", "--entrypoint", "flakeproxy", image, "--help").stdout
    assert all(command in whole for command in ("contract", "proxy", "merge", "report", "ca"))
    assert "Run the proxy" in podman("run", "--rm", image, "--help").stdout


def test_the_image_holds_every_file_of_the_package(image: str) -> None:
    """Every source file of flakeproxy/, addons/ and runner/ (code and package data) is in the installed
    package, where pyproject.toml maps it; a file left out of the wheel is missing here."""
    folders = {"flakeproxy": "", "addons": "addons/", "runner": "runner/"}
    git = ["git", "ls-files", "--cached", "--others", "--exclude-standard", *folders]  # as the checkout holds them
    listed = subprocess.run(git, cwd=REPO, capture_output=True, text=True, check=True)
    want = set()
    for name in listed.stdout.split():
        top, rest = name.split("/", 1)
        if (REPO / name).exists():
            want.add(folders[top] + rest)
    walk = (
        "import os, flakeproxy; root = os.path.dirname(flakeproxy.__file__)\n"
        "for d, _, files in os.walk(root):\n"
        "    for f in files:\n"
        "        if '__pycache__' not in d: print(os.path.relpath(os.path.join(d, f), root))"
    )
    have = set(podman("run", "--rm", "--entrypoint", "python", image, "-c", walk).stdout.split())
    assert want - have == set(), "in the sources, not in the image"


def test_the_proxy_serves_healthz_and_stops_on_sigterm_within_2_s(image: str, tmp_path: Path) -> None:
    with made() as things:
        sidecar = _start(things, image, _sidecar_config(tmp_path / "config"), "-p", "127.0.0.1::8790")
        port = podman("port", sidecar, "8790/tcp").stdout.strip().rsplit(":", 1)[1]
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/healthz", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["status"] == "ok"
        start = time.monotonic()
        podman("kill", "--signal", "TERM", sidecar)
        code = wait_exit(sidecar, timeout_s=30)
        took = time.monotonic() - start
        assert code == 0, f"exit {code} after SIGTERM"
        assert took < 2, f"SIGTERM took {took:.2f} s to stop it (podman's own calls included)"


def test_the_ca_volume_keeps_the_same_certificate_across_restarts(image: str, tmp_path: Path) -> None:
    config = _sidecar_config(tmp_path / "config", forward=True)
    with made() as things:
        volume = things.name("mitmproxy-ca")
        things.volumes.append(volume)
        certs = []
        for run in ("first", "second"):
            sidecar = _start(things, image, config, "-v", f"{volume}:/home/flakeproxy/.mitmproxy", name=run)
            ca = "/home/flakeproxy/.mitmproxy"
            key = exec_in(sidecar, "stat", "-c", "%a %U", f"{ca}/mitmproxy-ca.pem").stdout.strip()
            assert key == "600 flakeproxy", key
            certs.append(exec_in(sidecar, "cat", f"{ca}/mitmproxy-ca-cert.pem").stdout)
            podman("stop", "-t", "5", sidecar)
        assert certs[0].startswith("-----BEGIN CERTIFICATE-----") and certs[0] == certs[1]


def test_the_healthcheck_works_in_docker_format(docker_image: str, image: str, tmp_path: Path) -> None:
    check = json.loads(podman("image", "inspect", docker_image).stdout)[0]["Healthcheck"]
    assert "/healthz" in " ".join(check["Test"])
    # OCI images drop HEALTHCHECK (podman warns at build): docs/staging.md says to build with --format docker
    assert json.loads(podman("image", "inspect", image).stdout)[0].get("Healthcheck") is None
    assert "--format docker" in (REPO / "docs" / "staging.md").read_text()
    config = _sidecar_config(tmp_path / "config")
    with made() as things:
        healthy = _start(things, docker_image, config, name="healthy")
        assert podman("healthcheck", "run", healthy, check=False).returncode == 0, status(healthy)
        # the control API elsewhere than the port the check probes: it must say unhealthy
        moved = _start(things, docker_image, config, "-e", "FLAKEPROXY_ADMIN=0.0.0.0:8791", name="moved")
        assert podman("healthcheck", "run", moved, check=False).returncode != 0


def test_its_size_is_within_the_budget(image: str) -> None:
    out = subprocess.run(
        [sys.executable, str(REPO / "bench" / "image_size.py"), image], capture_output=True, text=True, timeout=60
    )
    print(out.stdout)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "within the budget" in out.stdout
