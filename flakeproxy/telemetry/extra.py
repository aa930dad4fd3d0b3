"""The `otel` extra: the OpenTelemetry SDK, the OTLP exporters and the OTLP protobuf classes are optional
dependencies (`pip install 'flakeproxy[otel]'`); a feature that needs them says so in one line, at startup."""

from __future__ import annotations

import importlib.util

from flakeproxy.errors import ConfigError

INSTALL = "pip install 'flakeproxy[otel]'"
#: what each feature imports
NEEDS = {
    "telemetry": ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http.trace_exporter"),
    "proxy.otlp": ("opentelemetry.proto.collector.trace.v1.trace_service_pb2", "google.rpc.status_pb2"),
    "telemetry.protocol: grpc": ("opentelemetry.exporter.otlp.proto.grpc.trace_exporter",),
}


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package is missing
        return False


def require(feature: str) -> None:
    """ConfigError naming the extra when `feature` (a key of NEEDS) cannot import what it needs."""
    missing = [m for m in NEEDS[feature] if not _importable(m)]
    if missing:
        raise ConfigError(f"{feature} needs the OpenTelemetry packages ({missing[0]} is missing): {INSTALL}")
