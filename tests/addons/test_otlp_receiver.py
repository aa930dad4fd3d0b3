"""proxy.otlp: the OTLP/HTTP receiver on the real proxy, fed by the official OpenTelemetry SDK and exporter
(protobuf, gzip) and by OTLP/JSON as the specification writes it; GET /spans hands the spans out per trace,
redacted, and waits (bounded) for a trace's root span."""

from __future__ import annotations

import gzip
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.loops import free_port
from tests.support.proxy import Proxy, config_for, running_proxy
from tests.support.upstream import RunningUpstream

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is in the dev tools")

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

RUNNER_SPAN = "00f067aa0ba902b7"
KEY = "sk-proj-abcdefghijklmnopqrstuvwx"


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[Proxy, str]]:
    otlp = f"127.0.0.1:{free_port()}"
    text = config_for({"tools": "http://127.0.0.1:9"}, {})
    text = text.replace("proxy:\n", f"proxy:\n  otlp: {otlp}\n", 1)
    with running_proxy(text) as p:
        yield p, f"http://{otlp}"


def provider(url: str) -> tuple[TracerProvider, Any]:
    """What an agent sets up: a TracerProvider exporting each span as it ends, gzip-compressed protobuf."""
    tracer_provider = TracerProvider(resource=Resource.create({"service.name": "agent-under-test"}))
    exporter = OTLPSpanExporter(endpoint=f"{url}/v1/traces", compression=Compression.Gzip)
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    return tracer_provider, tracer_provider.get_tracer("test-agent")


def spans_of(proxy: Proxy, trace_id: str, query: str = "") -> dict[str, Any]:
    return dict(proxy.control.ok("GET", f"/spans?trace_id={trace_id}{query}"))


def test_sdk_spans_arrive_whole_and_redacted(world: tuple[Proxy, str]) -> None:
    proxy, url = world
    tracer_provider, tracer = provider(url)
    try:
        with (
            tracer.start_as_current_span("agent", kind=SpanKind.SERVER) as root,
            tracer.start_as_current_span("GET", kind=SpanKind.CLIENT) as call,
        ):
            call.set_attribute("http.request.header.authorization", f"Bearer {KEY}")
            call.set_attribute("url.full", "http://tools/v1/quotes?symbol=AAPL")
            call.set_attribute("error.type", "503")
            call.set_status(Status(StatusCode.ERROR, f"HTTP 503 with {KEY}"))
            call.record_exception(RuntimeError("quote API down"))
        trace_id = format(root.get_span_context().trace_id, "032x")
    finally:
        tracer_provider.shutdown()
    got = spans_of(proxy, trace_id)
    by_name = {s["name"]: s for s in got["spans"]}
    assert set(by_name) == {"agent", "GET"} and got["complete"] is True
    child = by_name["GET"]
    assert child["parent_span_id"] == by_name["agent"]["span_id"] and child["kind"] == "client"
    assert (child["status"], child["attributes"]["error.type"]) == ("error", "503")
    assert child["attributes"]["http.request.header.authorization"] == "[redacted]"
    assert KEY not in json.dumps(got) and child["service"] == "agent-under-test"
    assert [e["name"] for e in child["events"]] == ["exception"]
    assert child["events"][0]["attributes"]["exception.message"] == "quote API down"
    assert by_name["agent"]["start"] <= child["start"] <= child["end"] <= by_name["agent"]["end"]


def otlp_json(trace_id: str, span_id: str, parent: str, name: str) -> bytes:
    """An ExportTraceServiceRequest in OTLP/JSON, as the specification's example writes one."""
    span = {
        "traceId": trace_id,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "kind": 3,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000000250000000",
        "attributes": [
            {"key": "http.response.status_code", "value": {"intValue": "429"}},
            {"key": "retry", "value": {"boolValue": True}},
            {"key": "tags", "value": {"arrayValue": {"values": [{"stringValue": "a"}, {"doubleValue": 1.5}]}}},
        ],
        "status": {"code": 2, "message": "rate limited"},
    }
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "json-agent"}}]}
    return json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]}).encode()


def post(url: str, body: bytes, content_type: str, encoding: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, method="POST", headers={"content-type": content_type})
    if encoding:
        request.add_header("content-encoding", encoding)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_otlp_json_is_read_as_the_specification_encodes_it(world: tuple[Proxy, str]) -> None:
    proxy, url = world
    trace_id = "5b8efff798038103d269b633813fc60c"
    status, body = post(
        f"{url}/v1/traces", otlp_json(trace_id, "eee19b7ec3c1b174", RUNNER_SPAN, "POST"), "application/json"
    )
    assert (status, json.loads(body)) == (200, {})
    (span,) = spans_of(proxy, trace_id)["spans"]
    assert (span["name"], span["kind"], span["status"], span["status_message"]) == (
        "POST",
        "client",
        "error",
        "rate limited",
    )
    assert span["attributes"] == {"http.response.status_code": 429, "retry": True, "tags": ["a", 1.5]}
    assert (span["start"], round(span["end"] - span["start"], 6), span["service"]) == (1700000000.0, 0.25, "json-agent")


def test_get_spans_waits_for_the_root_and_no_longer(world: tuple[Proxy, str]) -> None:
    """The runner asks right after the answer; the agent's root span (a child of the runner's span) comes later."""
    proxy, url = world
    trace_id = "0af7651916cd43dd8448eb211c80319c"
    before = spans_of(proxy, "1" * 32)["received"]
    post(f"{url}/v1/traces", otlp_json(trace_id, "b7ad6b7169203331", "eee19b7ec3c1b174", "child"), "application/json")
    answers: list[tuple[float, dict[str, Any]]] = []
    started = time.monotonic()
    asking = threading.Thread(
        target=lambda: answers.append(
            (time.monotonic() - started, spans_of(proxy, trace_id, f"&parent={RUNNER_SPAN}&wait_ms=8000"))
        )
    )
    asking.start()
    post(f"{url}/v1/traces", otlp_json(trace_id, "eee19b7ec3c1b174", RUNNER_SPAN, "root"), "application/json")
    asking.join(15)
    took, got = answers[0]
    assert got["complete"] is True and {s["name"] for s in got["spans"]} == {"child", "root"}
    assert took < 5, f"GET /spans answered after {took:.1f} s, not when the root arrived"
    waited_from = time.monotonic()
    missing = spans_of(proxy, "1" * 32, f"&parent={RUNNER_SPAN}&wait_ms=300")
    assert missing == {"spans": [], "complete": False, "dropped": 0, "received": before + 2}, "the other trace's 2"
    assert time.monotonic() - waited_from >= 0.3


@pytest.mark.parametrize(
    ("body", "content_type", "encoding", "status", "says"),
    [
        (b"{not json", "application/json", None, 400, "not JSON"),
        (b'["a"]', "application/json", None, 400, "expected an object with resourceSpans"),
        (b"\xff\xff\xff", "application/x-protobuf", None, 400, "not a protobuf ExportTraceServiceRequest"),
        (gzip.compress(b"\0" * (17 * 1024 * 1024)), "application/json", "gzip", 413, "larger than"),
        (b"{}", "text/plain", None, 415, "send application/x-protobuf or application/json"),
        (b"{}", "application/json", "gzip", 400, "content-encoding gzip"),  # a trial's: 500 before
        (b"{}", "application/json", "br", 400, "content-encoding br"),
    ],
    ids=["bad-json", "not-an-export", "bad-protobuf", "gzip-bomb", "content-type", "not-gzip", "br"],
)
def test_bad_exports_are_refused_with_the_reason(
    world: tuple[Proxy, str], body: bytes, content_type: str, encoding: str | None, status: int, says: str
) -> None:
    _, url = world
    got, text = post(f"{url}/v1/traces", body, content_type, encoding)
    assert got == status and says.encode() in text


def test_logs_and_metrics_sent_to_the_same_endpoint_are_dropped_quietly(world: tuple[Proxy, str]) -> None:
    _, url = world
    assert post(f"{url}/v1/logs", b"{}", "application/json") == (200, b"{}")
    assert post(f"{url}/v1/metrics", b"", "application/x-protobuf") == (200, b"")


def test_a_proxy_without_a_receiver_says_how_to_get_one() -> None:
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, {})) as proxy:
        status, data = proxy.control.call("GET", f"/spans?trace_id={'1' * 32}")
    assert (status, data["error"]) == (404, "this proxy has no OTLP receiver for the agent's spans; set proxy.otlp")


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("", "give 1 to 100 trace_id values"),
        ("?trace_id=XYZ", "give 1 to 100 trace_id values"),
        (f"?trace_id={'1' * 32}&parent=nope", "parent must be 16 lower-case hex digits"),
        (f"?trace_id={'1' * 32}&wait_ms=-1", "wait_ms must be an integer from 0 to 60000"),
    ],
)
def test_bad_span_queries_are_400(world: tuple[Proxy, str], query: str, says: str) -> None:
    proxy, _ = world
    status, data = proxy.control.call("GET", f"/spans{query}")
    assert status == 400 and data["error"].startswith(says)


def test_reset_forgets_the_agents_spans(world: tuple[Proxy, str]) -> None:
    proxy, url = world
    trace_id = "7b8efff798038103d269b633813fc60d"
    body = otlp_json(trace_id, "aee19b7ec3c1b175", RUNNER_SPAN, "POST")
    assert post(f"{url}/v1/traces", body, "application/json")[0] == 200
    assert len(spans_of(proxy, trace_id)["spans"]) == 1
    assert spans_of(proxy, "1" * 32)["received"] >= 1, "what reached the receiver, whatever its trace"
    proxy.control.ok("POST", "/reset")
    assert spans_of(proxy, trace_id, "&wait_ms=0") == {"spans": [], "complete": False, "dropped": 0, "received": 0}
