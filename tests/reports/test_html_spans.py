"""The HTML report shows an episode's own spans (proxy.otlp) as a tree beside its journal, marking the span that
made each faulted call; span names and errors from the agent are text, never markup."""

from __future__ import annotations

import re

from flakeproxy.reports.html_detail import episode_detail
from flakeproxy.reports.html_spans import span_tree
from flakeproxy.results import Episode
from flakeproxy.telemetry.spans import AgentSpan

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
FAULT = {"scenario": "down", "section": "tool_faults", "index": 0, "kind": "error", "applied": True}
FAULT |= {"effect": "answered 503", "not_applied_reason": None, "settled": True}


def span(span_id: str, parent: str | None, name: str, start: float, end: float, **extra: object) -> AgentSpan:
    return AgentSpan(trace_id=TRACE, span_id=span_id, parent_span_id=parent, name=name, start=start, end=end, **extra)  # type: ignore[arg-type]


def episode(spans: list[AgentSpan]) -> Episode:
    journal = [
        {"seq": 4, "url": "http://llm/v1/chat", "method": "POST", "started_at": 10.1, "status": 200,
         "request_headers": {"traceparent": f"00-{TRACE}-{'b' * 16}-01"}},
        {"seq": 5, "url": "http://tools/v1/quotes", "method": "GET", "started_at": 10.3, "status": 503,
         "request_headers": {"traceparent": f"00-{TRACE}-{'c' * 16}-01"}, "fault": FAULT},
    ]  # fmt: skip
    return Episode(
        id="e2", scenario="down", prompt="p", prompt_index=0, label="down | p0 | r0", journal=journal,
        traceparent=f"00-{TRACE}-{'a' * 16}-01", agent_spans=spans,
    )  # fmt: skip


SPANS = [
    span("r" * 16, "a" * 16, "POST /ask", 10.0, 11.0, service="quote-agent"),
    span("b" * 16, "r" * 16, "chat fake-model", 10.05, 10.2),
    span("c" * 16, "r" * 16, "<script>alert(1)</script>", 10.3, 10.31, status="error", status_message="HTTP 503"),
    span("d" * 16, "c" * 16, "child of the call", 10.301, 10.302),
]


def test_the_tree_nests_the_spans_and_marks_the_faulted_call() -> None:
    html = span_tree(episode(SPANS))
    assert "<h4>The agent's spans (quote-agent)</h4>" in html
    # root, then its two children in start order, the call's own child inside it
    names = re.findall(r"<code>(.*?)</code>", html)
    assert names == ["POST /ask", "chat fake-model", "&lt;script&gt;alert(1)&lt;/script&gt;", "child of the call"]
    assert html.count('<ul class="spans">') == 3 and "<script>" not in html
    assert '<span class="badge f-not">calls #4</span>' in html
    assert '<span class="badge f-applied">calls #5!</span>' in html
    assert 'title="status ERROR: HTTP 503">error</span>' in html
    assert "+300 ms · 10 ms" in html


def test_beside_the_journal_only_when_there_are_spans() -> None:
    with_spans = episode_detail(episode(SPANS), "ep-0")
    assert '<div class="side"><div class="scroll"><table class="timeline">' in with_spans
    assert '<div class="spantree">' in with_spans and f"<code>{TRACE}</code>" in with_spans
    without = episode_detail(episode([]), "ep-0")
    assert '<div class="side">' not in without and '<div class="spantree">' not in without
    assert span_tree(episode([])) == ""
