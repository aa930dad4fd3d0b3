"""A secret that one request of an episode carried is scrubbed from every entry of that episode, from the texts
(the agent's answer and error) the runner sends with the cell's end, and from the agent's spans the runner fetches
for the ended episode: only the proxy saw the value."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from flakeproxy.addons.cell_secrets import EndedSecrets
from tests.support.http import fetch
from tests.support.loops import free_port
from tests.support.proxy import Proxy, config_for, running_proxy
from tests.support.upstream import RunningUpstream

SECRET = "sk-live-CELLWIDE-83hd72kd"
TARGETS = {"quotes": {"listener": "tools", "path": "/v1/quotes*"}, "echo": {"listener": "tools", "path": "/echo"}}


def test_a_secret_of_one_request_is_scrubbed_from_the_others_and_from_the_answer() -> None:
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, TARGETS)) as proxy:
        base = proxy.listeners["tools"]
        cell = proxy.control.begin("secrets")
        headers = {"x-flakeproxy-cell": cell}
        fetch(base, "/v1/quotes?symbol=AAPL", "GET", None, {**headers, "Authorization": f"Bearer {SECRET}"})
        echoed = json.dumps({"note": f"the key was {SECRET}"}).encode()  # no secret-named field: not found alone
        fetch(base, "/echo", "POST", echoed, {**headers, "content-type": "application/json"})
        ended = proxy.control.ok("POST", f"/episodes/{cell}/end", {"texts": [f"My key is {SECRET}.", None]})
        assert any(SECRET in r.body.decode() for r in up.requests), "the secret did reach the upstream"
    said = json.dumps(ended)
    assert SECRET not in said, said
    assert ended["texts"] == ["My key is [redacted].", None]
    assert [e["url"].rsplit("/", 1)[-1] for e in ended["journal"]] == ["quotes?symbol=AAPL", "echo"]
    assert "[redacted]" in ended["journal"][1]["request_body"] and "[redacted]" in ended["journal"][1]["response_body"]


def test_bad_texts_are_a_clear_4xx() -> None:
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, TARGETS)) as proxy:
        cell = proxy.control.begin("bad")
        status, data = proxy.control.call("POST", f"/episodes/{cell}/end", {"texts": "not a list"})
        assert status == 400 and "texts must be a list" in data["error"], data
        status, data = proxy.control.call("POST", f"/episodes/{cell}/end", {"text": []})
        assert status == 400 and data["valid"] == ["texts", "next"], data


ECHOED = "PLANTED-span-echo-5521"  # not shaped like a credential: the span receiver's own redaction misses it
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def _span_export(note: str) -> bytes:
    """An OTLP/JSON export of one root span whose attribute repeats what the agent was told."""
    span = {
        "traceId": TRACE,
        "spanId": "00f067aa0ba902b7",
        "name": "agent",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000000250000000",
        "attributes": [{"key": "agent.note", "value": {"stringValue": note}}],
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()


def _spans(proxy: Proxy, query: str) -> tuple[int, Any]:
    return proxy.control.call("GET", f"/spans?trace_id={TRACE}{query}")


def test_the_spans_of_an_ended_episode_come_scrubbed_of_its_secrets() -> None:
    """The agent exports its spans after it answered, so after its episode ended: the proxy, which alone saw the
    key the agent sent, still scrubs it from them when the runner names the episode (and only then)."""
    pytest.importorskip("opentelemetry.proto", reason="the otel extra is in the dev tools")
    otlp = f"127.0.0.1:{free_port()}"
    with RunningUpstream() as up:
        text = config_for({"tools": up.url}, TARGETS).replace("proxy:\n", f"proxy:\n  otlp: {otlp}\n", 1)
        with running_proxy(text) as proxy:
            cell = proxy.control.begin("spans")
            headers = {"x-flakeproxy-cell": cell, "authorization": f"Bearer {ECHOED}"}
            fetch(proxy.listeners["tools"], "/v1/quotes?symbol=AAPL", "GET", None, headers)
            proxy.control.end(cell)
            exported = urllib.request.Request(
                f"http://{otlp}/v1/traces", _span_export(f"called with {ECHOED}"), {"content-type": "application/json"}
            )
            urllib.request.urlopen(exported, timeout=10).close()
            scrubbed, unscrubbed, unknown = (_spans(proxy, q) for q in (f"&episode={cell}", "", "&episode=e999"))
            proxy.control.ok("POST", "/reset")
            after_reset = _spans(proxy, f"&episode={cell}")
    assert scrubbed[0] == 200 and [s["attributes"] for s in scrubbed[1]["spans"]] == [
        {"agent.note": "called with [redacted]"}
    ]
    assert ECHOED in json.dumps(unscrubbed[1])  # no episode named: nothing to scrub with (the runner names it)
    assert unknown[0] == 404 and "no ended episode 'e999'" in unknown[1]["error"], unknown
    assert after_reset[0] == 404, after_reset  # a reset forgets the ended episodes' secrets with their journal


def test_the_proxy_keeps_the_secrets_of_the_last_episodes_that_ended_only() -> None:
    ended = EndedSecrets(limit=2)
    for n in range(3):
        ended.keep(f"e{n}", (frozenset({f"secret-{n}"}), frozenset()))
    assert ended.get("e0") is None and ended.get("e2") == (frozenset({"secret-2"}), frozenset())
    ended.keep("e1", (frozenset(), frozenset()))  # ended again (a reused id): now the newest
    ended.keep("e3", (frozenset(), frozenset()))
    assert [e for e in ("e1", "e2", "e3") if ended.get(e) is not None] == ["e1", "e3"]
