"""The span store: bounded per trace and in bytes (the oldest traces go first, counted as dropped), a span sent
twice kept once, and complete() meaning every trace has its root."""

from __future__ import annotations

from flakeproxy.telemetry.spans import AgentSpan
from flakeproxy.telemetry.store import SpanStore, weight


def span(trace: str, span_id: int, parent: str | None = None, text: str = "") -> AgentSpan:
    return AgentSpan(
        trace_id=trace * 32, span_id=f"{span_id:016x}", parent_span_id=parent, name="s", start=1.0, end=2.0,
        attributes={"note": text},
    )  # fmt: skip


def test_a_trace_holds_at_most_per_trace_spans_and_a_resent_span_once() -> None:
    store = SpanStore(per_trace=3)
    assert store.add([span("a", i) for i in range(1, 6)]) == 3
    assert store.add([span("a", 1, text="again")]) == 1  # replaces its first copy, within the limit
    kept = store.spans(["a" * 32])
    assert [s.span_id for s in kept] == [f"{i:016x}" for i in (2, 3, 1)] and kept[-1].attributes["note"] == "again"
    assert store.dropped == 2


def test_past_max_bytes_the_oldest_traces_go_first() -> None:
    one = weight(span("a", 1, text="x" * 1000))
    store = SpanStore(max_bytes=int(one * 2.5))
    for trace in "abc":
        store.add([span(trace, 1, text="x" * 1000)])
    assert [t for t in "abc" if store.spans([t * 32])] == ["b", "c"]
    assert store.dropped == 1 and store.bytes == 2 * one
    store.clear()
    assert (store.bytes, store.dropped, store.spans(["c" * 32])) == (0, 0, [])


def test_complete_means_every_trace_has_its_root() -> None:
    store = SpanStore()
    runner = "f" * 16
    store.add([span("a", 2, parent="1" * 16), span("b", 3)])
    assert not store.complete(["a" * 32, "b" * 32], runner)  # a's root (the child of the runner's span) is missing
    store.add([span("a", 1, parent=runner)])
    assert store.complete(["a" * 32, "b" * 32], runner)
    assert not store.complete(["c" * 32], runner)
