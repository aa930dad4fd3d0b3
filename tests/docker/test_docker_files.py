"""The docker files, checked without a container engine (fast, in the default run; tests/containers runs
them in podman, `pytest -m containers`): the Dockerfile parses and says what it must (a builder stage makes
the wheel, the image installs only that wheel and keeps no sources), its entrypoint's exact command serves
/healthz when run directly from the installed wheel in an empty working directory, the compose services'
exact entrypoints run the whole compose world on loopback (host names mapped to 127.0.0.1) to a passing
contract run, and the compose file and the Kubernetes pod agree with the config they mount."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
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
from tests.support.wheel import installed_bin, user_env

DOCKER = REPO / "docker"


def stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile's stages, each a list of (INSTRUCTION, arguments), continuation lines joined,
    comments dropped; a stage starts at its FROM."""
    text = re.sub(r"\\\n", " ", (DOCKER / "Dockerfile").read_text())
    out: list[list[tuple[str, str]]] = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            if word.upper() == "FROM":
                out.append([])
            out[-1].append((word.upper(), rest.strip()))
    return out


def instructions() -> list[tuple[str, str]]:
    """The final stage's instructions: what the image is."""
    return stages()[-1]


def test_dockerfile_parses_and_says_what_it_must() -> None:
    known = {"FROM", "RUN", "COPY", "WORKDIR", "USER", "VOLUME", "ENV", "EXPOSE", "HEALTHCHECK", "ENTRYPOINT", "CMD"}
    build, image = stages()
    for stage in (build, image):
        assert {word for word, _ in stage} <= known
        assert re.fullmatch(r"python:3\.1[2-9]-slim( AS \w+)?", stage[0][1])
    # the builder stage copies the sources (which exist) and builds the wheel
    name = build[0][1].split(" AS ")[1]
    for word, args in build:
        if word == "COPY":
            for source in shlex.split(args)[:-1]:
                assert (REPO / source).exists(), f"COPY {source}: not in the repository"
    assert any(word == "RUN" and "pip wheel" in args and "--no-deps" in args for word, args in build)
    # the image takes only the wheel from it, installs it and removes it: no sources anywhere
    copies = [shlex.split(args) for word, args in image if word == "COPY"]
    assert copies and all(c[0] == f"--from={name}" for c in copies), "the image copies only from the build stage"
    install = next(args for word, args in image if word == "RUN" and "pip install" in args)
    assert re.search(r"pip install [^&]*\.whl", install) and "rm -rf" in install
    user = [args for word, args in image if word == "USER"]
    assert user and user[-1] not in ("root", "0")
    assert json.loads(next(a for w, a in image if w == "VOLUME")) == ["/home/flakeproxy/.mitmproxy"]
    assert "/healthz" in next(a for w, a in image if w == "HEALTHCHECK")
    assert json.loads(next(a for w, a in image if w == "ENTRYPOINT")) == ["flakeproxy", "proxy"]
    env = " ".join(a for w, a in image if w == "ENV")
    assert "FLAKEPROXY_CONFIG=/etc/flakeproxy/flakeproxy.yaml" in env and "FLAKEPROXY_ADMIN=0.0.0.0:8790" in env
    # the compose runner writes results.json to /results as the image's user
    assert "/results" in install and "chown flakeproxy:flakeproxy" in install


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The image's install: the wheel in a fresh venv (its bin folder)."""
    return installed_bin(tmp_path_factory)


def _sidecar_config(tmp: Path) -> tuple[Path, int]:
    listen = free_port()
    config = {
        "version": "2.0",
        "proxy": {"listeners": [{"name": "tools", "listen": f"127.0.0.1:{listen}", "upstream": "http://127.0.0.1:9"}]},
    }
    path = tmp / "flakeproxy.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, listen


@pytest.mark.timeout(180)
def test_entrypoint_command_serves_healthz(installed: Path, tmp_path: Path) -> None:
    steps = dict(instructions())
    entrypoint = json.loads(steps["ENTRYPOINT"])
    healthcheck = json.loads(steps["HEALTHCHECK"].split("CMD", 1)[1].strip())
    config, _ = _sidecar_config(tmp_path)
    admin = free_port()
    workdir = tmp_path / "workdir"  # the image's WORKDIR holds no sources
    workdir.mkdir()
    # the image's environment, with the control API on loopback for this test
    env = user_env(
        FLAKEPROXY_CONFIG=str(config),
        FLAKEPROXY_ADMIN=f"127.0.0.1:{admin}",
        FLAKEPROXY_TOKEN="t0ken",
        PATH=f"{installed}:{os.environ['PATH']}",
    )
    with subprocess.Popen(
        entrypoint, env=env, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proxy:
        try:
            assert proxy.stdout is not None
            assert proxy.stdout.readline().startswith("flakeproxy proxy ready")
            request = urllib.request.Request(
                f"http://127.0.0.1:{admin}/healthz", headers={"Authorization": "Bearer t0ken"}
            )
            assert json.loads(urllib.request.urlopen(request, timeout=5).read())["status"] == "ok"
            assert healthcheck[0] == "python"
            probe = [str(installed / "python"), *healthcheck[1:]]
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


@pytest.mark.timeout(240)
def test_compose_world_runs_from_the_exact_entrypoints(installed: Path, tmp_path: Path) -> None:
    """Every compose service's exact entrypoint, from the installed wheel in an empty working directory,
    with the compose host names and ports mapped to free loopback ports: the careful agent passes."""
    ports: dict[str, int] = {}

    def local(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            return f"127.0.0.1:{ports.setdefault(m[2], free_port())}"

        return re.sub(r"\b(0\.0\.0\.0|tools|agent|flakeproxy):(\d+)\b", one, text)

    def args_of(service: dict[str, Any]) -> list[str]:
        args = [local(a) for a in service["entrypoint"]]
        if "--port" in args:  # compose publishes the bare port; here it becomes the mapped one
            i = args.index("--port") + 1
            args[i] = str(ports.setdefault(args[i], free_port()))
        return args

    services = _compose()["services"]
    config = tmp_path / "flakeproxy.yaml"
    config.write_text(local((DOCKER / "flakeproxy.yaml").read_text()).replace("output: /results", "output: results"))
    workdir = tmp_path / "workdir"
    workdir.mkdir()
    env = user_env(PATH=f"{installed}:{os.environ['PATH']}", FLAKEPROXY_TOKEN="t0ken")
    sidecar_env = {k: local(v) for k, v in services["flakeproxy"]["environment"].items() if k != "FLAKEPROXY_TOKEN"}
    sidecar_env["FLAKEPROXY_CONFIG"] = str(config)
    children: list[subprocess.Popen[str]] = []
    try:
        for name in ("tools", "agent"):
            args = args_of(services[name])
            children.append(_spawn([*args, "--host", "127.0.0.1"], env, workdir))
            _wait_port(int(args[args.index("--port") + 1]), children[-1])
        sidecar = _spawn(args_of({"entrypoint": ["flakeproxy", "proxy"]}), {**env, **sidecar_env}, workdir)
        children.append(sidecar)
        assert sidecar.stdout is not None and sidecar.stdout.readline().startswith("flakeproxy proxy ready")
        runner = args_of(services["runner"])
        assert runner[-1] == "/etc/flakeproxy/flakeproxy.yaml"
        runner[-1] = str(config)
        out = subprocess.run(runner, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr[-2000:]
        assert "No module named" not in out.stderr
        assert json.loads((tmp_path / "results" / "results.json").read_text())["score"]["passed"] is True
    finally:
        for child in children:
            child.terminate()
            child.wait(10)
            if child.stdout is not None:
                child.stdout.close()
            if child.stderr is not None:
                child.stderr.close()


def _spawn(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _wait_port(port: int, child: subprocess.Popen[str]) -> None:
    """Until the child accepts connections on port (or dies, or 15 s pass)."""
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline and child.poll() is None, f"{child.args} did not start"
            time.sleep(0.05)


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
