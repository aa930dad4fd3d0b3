"""The LangGraph agent of tests/frameworks/otel_agent.py, traced as its users would trace it, in its own process:

    python -m tests.telemetry.traced_agent --llm URL --tools URL --otlp URL [--phoenix URL] [--record-errors off]

The official OpenTelemetry instrumentations (aiohttp server and client, httpx, and the official OpenAI
instrumentation, whose `chat` spans record errors with `error.type`) and a TracerProvider that exports over
OTLP/HTTP protobuf to the proxy's receiver (--otlp) and to Phoenix (--phoenix). `--record-errors off` is the same
agent with error recording turned off: its exporters drop every span's error status, `error.type` and exception
events, as an instrumentation configured not to record errors would leave them. The first line on stdout is the
port it listens on (127.0.0.1); it serves POST /ask {"prompt"} -> {"answer"} and POST /reset.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Status

from tests.frameworks.otel_agent import instrument, langgraph_agent, serve


class ErrorBlind(SpanExporter):
    """An exporter that leaves out everything a span says about an error."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner

    @staticmethod
    def _blind(span: ReadableSpan) -> ReadableSpan:
        attributes = {k: v for k, v in (span.attributes or {}).items() if k != "error.type"}
        return ReadableSpan(
            name=span.name,
            context=span.context,
            parent=span.parent,
            resource=span.resource,
            attributes=attributes,
            events=[e for e in span.events if e.name != "exception"],
            links=span.links,
            kind=span.kind,
            status=Status(),
            start_time=span.start_time,
            end_time=span.end_time,
            instrumentation_scope=span.instrumentation_scope,
        )

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([self._blind(s) for s in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.inner.force_flush(timeout_millis)


def tracing(endpoints: list[str], record_errors: bool) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "langgraph-quote-agent"}))
    for url in endpoints:
        exporter: SpanExporter = OTLPSpanExporter(endpoint=f"{url}/v1/traces")
        exporter = exporter if record_errors else ErrorBlind(exporter)
        provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=100))
    trace.set_tracer_provider(provider)
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    instrument()  # aiohttp server and client, httpx (ChatOpenAI gets an httpx client it patches)
    OpenAIInstrumentor().instrument()


def main(argv: list[str] | None = None) -> Any:
    parser = argparse.ArgumentParser()
    for flag in ("--llm", "--tools", "--otlp"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--phoenix")
    parser.add_argument("--record-errors", choices=["on", "off"], default="on")
    args = parser.parse_args(argv)
    tracing([u for u in (args.otlp, args.phoenix) if u], args.record_errors == "on")
    asyncio.run(serve(langgraph_agent(args.llm, args.tools, patched_client=True)))


if __name__ == "__main__":
    sys.exit(main())
