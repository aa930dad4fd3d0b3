"""telemetry_noticed and time_to_detect on an episode's journal and the agent's spans: what records a fault (an
error on the call's span or an ancestor, a retry of it), what does not, and what cannot be judged."""

from __future__ import annotations

from typing import Any

import pytest

from flakeproxy.invariants import TelemetryNoticed, TimeToDetect
from flakeproxy.judging.verdict import Observation
from flakeproxy.telemetry.spans import AgentSpan, SpanEvent

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
ROOT, LLM, CALL, RETRY = "a" * 16, "b" * 16, "c" * 16, "d" * 16
T0 = 1_700_000_000.0
URL = "http://tools/v1/quotes?symbol=AAPL"


def fault(section: str = "tool_faults", applied: bool = True) -> dict[str, Any]:
    return {
        "scenario": "down",
        "section": section,
        "index": 0,
        "kind": "error",
        "applied": applied,
        "effect": "answered 503" if applied else None,
        "not_applied_reason": None if applied else "the request ended first",
        "settled": True,
    }


def call(seq: int = 5, parent: str | None = CALL, target: str = "quotes", **extra: Any) -> dict[str, Any]:
    headers = {"traceparent": f"00-{TRACE}-{parent}-01"} if parent else {}
    entry = {"seq": seq, "targets": [target], "url": URL, "method": "GET", "status": 503}
    return {**entry, "request_headers": headers, "started_at": T0 + 1.0, "latency_ms": 20.0, "fault": fault(), **extra}


def again(**extra: Any) -> dict[str, Any]:
    """The journal's entry of the same request sent again by the RETRY span, answered (`extra`: what differs). A
    later span of the same name and URL that sent another request is the next step of the agent, not a retry: a
    trial's tool-calling agent got PASS from its next LLM call after a 429 its telemetry never recorded."""
    return call(6, parent=RETRY, **{"status": 200, "fault": None, "started_at": T0 + 1.3, **extra})


def span(span_id: str, parent: str | None, start: float, end: float, **extra: Any) -> AgentSpan:
    fields = {"name": "GET", **extra}
    return AgentSpan(trace_id=TRACE, span_id=span_id, parent_span_id=parent, start=T0 + start, end=T0 + end, **fields)


def spans(*changed: AgentSpan) -> list[AgentSpan]:
    """The agent's root, its tool client span for the call (no error recorded), and `changed` in their place."""
    base = {ROOT: span(ROOT, None, 0, 3, name="POST /ask", kind="server"), CALL: span(CALL, ROOT, 1, 1.02)}
    base[CALL] = base[CALL].model_copy(update={"attributes": {"url.full": URL}})
    return list({**base, **{s.span_id: s for s in changed}}.values())


ERROR_ON_CALL = span(CALL, ROOT, 1, 1.021, status="error", attributes={"error.type": "503", "url.full": URL})
EXCEPTION_ON_ROOT = span(ROOT, None, 0, 3, name="POST /ask", events=[SpanEvent(name="exception", time=T0 + 1.5)])
RETRIED = span(RETRY, ROOT, 1.3, 1.32, attributes={"url.full": URL})
OTHER_CALL = span(RETRY, ROOT, 1.3, 1.32, attributes={"url.full": "http://tools/v1/news"})


@pytest.mark.parametrize(
    ("journal", "agent", "outcome", "reason"),
    [
        ([call(fault=None, status=200)], spans(), "not_applicable", "no tool or LLM fault applied in this episode"),
        ([call(fault=fault(applied=False))], spans(), "not_applicable", "no tool or LLM fault applied"),
        ([call(fault=fault("context_attacks"))], spans(), "not_applicable", "no tool or LLM fault applied"),
        ([call()], [], "error", "no span from the agent arrived at proxy.otlp for this episode within 6 s of its"),
        ([call(parent=None)], spans(), "error", "cannot tell whether the agent's telemetry recorded tool_faults[0] "
         "error on call #5 to quotes: the faulted call carried no traceparent"),
        ([call()], spans(ERROR_ON_CALL), "pass", "the agent's telemetry recorded all 1 applied fault(s), the last "
         "after 1 ms"),
        ([call()], spans(EXCEPTION_ON_ROOT), "pass", "recorded all 1 applied fault(s), the last after 480 ms"),
        ([call(), again()], spans(RETRIED), "pass", "recorded all 1 applied fault(s), the last after 280 ms"),
        ([call(), again(request_body='{"step": 2}')], spans(RETRIED), "fail", f"({CALL}) and its ancestors record "
         "no error, and no retry of it followed"),
        ([call()], spans(RETRIED), "fail", f"({CALL}) and its ancestors record no error, and no retry of it followed"),
        ([call()], spans(OTHER_CALL), "fail", "did not record tool_faults[0] error on call #5 to quotes: 'GET' "
         f"({CALL}) and its ancestors record no error, and no retry of it followed"),
        ([call(parent=LLM)], spans(), "fail", f"the agent's span {LLM} that made the call was not received"),
        ([call(), call(6, target="news")], spans(ERROR_ON_CALL), "pass", "recorded all 2 applied fault(s)"),
    ],
    ids=["no-fault", "not-applied", "context-attack", "no-spans", "no-traceparent", "error-on-call",
         "exception-on-ancestor", "retry", "next-step-is-no-retry", "retry-the-proxy-did-not-see",
         "next-call-is-no-retry", "call-span-missing", "two-faults"],
)  # fmt: skip
def test_telemetry_noticed(journal: list[dict[str, Any]], agent: list[AgentSpan], outcome: str, reason: str) -> None:
    check = TelemetryNoticed(id="noticed", type="telemetry_noticed")
    verdict = check.evaluate(Observation(prompt="p", text="a", latency_ms=1, journal=journal, agent_spans=agent))
    assert (verdict.outcome, reason in verdict.reason) == (outcome, True), verdict.reason


def test_a_target_narrows_the_faults_judged() -> None:
    journal = [call(), call(6, parent=LLM, target="news")]  # the news call's span never arrived
    check = TelemetryNoticed(id="noticed", type="telemetry_noticed", target="quotes")
    obs = Observation(prompt="p", text="a", latency_ms=1, journal=journal, agent_spans=spans(ERROR_ON_CALL))
    assert check.evaluate(obs).outcome == "pass"
    assert TelemetryNoticed(id="all", type="telemetry_noticed").evaluate(obs).outcome == "fail"


@pytest.mark.parametrize(
    ("agent", "max_ms", "outcome", "reason", "ms"),
    [
        (spans(EXCEPTION_ON_ROOT), 500, "pass", "time to detect 480 ms (max 500)", 480.0),
        (spans(EXCEPTION_ON_ROOT), 100, "fail", "time to detect 480 ms, more than 100", 480.0),
        (spans(ERROR_ON_CALL, EXCEPTION_ON_ROOT), 100, "pass", "time to detect 1 ms (max 100)", 1.0),
        (spans(), 100, "fail", "never detected: the agent's telemetry did not record tool_faults[0]", None),
        ([], 100, "error", "no span from the agent arrived", None),
    ],
    ids=["within", "too-slow", "first-signal-counts", "never", "no-spans"],
)
def test_time_to_detect(agent: list[AgentSpan], max_ms: float, outcome: str, reason: str, ms: float | None) -> None:
    check = TimeToDetect(id="ttd", type="time_to_detect", max_ms=max_ms)
    verdict = check.evaluate(Observation(prompt="p", text=None, latency_ms=1, journal=[call()], agent_spans=agent))
    assert (verdict.outcome, verdict.reason.startswith(reason)) == (outcome, True), verdict.reason
    assert verdict.evidence.get("time_to_detect_ms") == ms
    assert verdict.evidence["faults"][0]["call"] == 5


def test_the_agent_clock_running_behind_counts_as_at_once() -> None:
    early = span(CALL, ROOT, 0.5, 0.9, status="error")  # recorded "before" the proxy handed over the 503
    check = TimeToDetect(id="ttd", type="time_to_detect", max_ms=10)
    verdict = check.evaluate(
        Observation(prompt="p", text=None, latency_ms=1, journal=[call()], agent_spans=spans(early))
    )
    assert (verdict.outcome, verdict.evidence["time_to_detect_ms"]) == ("pass", 0.0)
