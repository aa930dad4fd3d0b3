"""No scenario: the proxy passes everything through, streams SSE unbuffered, and journals it."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from tests.support.loops import free_port
from tests.support.proxy import config_for, running_proxy
from tests.support.upstream import RunningUpstream


def get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read()


def test_passes_through_and_journals() -> None:
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, {"quotes": {"listener": "tools"}})) as p:
        status, body = get(p.listeners["tools"] + "/v1/quotes?symbol=MSFT")
        assert status == 200
        assert json.loads(body)["symbol"] == "MSFT"
        assert up.count("/v1/quotes") == 1
        [entry] = p.control.journal()
        assert entry["status"] == 200 and entry["fault"] is None and entry["upstream_called"]
        assert entry["url"] == f"{up.url}/v1/quotes?symbol=MSFT"
        assert entry["targets"] == ["quotes"] and entry["listener"] == "tools"
        assert json.loads(entry["response_body"])["symbol"] == "MSFT"
        assert entry["latency_ms"] > 0


def test_sse_first_event_arrives_long_before_the_last_is_sent() -> None:
    """Upstream sends 5 events 200 ms apart; the client must see the first one at once."""
    with RunningUpstream() as up, running_proxy(config_for({"llm": up.url}, {})) as p:
        url = urlsplit(p.listeners["llm"])
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        start = time.monotonic()
        conn.request("GET", "/sse?n=5&gap=0.2")
        response = conn.getresponse()
        first = response.readline()
        first_at = time.monotonic() - start
        rest = response.read()
        last_at = time.monotonic() - start
        conn.close()
        assert first.startswith(b"data: ") and json.loads(first[6:])["n"] == 0
        assert b'"n": 4' in rest
        # the last event is sent 800 ms after the first; streaming means the first came well before that
        assert first_at < 0.4, f"first event after {first_at:.3f}s: the stream was buffered"
        assert last_at >= 0.75
        [entry] = p.control.journal()
        assert entry["streamed"] and entry["response_bytes"] == len(first) + len(rest)


def test_unreachable_upstream_gives_502_and_a_journal_entry() -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with running_proxy(config_for({"tools": dead}, {})) as p:
        url = urlsplit(p.listeners["tools"])
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        conn.request("GET", "/v1/quotes")
        response = conn.getresponse()
        body = response.read().decode()
        assert response.status == 502
        assert "Connect call failed" in body or "Connection refused" in body
        [entry] = p.control.journal()
        assert entry["status"] == 502 and entry["fault"] is None and entry["complete"]  # what the client got
        assert "Connect call failed" in entry["error"] or "refused" in entry["error"]


def test_forward_listener_takes_absolute_urls_and_targets_by_listener() -> None:
    """An agent that cannot be re-pointed uses HTTP_PROXY; targets name the 'forward' listener."""
    import yaml

    with RunningUpstream() as up:
        data = yaml.safe_load(config_for({"tools": up.url}, {}))
        data["proxy"]["forward"] = f"127.0.0.1:{free_port()}"
        data["targets"] = {"via_forward": {"listener": "forward", "path": "/v1/quotes*"}}
        with running_proxy(yaml.safe_dump(data)) as p:
            p.control.scenario("s", tool_faults=[{"tool": "via_forward", "mode": "error", "error_code": 502}])
            host, port = data["proxy"]["forward"].split(":")
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": f"http://{host}:{port}"}))
            try:
                opener.open(f"{up.url}/v1/quotes", timeout=10)
                raise AssertionError("the fault did not fire")
            except urllib.error.HTTPError as e:
                assert e.code == 502
            with opener.open(f"{up.url}/echo", data=b"x", timeout=10) as response:
                assert response.status == 200
            assert [(e["listener"], e["status"]) for e in p.control.journal()] == [("forward", 502), ("forward", 200)]
