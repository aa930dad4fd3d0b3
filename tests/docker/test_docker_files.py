"""The docker files, checked without a Docker engine (none runs on these machines): the Dockerfile
parses and says what it must, its entrypoint's exact command serves /healthz when run directly, and the
compose file and the Kubernetes pod agree with the config they mount. Not verified here: building the
image and running the containers."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from flakeproxy import load_config
from tests.conftest import REPO
from tests.support.loops import free_port

DOCKER = REPO / "docker"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (DOCKER / "Dockerfile").read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_dockerfile_parses_and_says_what_it_must() -> None:
    known = {"FROM", "RUN", "COPY", "WORKDIR", "USER", "VOLUME", "ENV", "EXPOSE", "HEALTHCHECK", "ENTRYPOINT", "CMD"}
    steps = instructions()
    assert {word for word, _ in steps} <= known
    assert steps[0][0] == "FROM" and re.fullmatch(r"python:3\.1[2-9]-slim", steps[0][1])
    user = [args for word, args in steps if word == "USER"]
    assert user and user[-1] not in ("root", "0")
    assert json.loads(next(a for w, a in steps if w == "VOLUME")) == ["/home/flakeproxy/.mitmproxy"]
    assert "/healthz" in next(a for w, a in steps if w == "HEALTHCHECK")
    assert json.loads(next(a for w, a in steps if w == "ENTRYPOINT")) == ["flakeproxy", "proxy"]
    for word, args in steps:
        if word == "COPY":
            for source in shlex.split(args)[:-1]:
                assert (REPO / source).exists(), f"COPY {source}: not in the repository"
    env = " ".join(a for w, a in steps if w == "ENV")
    assert "FLAKEPROXY_CONFIG=/etc/flakeproxy/flakeproxy.yaml" in env and "FLAKEPROXY_ADMIN=0.0.0.0:8790" in env


def _sidecar_config(tmp: Path) -> tuple[Path, int]:
    listen = free_port()
    config = {
        "version": "2.0",
        "proxy": {"listeners": [{"name": "tools", "listen": f"127.0.0.1:{listen}", "upstream": "http://127.0.0.1:9"}]},
    }
    path = tmp / "flakeproxy.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, listen


def test_entrypoint_command_serves_healthz(tmp_path: Path) -> None:
    steps = dict(instructions())
    entrypoint = json.loads(steps["ENTRYPOINT"])
    healthcheck = json.loads(steps["HEALTHCHECK"].split("CMD", 1)[1].strip())
    config, _ = _sidecar_config(tmp_path)
    admin = free_port()
    # the image's environment, with the control API on loopback for this test
    env = {
        **os.environ,
        "FLAKEPROXY_CONFIG": str(config),
        "FLAKEPROXY_ADMIN": f"127.0.0.1:{admin}",
        "FLAKEPROXY_TOKEN": "t0ken",
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    with subprocess.Popen(entrypoint, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proxy:
        try:
            assert proxy.stdout is not None
            assert proxy.stdout.readline().startswith("flakeproxy proxy ready")
            request = urllib.request.Request(
                f"http://127.0.0.1:{admin}/healthz", headers={"Authorization": "Bearer t0ken"}
            )
            assert json.loads(urllib.request.urlopen(request, timeout=5).read())["status"] == "ok"
            probe = [sys.executable if healthcheck[0] == "python" else healthcheck[0], *healthcheck[1:]]
            probe[-1] = probe[-1].replace("127.0.0.1:8790", f"127.0.0.1:{admin}")
            assert subprocess.run(probe, env=env, timeout=10).returncode == 0
            env_bad = {**env, "FLAKEPROXY_TOKEN": "wrong"}
            assert subprocess.run(probe, env=env_bad, timeout=10, capture_output=True).returncode != 0
        finally:
            proxy.terminate()
            proxy.wait(10)


def _compose() -> dict[str, Any]:
    return dict(yaml.safe_load((DOCKER / "compose.yaml").read_text()))


def _host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return str(parts.hostname), int(parts.port or 80)


def _flag(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def test_compose_agrees_with_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAKEPROXY_TOKEN", "t")
    config = load_config(DOCKER / "flakeproxy.yaml")
    services = _compose()["services"]
    assert set(services) == {"tools", "flakeproxy", "agent", "runner"}
    listeners = {lst.name: int(lst.listen.rsplit(":", 1)[1]) for lst in config.proxy.listeners}
    sidecar = services["flakeproxy"]
    admin_port = int(config.proxy.admin.rsplit(":", 1)[1])
    assert {int(p) for p in sidecar["ports"]} == {admin_port, *listeners.values()}
    assert sidecar["environment"]["FLAKEPROXY_ADMIN"] == config.proxy.admin
    mount = next(v for v in sidecar["volumes"] if v.startswith("./flakeproxy.yaml:"))
    assert mount.split(":")[1] == sidecar["environment"]["FLAKEPROXY_CONFIG"]
    assert "FLAKEPROXY_TOKEN" in sidecar["environment"] and "FLAKEPROXY_TOKEN" in services["runner"]["environment"]
    # upstreams are compose services listening where the config says
    for listener in config.proxy.listeners:
        host, port = _host_port(listener.upstream)
        assert host in services and int(_flag(services[host]["entrypoint"], "--port")) == port
    # the agent's base URLs are the sidecar's listeners, by name
    agent_args = services["agent"]["entrypoint"]
    for name in ("llm", "tools", "mcp"):
        assert _host_port(_flag(agent_args, f"--{name}")) == ("flakeproxy", listeners[name])
    assert config.agent is not None and _host_port(config.agent.endpoint) == ("agent", int(_flag(agent_args, "--port")))
    assert _host_port(str(config.proxy.admin_url)) == ("flakeproxy", admin_port)
    assert services["runner"]["entrypoint"][:3] == ["flakeproxy", "contract", "run"]


def test_compose_entrypoints_run(tmp_path: Path) -> None:
    """The tools service's exact command serves the example upstream."""
    args = _compose()["services"]["tools"]["entrypoint"]
    port = free_port()
    args = [sys.executable if args[0] == "python" else args[0], *args[1:]]
    args[args.index("--port") + 1] = str(port)
    with subprocess.Popen([*args, "--host", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as p:
        try:
            deadline = time.monotonic() + 15
            while True:
                try:
                    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/quotes?symbol=AAPL", timeout=2).read()
                    break
                except OSError:
                    assert time.monotonic() < deadline and p.poll() is None, "the tools service did not start"
                    time.sleep(0.1)
            assert json.loads(body)["price"] == 189.5
        finally:
            p.terminate()
            p.wait(10)


def test_kubernetes_pod_agrees_with_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAKEPROXY_TOKEN", "t")
    config = load_config(DOCKER / "flakeproxy.yaml")
    pod = yaml.safe_load((DOCKER / "kubernetes-pod.yaml").read_text())
    containers = {c["name"]: c for c in pod["spec"]["containers"]}
    sidecar = containers["flakeproxy"]
    env = {e["name"]: e for e in sidecar["env"]}
    assert env["FLAKEPROXY_TOKEN"]["valueFrom"]["secretKeyRef"]["key"] == "token"
    assert env["FLAKEPROXY_ADMIN"]["value"] == config.proxy.admin
    assert sidecar["securityContext"]["runAsNonRoot"] is True
    assert any(m["mountPath"] == "/home/flakeproxy/.mitmproxy" for m in sidecar["volumeMounts"])
    ports = {int(lst.listen.rsplit(":", 1)[1]) for lst in config.proxy.listeners}
    agent_urls = [e["value"] for e in containers["agent"]["env"]]
    assert {_host_port(u)[1] for u in agent_urls} == ports and {_host_port(u)[0] for u in agent_urls} == {"127.0.0.1"}
