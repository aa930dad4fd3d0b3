"""`telemetry:`: where flakeproxy exports its spans (each proxied call in the agent's own trace, each verdict as a
`gen_ai.evaluation.result` event) over OTLP. Absent: nothing is exported, whatever the environment says."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.config.base import HttpUrl, StrictModel

Protocol = Literal["http/protobuf", "grpc"]
PROTOCOLS: tuple[str, ...] = ("http/protobuf", "grpc")


class TelemetryConfig(StrictModel):
    """OTLP export of the run's spans. Every key unset falls back to the standard OTEL_EXPORTER_OTLP_* variables
    (then to the OpenTelemetry defaults: http/protobuf to http://localhost:4318)."""

    otlp_endpoint: HttpUrl | None = Field(
        None,
        description="The collector's base URL, e.g. http://127.0.0.1:6006 (Phoenix) or http://collector:4318; "
        "for http/protobuf /v1/traces is added unless the URL ends with it. Unset: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT "
        "or OTEL_EXPORTER_OTLP_ENDPOINT.",
    )
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="Headers sent with every export, e.g. {Authorization: 'Bearer ${PHOENIX_API_KEY}'}; merged over "
        "OTEL_EXPORTER_OTLP_(TRACES_)HEADERS.",
    )
    protocol: Protocol | None = Field(
        None,
        description="http/protobuf or grpc. Unset: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL, "
        "else http/protobuf.",
    )
