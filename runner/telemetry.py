"""OpenTelemetry for the runner: the agent's own spans fetched from the proxy after each episode (proxy.otlp), and
flakeproxy's spans exported over OTLP (telemetry:): each proxied call once its episode ended, and the episode's
span with its verdicts as `gen_ai.evaluation.result` events once its scenario is judged (any left at the end go
without). Spans are built after the fact with their real start and end times, so the proxy's per-request path
pays nothing for the export."""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flakeproxy import control_api as api
from flakeproxy.config import FlakeproxyConfig
from flakeproxy.config.telemetry import PROTOCOLS, TelemetryConfig
from flakeproxy.errors import ConfigError
from flakeproxy.results import CellResult, Episode
from flakeproxy.runner.control import ControlClient
from flakeproxy.telemetry import extra
from flakeproxy.telemetry.call_spans import call_span
from flakeproxy.telemetry.detect import call_context
from flakeproxy.telemetry.episode_span import episode_span, evaluations
from flakeproxy.telemetry.out import SCHEMA_URL, SpanSpec
from flakeproxy.telemetry.spans import AgentSpan
from flakeproxy.version import __version__
from flakeproxy.wire.trace import TraceContext, context_of

#: How long the proxy may wait for the root span of the agent's trace once the episode ended: exporters batch
#: (the SDKs' BatchSpanProcessor waits up to 5 s), so the spans of an episode come after its answer.
SPAN_WAIT_MS = 6000


@dataclass
class SpanWaits:
    """How long the runner waits for each episode's spans: SPAN_WAIT_MS, until one such wait ended with no span of
    any trace having reached the proxy's receiver (the agent exports none there: no exporter, or one pointed
    elsewhere); from then on not at all (its spans, if any came, still fetched), until one arrives. Said once, so
    that a run whose agent sends nothing does not quietly wait 6 s per episode."""

    warn: Callable[[str], None] = lambda line: None
    idle: bool = False
    said: bool = False

    def wait_ms(self) -> int:
        return 0 if self.idle else SPAN_WAIT_MS

    def heard(self, reply: api.SpansReply, waited_ms: int, address: str) -> None:
        if reply.received is None:  # a proxy that does not say: wait every time, as before
            return
        if reply.received:
            self.idle = False
        elif waited_ms and not reply.complete:
            self.idle = True
            if not self.said:
                self.said = True
                self.warn(
                    f"warning: proxy.otlp is set but no span reached the proxy's receiver at {address} in the "
                    f"{SPAN_WAIT_MS / 1000:g} s after an episode: the run stops waiting for the agent's spans until "
                    f"one arrives (telemetry checks cannot judge without them); point the agent's exporter there "
                    f"(OTEL_EXPORTER_OTLP_ENDPOINT=http://{address}) and have it export within "
                    f"{SPAN_WAIT_MS / 1000:g} s (its batch delay, OTEL_BSP_SCHEDULE_DELAY, under {SPAN_WAIT_MS} ms)"
                )


async def agent_spans(
    control: ControlClient | None,
    config: FlakeproxyConfig,
    trace: TraceContext,
    journal: list[dict[str, Any]],
    episode: str,
    waits: SpanWaits,
) -> list[AgentSpan]:
    """The agent's spans of the traces an episode's calls carried (or of the trace the runner sent it), once
    each trace's root arrived or the wait (`waits`: SPAN_WAIT_MS, none once the agent proved to send nothing)
    passed, scrubbed by the proxy of the secrets of the (ended) episode's requests; [] when proxy.otlp is not set."""
    if control is None or config.proxy.otlp is None:
        return []
    traces = sorted({c[0] for c in map(call_context, journal) if c is not None} or {trace.trace_id})
    wait_ms = waits.wait_ms()
    query = [("trace_id", t) for t in traces] + [("parent", trace.span_id), ("wait_ms", str(wait_ms))]
    query.append(("episode", episode))
    reply = await control.spans(query)
    waits.heard(reply, wait_ms, config.proxy.otlp)
    return [AgentSpan.model_validate(s) for s in reply.spans]


def _endpoint(config: TelemetryConfig, protocol: str) -> str | None:
    url = config.otlp_endpoint
    if url is None or protocol == "grpc" or url.rstrip("/").endswith("/v1/traces"):
        return url
    return url.rstrip("/") + "/v1/traces"


def _protocol(config: TelemetryConfig) -> str:
    env = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    protocol = config.protocol or env or "http/protobuf"
    if protocol not in PROTOCOLS:
        raise ConfigError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r} is not supported for flakeproxy's export; valid: "
            f"{', '.join(PROTOCOLS)} (or set telemetry.protocol)"
        )
    return protocol


#: The OTLP exporters' loggers' parent (http: ...otlp.common.http; grpc: ...otlp.proto.grpc.exporter).
EXPORTER_LOGS = "opentelemetry.exporter.otlp"
#: How long one export may take, retries included, unless OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT says (the exporters'
#: own default is 10 s): a collector that cannot be reached costs a run this once (Counting gives up after it).
EXPORT_TIMEOUT_S = 3.0


def exporter(config: TelemetryConfig) -> Any:
    """The official OTLP span exporter for this config; OTEL_EXPORTER_OTLP_* fill in what it leaves unset."""
    extra.require("telemetry")
    protocol = _protocol(config)
    set_timeout = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT")
    timeout = None if set_timeout else EXPORT_TIMEOUT_S
    from opentelemetry.util.re import parse_env_headers

    env = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or os.environ.get("OTEL_EXPORTER_OTLP_HEADERS", "")
    headers = {**parse_env_headers(env, liberal=True), **config.headers} or None
    if protocol == "grpc":
        extra.require("telemetry.protocol: grpc")
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc

        return Grpc(endpoint=_endpoint(config, protocol), headers=headers, timeout=timeout)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as Http

    return Http(endpoint=_endpoint(config, protocol), headers=headers, timeout=timeout)


def readable(spec: SpanSpec, resource: Any, scope: Any) -> Any:
    """An SDK ReadableSpan with exactly the spec's ids and times."""
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    def context(span_id: str, remote: bool) -> SpanContext:
        return SpanContext(int(spec.trace_id, 16), int(span_id, 16), is_remote=remote, trace_flags=TraceFlags(1))

    codes = {"unset": StatusCode.UNSET, "ok": StatusCode.OK, "error": StatusCode.ERROR}
    return ReadableSpan(
        name=spec.name,
        context=context(spec.span_id, False),
        parent=context(spec.parent_span_id, True) if spec.parent_span_id else None,
        resource=resource,
        attributes=spec.attributes,
        events=[Event(e.name, e.attributes, e.time_ns) for e in spec.events],
        kind=SpanKind.CLIENT if spec.kind == "client" else SpanKind.INTERNAL,
        status=Status(codes[spec.status], spec.status_message or None),
        start_time=spec.start_ns,
        end_time=spec.end_ns,
        instrumentation_scope=scope,
    )


if TYPE_CHECKING:  # the otel extra is imported only when telemetry: is configured
    from opentelemetry.sdk.trace.export import SpanExporter as _Exporter
else:
    _Exporter = object


class Counting(_Exporter):
    """The exporter, counting what it could not deliver (for one line at the end instead of silence). Once a batch
    failed (the exporter retried it until its timeout), the collector is taken as unreachable: later batches are
    counted as not delivered without trying, so that a collector that is down costs the run one timeout, not one
    per batch (and its end, which waits for the exports, as long)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.sent, self.failed, self.given_up = inner, 0, 0, False

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        result = SpanExportResult.FAILURE
        if not self.given_up:
            with contextlib.suppress(Exception):
                result = self.inner.export(spans)
        if result == SpanExportResult.SUCCESS:
            self.sent += len(spans)
        else:
            self.failed += len(spans)
            self.given_up = True
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))


class KeptLog(logging.Handler):
    """The OTLP exporters' warnings and errors (a collector refusing, retries), kept instead of printed between the
    run's progress lines: the last one is the reason the run's one warning at the end gives."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.last: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self.last = " ".join(record.getMessage().split())[:300]


class TelemetryExport:
    """An episode hook that exports each episode's calls as spans in its trace; `judged` adds the verdicts."""

    def __init__(self, config: FlakeproxyConfig) -> None:
        assert config.telemetry is not None
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope

        self.config = config
        self.where = config.telemetry.otlp_endpoint or "the OTEL_EXPORTER_OTLP_* endpoint"
        self.log, self.logger = KeptLog(), logging.getLogger(EXPORTER_LOGS)
        self.logger.addHandler(self.log)
        self.logger.propagate = False  # until close(): its lines are the end's warning, not the run's output
        self.exporter = Counting(exporter(config.telemetry))
        self.processor = BatchSpanProcessor(self.exporter, schedule_delay_millis=1000)
        resource = Resource.create({"service.version": __version__})
        if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
            resource = resource.merge(Resource({"service.name": "flakeproxy"}))
        self.resource = resource
        self.scope = InstrumentationScope("flakeproxy", __version__, SCHEMA_URL)
        self.times: dict[str, tuple[float, float]] = {}
        self.open: dict[str, Episode] = {}  # episodes whose own span waits for their verdicts

    def _emit(self, specs: Iterable[SpanSpec]) -> None:
        for spec in specs:
            self.processor.on_end(readable(spec, self.resource, self.scope))

    async def begun(self, episode: Episode, cell: str) -> None:
        self.times[episode.id] = (time.time(), time.time())

    async def ended(self, episode: Episode) -> None:
        root = context_of(episode.traceparent or "")
        if root is None:
            return
        self.times[episode.id] = (self.times.get(episode.id, (time.time(),))[0], time.time())
        scenario, targets = episode.scenario, self.config.targets
        self._emit(call_span(e, episode.id, scenario, root, targets) for e in episode.journal if e.get("started_at"))
        self.open[episode.id] = episode

    def _root(self, episode: Episode, cells: Iterable[CellResult]) -> SpanSpec:
        root = context_of(episode.traceparent or "")
        assert root is not None
        start, end = self.times[episode.id]
        return episode_span(episode, root, start, end, evaluations(episode, cells, time.time_ns()))

    def judged(self, cells: list[CellResult], episodes: Mapping[str, Episode]) -> None:
        """Export the span of every episode these cells judged, with their verdicts on it."""
        ids = {v.episode for c in cells for v in c.verdicts}
        done = [self.open.pop(i) for i in sorted(ids) if i in self.open]
        self._emit(self._root(episodes.get(e.id, e), cells) for e in done)

    def close(self) -> str | None:
        """Export what is left, flush, stop; a warning when spans could not be delivered."""
        self._emit(self._root(e, []) for e in self.open.values())
        self.open.clear()
        try:
            self.processor.shutdown()
        finally:
            self.logger.removeHandler(self.log)
            self.logger.propagate = True
        if self.exporter.failed:
            why = self.log.last or "the exporter gave no reason"
            return (
                f"warning: telemetry: {self.exporter.failed} of {self.exporter.failed + self.exporter.sent} span(s) "
                f"could not be exported to {self.where} ({why}); after the first batch that failed, the rest were "
                "not tried"
            )
        return None


def telemetry_export(config: FlakeproxyConfig) -> TelemetryExport | None:
    """The export for a run, or None when `telemetry:` is not set or OTEL_SDK_DISABLED=true."""
    if not _exports(config):
        return None
    extra.require("telemetry")
    return TelemetryExport(config)


def _exports(config: FlakeproxyConfig) -> bool:
    return config.telemetry is not None and os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() != "true"


def check_extras(config: FlakeproxyConfig) -> None:
    """The ConfigError a run of this config would stop on at its start for want of the `otel` extra (or for an
    OTLP protocol it cannot export with): `validate` says it too, instead of passing the config."""
    if _exports(config):
        assert config.telemetry is not None
        extra.require("telemetry")
        if _protocol(config.telemetry) == "grpc":
            extra.require("telemetry.protocol: grpc")
    if config.proxy.otlp is not None:
        extra.require("proxy.otlp")
