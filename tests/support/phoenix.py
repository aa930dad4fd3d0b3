"""A real Arize Phoenix server for the telemetry tests: `arize-phoenix` from the package registry, installed once
into a cached venv of its own (about 800 MB; under a file lock, so parallel workers install it once), started on
loopback ports with everything that could reach out turned off. A test skips, with pip's reason, only when the
registry cannot be reached."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.loops import free_port
from tests.support.venvs import cached_venv

SPEC = "arize-phoenix>=20.26,<21"
FOLDER = "phoenix-20"  # under ~/.cache/flakeproxy-tests
#: Phoenix without a way out: no usage telemetry, no fetching of public resources, no assistant, no MCP server
QUIET = {
    "PHOENIX_TELEMETRY_ENABLED": "false",
    "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
    "PHOENIX_ENABLE_MCP_SERVER": "false",
}


def phoenix_python() -> Path:
    """The cached venv's python with Phoenix installed (installed now, under the lock, if it is not there)."""
    return cached_venv(FOLDER, SPEC)


@dataclass
class Phoenix:
    url: str  # the UI, the REST API and OTLP/HTTP (/v1/traces)
    grpc: str  # OTLP/gRPC

    def spans(self, trace_id: str) -> list[dict[str, Any]]:
        query = f"{self.url}/v1/projects/default/spans?trace_id={trace_id}&limit=1000"
        with urllib.request.urlopen(query, timeout=10) as response:
            return list(json.loads(response.read())["data"])

    def wait_spans(self, trace_id: str, ready: Any, timeout_s: float = 20) -> list[dict[str, Any]]:
        """The trace's spans once `ready(spans)` holds (Phoenix ingests in the background); fails with what it has."""
        deadline, spans = time.monotonic() + timeout_s, []
        while time.monotonic() < deadline:
            spans = self.spans(trace_id)
            if ready(spans):
                return spans
            time.sleep(0.2)
        raise AssertionError(f"Phoenix has {len(spans)} span(s) of {trace_id}: {[s['name'] for s in spans]}")


def _env(folder: Path, port: int, grpc: int) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))}
    place = {"PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc)}
    return {**keep, **QUIET, **place, "PHOENIX_WORKING_DIR": str(folder)}


@contextmanager
def running_phoenix(folder: Path, timeout_s: float = 60) -> Iterator[Phoenix]:
    python = phoenix_python()
    port, grpc = free_port(), free_port()
    log = open(folder / "phoenix.log", "w")  # noqa: SIM115 (closed below, after the process)
    process = subprocess.Popen(
        [str(python), "-m", "phoenix.server.main", "serve"], env=_env(folder, port, grpc), stdout=log, stderr=log
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                    break
            except OSError as e:
                exited = process.poll()
                if exited is not None or time.monotonic() > deadline:
                    tail = (folder / "phoenix.log").read_text()[-1500:]
                    raise AssertionError(f"Phoenix did not start (exit {exited}, {e}): {tail}") from e
                time.sleep(0.2)
        yield Phoenix(url, f"http://127.0.0.1:{grpc}")
    finally:
        process.terminate()
        process.wait(20)
        log.close()
