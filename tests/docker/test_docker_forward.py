"""The forward-mode variants (compose.forward.yaml, kubernetes-pod.forward.yaml, flakeproxy.forward.yaml),
checked without a container engine (tests/containers runs them in podman): the agent keeps its image and
URLs and gets only HTTPS_PROXY/NO_PROXY and CA variables pointing at files on a shared volume; the CA job's
exact command, run from the installed wheel, writes exactly those files from the CA the sidecar will use;
the sidecar's key stays off the agent's volume."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from flakeproxy import load_config
from flakeproxy.config import FlakeproxyConfig
from tests.conftest import REPO
from tests.support.wheel import installed_bin, user_env

DOCKER = REPO / "docker"
CA_VARS = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")


def _config(monkeypatch: pytest.MonkeyPatch) -> FlakeproxyConfig:
    monkeypatch.setenv("FLAKEPROXY_TOKEN", "t")
    return load_config(DOCKER / "flakeproxy.forward.yaml")


def _mounts(volumes: list[str]) -> dict[str, str]:
    """compose volume entries -> {source: mount path}."""
    return {v.split(":")[0]: v.split(":")[1] for v in volumes}


def _ca_outputs(command: list[str]) -> dict[str, str]:
    """The CA job's `sh -c` command -> {--out path: what it writes (pem or bundle)}."""
    assert command[:2] == ["sh", "-c"]
    out = {}
    for step in command[2].split("&&"):
        args = shlex.split(step)
        assert args[:2] == ["flakeproxy", "ca"], step
        out[args[args.index("--out") + 1]] = "bundle" if "--bundle" in args else "pem"
    return out


def test_the_forward_config_names_real_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(monkeypatch)
    assert config.proxy.forward == "0.0.0.0:8080" and config.proxy.intercept == "targets"
    assert not config.proxy.listeners and not config.proxy.resolve and not config.proxy.insecure_skip_upstream_verify
    assert all(t.listener == "forward" and t.host and "*" not in t.host for t in config.targets.values())
    assert config.targets["llm"].host == "api.openai.com" and config.targets["llm"].api == "openai"


def test_forward_compose_gives_the_agent_only_a_proxy_and_a_ca(monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(monkeypatch)
    services = yaml.safe_load((DOCKER / "compose.forward.yaml").read_text())["services"]
    assert set(services) == {"ca", "flakeproxy", "agent", "runner"}
    forward_port = int(str(config.proxy.forward).rsplit(":", 1)[1])
    sidecar, agent, ca = services["flakeproxy"], services["agent"], services["ca"]
    assert {int(p) for p in sidecar["ports"]} == {forward_port, int(config.proxy.admin.rsplit(":", 1)[1])}
    # the sidecar and the CA job share the CA folder the config names; the agent never mounts it
    assert _mounts(sidecar["volumes"])["mitmproxy-ca"] == config.proxy.ca_dir == _mounts(ca["volumes"])["mitmproxy-ca"]
    assert "mitmproxy-ca" not in _mounts(agent["volumes"])
    assert sidecar["depends_on"]["ca"]["condition"] == "service_completed_successfully"
    # the agent: its own image (not ours, not rebuilt), its URLs untouched, the proxy and the CA by env
    env = agent["environment"]
    assert "build" not in agent and agent["image"].startswith("${AGENT_IMAGE")
    assert not [k for k in env if k.endswith(("_URL", "_BASE_URL"))]
    for var in ("HTTPS_PROXY", "HTTP_PROXY"):
        url = urlsplit(env[var])
        assert (url.scheme, url.hostname, url.port) == ("http", "flakeproxy", forward_port)
    no_proxy = env["NO_PROXY"].split(",")
    assert "flakeproxy" in no_proxy and not {t.host for t in config.targets.values()} & set(no_proxy)
    # the CA variables point at the files the CA job writes, on the volume both mount
    shared = _mounts(agent["volumes"])["flakeproxy-ca"]
    assert agent["volumes"][0].endswith(":ro")
    written = _ca_outputs(ca["entrypoint"])
    ca_dir_in_job = _mounts(ca["volumes"])["flakeproxy-ca"]
    trusted = {var: env[var].replace(shared, ca_dir_in_job, 1) for var in CA_VARS}
    assert written[trusted["NODE_EXTRA_CA_CERTS"]] == "pem"  # Node adds it to its own roots
    assert written[trusted["SSL_CERT_FILE"]] == written[trusted["REQUESTS_CA_BUNDLE"]] == "bundle"  # these replace


def test_forward_pod_gives_the_agent_only_a_proxy_and_a_ca(monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(monkeypatch)
    pod = yaml.safe_load((DOCKER / "kubernetes-pod.forward.yaml").read_text())["spec"]
    containers = {c["name"]: c for c in pod["containers"]}
    [init] = pod["initContainers"]
    agent, sidecar = containers["agent"], containers["flakeproxy"]
    env = {e["name"]: e.get("value") for e in agent["env"]}
    url = urlsplit(env["HTTPS_PROXY"])
    assert (url.hostname, url.port) == ("127.0.0.1", int(str(config.proxy.forward).rsplit(":", 1)[1]))
    assert not [k for k in env if k.endswith("_URL")]
    mounts = {c["name"]: {m["name"]: m["mountPath"] for m in c["volumeMounts"]} for c in (init, agent, sidecar)}
    assert mounts["flakeproxy"]["mitmproxy-ca"] == mounts["flakeproxy-ca"]["mitmproxy-ca"] == config.proxy.ca_dir
    assert set(mounts["agent"]) == {"flakeproxy-ca"}  # the certificate, never the key
    written = _ca_outputs(init["command"])
    shared, in_init = mounts["agent"]["flakeproxy-ca"], mounts["flakeproxy-ca"]["flakeproxy-ca"]
    assert written[env["NODE_EXTRA_CA_CERTS"].replace(shared, in_init, 1)] == "pem"
    assert written[env["SSL_CERT_FILE"].replace(shared, in_init, 1)] == "bundle"
    assert {p["containerPort"] for p in sidecar["ports"]} >= {8080, 8790}
    for c in (init, sidecar):
        assert c["securityContext"]["runAsNonRoot"] is True


@pytest.mark.timeout(180)
def test_the_ca_job_command_writes_what_the_agent_trusts(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The compose CA job's exact command, from the installed wheel: the CA in the sidecar's folder (key 0600),
    its certificate and a bundle on the agent's volume; run again (a restart), the same CA."""
    installed = installed_bin(tmp_path_factory)
    services = yaml.safe_load((DOCKER / "compose.forward.yaml").read_text())["services"]
    ca = services["ca"]
    paths = {"/home/flakeproxy/.mitmproxy": tmp_path / "mitmproxy-ca", "/ca": tmp_path / "shared"}
    config = tmp_path / "flakeproxy.yaml"
    config.write_text(
        (DOCKER / "flakeproxy.forward.yaml")
        .read_text()
        .replace("/home/flakeproxy/.mitmproxy", str(paths["/home/flakeproxy/.mitmproxy"]))
    )
    command = [ca["entrypoint"][0], ca["entrypoint"][1], ca["entrypoint"][2].replace("/ca/", f"{paths['/ca']}/")]
    env = user_env(PATH=f"{installed}:{os.environ['PATH']}", FLAKEPROXY_TOKEN="t", FLAKEPROXY_CONFIG=str(config))
    certs = []
    for _ in range(2):
        out = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        key = paths["/home/flakeproxy/.mitmproxy"] / "mitmproxy-ca.pem"
        cert = (paths["/home/flakeproxy/.mitmproxy"] / "mitmproxy-ca-cert.pem").read_text()
        assert stat.S_IMODE(key.stat().st_mode) == 0o600
        assert (paths["/ca"] / "flakeproxy-ca.pem").read_text() == cert
        assert (paths["/ca"] / "ca-bundle.pem").read_text().endswith(cert)
        assert sorted(p.name for p in paths["/ca"].iterdir()) == ["ca-bundle.pem", "flakeproxy-ca.pem"]
        certs.append(cert)
    assert certs[0] == certs[1]  # the second run reused the CA
