"""A voice agent and a Responses-over-WebSocket agent that keep OpenAI's real URLs, through the forward listener
with HTTPS: the openai SDK's realtime client (websockets) goes by HTTPS_PROXY and trusts the proxy's CA by
SSL_CERT_FILE; the proxy decrypts, journals and breaks the socket, and relays it to a fake Realtime server
under api.openai.com (a test CA's certificate, on loopback through proxy.resolve)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")

from tests.addons.test_forward_sdks import agent_env
from tests.support.forward import trust_file
from tests.support.loops import free_port
from tests.support.proxy import running_proxy
from tests.support.realtime import ANSWER, RealtimeServer, RunningRealtime
from tests.support.tls import UpstreamCa, make_ca

AGENT = """
import json, openai, websockets
client = openai.OpenAI(max_retries=0)  # its default base URL: https://api.openai.com/v1, so wss:// for realtime
seen, raised = [], None
item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "AAPL?"}]}
try:
    with client.realtime.connect(model="gpt-realtime") as conn:
        conn.conversation.item.create(item=item)
        conn.response.create()
        for event in conn:
            seen.append(event.type if event.type != "response.output_text.delta" else event.delta)
            if event.type == "response.done":
                break
except websockets.exceptions.ConnectionClosedError as e:
    raised = [type(e).__name__, e.rcvd.code if e.rcvd else None]
print(json.dumps({"seen": seen, "raised": raised}))
"""


RESPONSES_AGENT = """
import json, openai, websockets
client = openai.OpenAI(max_retries=0)  # wss://api.openai.com/v1/responses
seen, raised = [], None
try:
    with client.responses.connect() as conn:
        conn.response.create(model="gpt-5", input="What is AAPL trading at?")
        for event in conn:
            seen.append(event.type if event.type != "response.output_text.delta" else event.delta)
            if event.type in ("response.completed", "error"):
                break
except websockets.exceptions.ConnectionClosedError as e:
    raised = [type(e).__name__, e.rcvd.code if e.rcvd else None]
print(json.dumps({"seen": seen, "raised": raised}))
"""


#: About one WebSocket handshake in 10-20 through the forward listener never gets its response: the upgrade request
#: never reaches mitmproxy's request hook (no journal entry; the upstream sees nothing). Plain mitmdump 12.2 does the
#: same with this client (6 of 40 in a loop; docs/proxy.md, known issues), so this test, which is about the journal
#: and the faults, tries such a connection once more; the lost attempt leaves no trace to change its assertions.
HANDSHAKE_LOST = "timed out while waiting for handshake response"


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[UpstreamCa, RealtimeServer]]:
    ca = make_ca(tmp_path_factory.mktemp("upstream-ca"))
    with RunningRealtime(ca.leaf(["api.openai.com"])) as server:
        yield ca, server


def config(ca: UpstreamCa, server: RealtimeServer, ca_dir: Path) -> tuple[str, str]:
    forward = f"127.0.0.1:{free_port()}"
    proxy = {
        "admin": f"127.0.0.1:{free_port()}",
        "forward": forward,
        "ca_dir": str(ca_dir),
        "upstream_ca": str(ca.cert_file),
        "resolve": {"api.openai.com": server.url.removeprefix("https://")},
    }
    targets = {
        "voice": {"listener": "forward", "host": "api.openai.com", "path": "/v1/realtime*", "ws": True},
        "responses_ws": {"listener": "forward", "host": "api.openai.com", "path": "/v1/responses", "ws": True},
    }
    return yaml.safe_dump({"version": "2.0", "proxy": proxy, "targets": targets}, sort_keys=False), forward


@pytest.mark.timeout(90)
def test_the_realtime_client_through_the_forward_listener_is_journaled_and_faulted(
    upstream: tuple[UpstreamCa, RealtimeServer], tmp_path: Path
) -> None:
    ca, server = upstream
    text, forward = config(ca, server, tmp_path / "ca")
    with running_proxy(text) as proxy:
        env = agent_env(forward, SSL_CERT_FILE=str(trust_file(tmp_path, tmp_path / "ca" / "mitmproxy-ca-cert.pem")))

        def agent(script: str = AGENT) -> dict[str, object]:
            for _ in range(2):  # a second try after a handshake that got no response (HANDSHAKE_LOST)
                out = subprocess.run(
                    [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=90
                )
                if HANDSHAKE_LOST not in out.stderr:
                    break
            assert out.returncode == 0, out.stderr[-3000:]
            return dict(json.loads(out.stdout.strip().splitlines()[-1]))

        calm = agent()
        proxy.control.scenario("ws", llm_faults=[{"mode": "ws_close", "at_event": "response.output_text.delta"}])
        broken = agent()
        proxy.control.scenario("ws", llm_faults=[{"mode": "ws_error_event", "tool": "responses_ws", "code": "x"}])
        responses = agent(RESPONSES_AGENT)
        journal = proxy.control.journal()
    assert calm["raised"] is None and "".join(str(s) for s in calm["seen"][4:-2]) == ANSWER
    assert broken["raised"] == ["ConnectionClosedError", 1011] and broken["seen"][-1] == "response.output_item.added"
    assert responses == {"seen": ["error"], "raised": None}  # the Responses error event, first
    urls = [(e["url"], e["targets"], e["status"]) for e in journal]
    assert urls == [("https://api.openai.com/v1/realtime?model=gpt-realtime", ["voice"], 101)] * 2 + [
        ("https://api.openai.com/v1/responses", ["responses_ws"], 101)
    ]
    assert journal[2]["fault"]["applied"] and journal[2]["fault"]["kind"] == "ws_error_event"
    assert journal[0]["fault"] is None and journal[1]["fault"]["applied"] and journal[1]["fault"]["kind"] == "ws_close"
    assert [c.headers["host"] for c in server.connections[-3:]] == ["api.openai.com"] * 3
