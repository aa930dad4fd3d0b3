"""WebSocket fidelity for openai-node's realtime client (OpenAIRealtimeWS, which always connects with wss://): the
same turn against the fake Realtime server failing by itself over TLS (tests.fidelity.ws_failures), and through
flakeproxy's forward listener with HTTPS (an HTTPS proxy agent; the proxy's CA trusted by NODE_EXTRA_CA_CERTS)
with the matching fault over the healthy server under api.openai.com. What the client saw must be equal."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.addons.test_websocket_forward import config
from tests.fidelity import ws_failures as real
from tests.fidelity.test_ws_fidelity import ROWS
from tests.support.forward import trust_file
from tests.support.npm import npm_packages
from tests.support.proxy import Proxy, running_proxy
from tests.support.realtime import RealtimeServer, RunningRealtime
from tests.support.tls import make_ca

MODES = ("ws_close", "ws_error_event", "ws_drop", "ws_corrupt", "connection_cap")
NODE_ROWS = [row for row in ROWS if row[0]["mode"] in MODES]
SCRIPT = Path(__file__).with_name("node_realtime.mjs")


@dataclass
class World:
    server: RealtimeServer
    proxy: Proxy
    forward: str
    env: dict[str, str]
    script: Path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    script = npm_packages("node-realtime", "openai@6", "ws@8", "https-proxy-agent@7") / SCRIPT.name
    shutil.copyfile(SCRIPT, script)  # beside its node_modules
    folder = tmp_path_factory.mktemp("node-ws")
    ca = make_ca(folder / "upstream-ca")
    with RunningRealtime(ca.leaf(["api.openai.com", "localhost"])) as server:
        text, forward = config(ca, server, folder / "ca")
        with running_proxy(text) as proxy:
            trust = trust_file(folder, ca.cert_file, folder / "ca" / "mitmproxy-ca-cert.pem")
            keep = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("NODE_")}
            yield World(server, proxy, forward, {**keep, "NODE_EXTRA_CA_CERTS": str(trust)}, script)


def node_turn(world: World, base: str, proxy: str = "-", cell: str = "-", idle: bool = False) -> dict[str, Any]:
    args = ["node", str(world.script), base, proxy, cell, *(["idle"] if idle else [])]
    out = subprocess.run(args, env=world.env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    seen: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    assert not seen.get("timeout"), seen
    return seen


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("fault", "failure", "kw"), NODE_ROWS, ids=[str(f["mode"]) for f, _, _ in NODE_ROWS])
def test_openai_nodes_realtime_client_sees_the_fault_as_the_real_failure(
    world: World, fault: dict[str, Any], failure: type[real.Failure], kw: dict[str, Any]
) -> None:
    port = world.server.url.rsplit(":", 1)[1]
    world.server.failure = failure
    try:
        direct = node_turn(world, f"https://localhost:{port}", **kw)
    finally:
        world.server.failure = None
    faulted, (entry,) = world.proxy.control.in_episode(
        lambda episode: node_turn(world, "https://api.openai.com", f"http://{world.forward}", episode, **kw),
        "ws",
        llm_faults=[fault],
    )
    assert faulted == direct and entry["fault"]["applied"], (direct, faulted)
    assert direct["types"] and direct["close"] is not None
