"""The agent's spans as the proxy keeps them: by trace id, bounded in bytes (the oldest traces go first), with
a wait for a trace's root span (the agent exports its spans after it answered, often seconds later)."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Iterable

from flakeproxy.telemetry.spans import AgentSpan

#: What the store keeps at most; the oldest traces are dropped first.
SPANS_MAX_BYTES = 16 * 1024 * 1024
#: Spans kept per trace at most (an agent stuck in a loop cannot fill the store with one trace).
SPANS_PER_TRACE = 5000
#: What one span costs beyond its attribute text.
SPAN_OVERHEAD_BYTES = 512


def weight(span: AgentSpan) -> int:
    texts = [*span.attributes.values(), *(a for e in span.events for a in e.attributes.values())]
    return SPAN_OVERHEAD_BYTES + len(span.name) + sum(len(str(t)) for t in texts)


class SpanStore:
    def __init__(self, max_bytes: int = SPANS_MAX_BYTES, per_trace: int = SPANS_PER_TRACE) -> None:
        self.max_bytes, self.per_trace = max_bytes, per_trace
        self._traces: OrderedDict[str, list[AgentSpan]] = OrderedDict()
        self._weights: dict[str, int] = {}
        self.bytes = 0
        self.dropped = 0  # spans dropped (trace full, or its trace pushed out by newer ones)
        self.received = 0  # spans that reached the receiver since it started or was cleared, kept or not
        self._event = asyncio.Event()

    def add(self, spans: Iterable[AgentSpan]) -> int:
        """Keep these spans (a span id seen before in its trace replaces the older copy); how many were kept."""
        kept = 0
        for span in spans:
            self.received += 1
            trace = self._traces.setdefault(span.trace_id, [])
            self._traces.move_to_end(span.trace_id)
            old = next((i for i, s in enumerate(trace) if s.span_id == span.span_id), None)
            if old is None and len(trace) >= self.per_trace:
                self.dropped += 1
                continue
            if old is not None:
                self._account(span.trace_id, -weight(trace.pop(old)))
            trace.append(span)
            self._account(span.trace_id, weight(span))
            kept += 1
        self._trim()
        self._event.set()
        self._event = asyncio.Event()
        return kept

    def _account(self, trace_id: str, delta: int) -> None:
        self._weights[trace_id] = self._weights.get(trace_id, 0) + delta
        self.bytes += delta

    def _trim(self) -> None:
        while self.bytes > self.max_bytes and len(self._traces) > 1:
            trace_id, spans = self._traces.popitem(last=False)
            self.bytes -= self._weights.pop(trace_id, 0)
            self.dropped += len(spans)

    def spans(self, trace_ids: Iterable[str]) -> list[AgentSpan]:
        return [s for t in dict.fromkeys(trace_ids) for s in self._traces.get(t, [])]

    def complete(self, trace_ids: Iterable[str], parent: str | None) -> bool:
        """Every trace has its root: a span with no parent, or whose parent is `parent` (the runner's span the
        agent's own root continues)."""
        return all(
            any(s.parent_span_id is None or s.parent_span_id == parent for s in self._traces.get(t, []))
            for t in trace_ids
        )

    async def wait_complete(self, trace_ids: list[str], parent: str | None, timeout_s: float) -> bool:
        """Wait, at most timeout_s, until complete(); whether it is."""
        deadline = time.monotonic() + timeout_s
        while not self.complete(trace_ids, parent):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(self._event.wait(), left)
            except TimeoutError:
                return self.complete(trace_ids, parent)
        return True

    def clear(self) -> None:
        self._traces.clear()
        self._weights.clear()
        self.bytes = 0
        self.dropped = 0
        self.received = 0
