"""What the telemetry checks say, shared by telemetry_noticed and time_to_detect."""

from __future__ import annotations

from flakeproxy.telemetry.detect import Detection, Found

NO_SPANS = (
    "no span from the agent arrived at proxy.otlp for this episode within 6 s of its answer: point the agent's "
    "OTLP exporter at it (OTEL_EXPORTER_OTLP_ENDPOINT=http:// and proxy.otlp's address, OTEL_EXPORTER_OTLP_PROTOCOL="
    "http/protobuf or http/json) and have it export sooner than that (its batch delay, OTEL_BSP_SCHEDULE_DELAY, "
    "under 6000 ms)"
)


def of_kind(found: list[Detection], kind: Found) -> list[Detection]:
    return [d for d in found if d.found == kind]


def listed(some: list[Detection]) -> str:
    """The first of some faults with its reason, and how many more."""
    d = some[0]
    more = f" (and {len(some) - 1} more)" if len(some) > 1 else ""
    return f"{d.fault} on call #{d.seq} to {d.target}: {d.how}{more}"
