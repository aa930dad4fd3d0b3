"""Setting telemetry up: one line naming what is wrong and the fix, at startup, for a missing `otel` extra, a
telemetry check without a receiver, and a protocol flakeproxy cannot export with; a collector that cannot be
reached: one line at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from flakeproxy import parse_config
from flakeproxy.config.telemetry import TelemetryConfig
from flakeproxy.errors import ConfigError
from tests.support.loops import free_port

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is in the dev tools")

from flakeproxy.runner.telemetry import exporter

HIDE = "import sys; sys.modules[{module!r}] = None; from flakeproxy.cli.main import main; main()"


def config(**extra: Any) -> dict[str, Any]:
    return {
        "version": "2.0",
        "agent": {"type": "http", "endpoint": f"http://127.0.0.1:{free_port()}/ask", "response_path": "$.answer"},
        "proxy": {"admin": f"127.0.0.1:{free_port()}"},
        "golden_prompts": ["hi"],
        "contract": {"name": "c", "invariants": [{"id": "answers", "type": "completes"}]},
        "chaos_matrix": [{"name": "calm"}],
        **extra,
    }


def without(module: str, tmp_path: Path, data: dict[str, Any], *command: str) -> subprocess.CompletedProcess[str]:
    """A flakeproxy command in a Python where `module` cannot be imported (as without the otel extra)."""
    path = tmp_path / "flakeproxy.yaml"
    path.write_text(yaml.safe_dump(data))
    argv = [sys.executable, "-c", HIDE.format(module=module), *command, "-c", str(path)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)


def test_telemetry_without_the_extra_says_which_extra(tmp_path: Path) -> None:
    data = config(telemetry={"otlp_endpoint": "http://127.0.0.1:4318"})
    out = without("opentelemetry.exporter", tmp_path, data, "contract", "run", "-o", str(tmp_path / "out"))
    assert out.returncode == 2, out.stderr
    assert (
        out.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "telemetry needs the OpenTelemetry packages (opentelemetry.exporter.otlp.proto.http.trace_exporter is "
            "missing): pip install 'flakeproxy[otel]'"
        )
    ), out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    ("hidden", "extra", "said"),
    [
        ("opentelemetry.exporter", {"telemetry": {"otlp_endpoint": "http://127.0.0.1:4318"}}, "telemetry needs"),
        ("opentelemetry.proto", {"proxy": {"admin": "127.0.0.1:8790", "otlp": "127.0.0.1:4318"}}, "proxy.otlp needs"),
    ],
    ids=["telemetry", "proxy.otlp"],
)
def test_validate_says_what_the_run_would_stop_on_without_the_extra(
    tmp_path: Path, hidden: str, extra: dict[str, Any], said: str
) -> None:
    """A config `validate` passed, `contract run` then refused (exit 2) for want of the otel extra: validate says
    it too, in the same line (found by a new-user trial)."""
    out = without(hidden, tmp_path, config(**extra), "validate")
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert said in out.stderr and "pip install 'flakeproxy[otel]'" in out.stderr, out.stderr


def test_a_receiver_without_the_extra_says_which_extra(tmp_path: Path) -> None:
    data = config()
    data["proxy"]["otlp"] = f"127.0.0.1:{free_port()}"
    out = without("opentelemetry.proto", tmp_path, data, "proxy")
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert "proxy.otlp needs the OpenTelemetry packages" in out.stderr and "flakeproxy[otel]" in out.stderr


def test_a_telemetry_check_needs_the_receiver() -> None:
    data = config()
    data["contract"]["invariants"].append({"id": "noticed", "type": "telemetry_noticed"})
    with pytest.raises(ConfigError, match=r"noticed judges the agent's own spans: set proxy.otlp, e.g. 127.0.0.1:4318"):
        parse_config(yaml.safe_dump(data), "flakeproxy.yaml")


def test_the_config_refuses_a_protocol_it_cannot_export_with() -> None:
    with pytest.raises(
        ConfigError, match=r"line \d+: telemetry.protocol: must be one of http/protobuf, grpc, got 'http/json'"
    ):
        parse_config(yaml.safe_dump(config(telemetry={"protocol": "http/json"})), "flakeproxy.yaml")


def test_the_environment_fills_in_and_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    with pytest.raises(ConfigError, match=r"OTEL_EXPORTER_OTLP_PROTOCOL='http/json' is not supported .* valid: "):
        exporter(TelemetryConfig())
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=t1,authorization=Bearer%20env")
    grpc = exporter(TelemetryConfig(otlp_endpoint="http://127.0.0.1:4317", headers={"authorization": "Bearer mine"}))
    assert type(grpc).__module__.endswith("grpc.trace_exporter")
    assert dict(grpc._headers) == {"x-tenant": "t1", "authorization": "Bearer mine"}
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_PROTOCOL")
    http = exporter(TelemetryConfig(otlp_endpoint="http://127.0.0.1:6006"))
    assert http._endpoint == "http://127.0.0.1:6006/v1/traces"
    assert os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") is None


def test_a_collector_that_cannot_be_reached_costs_one_line_at_the_end(tmp_path: Path) -> None:
    """docs/telemetry.md: the exporter's retries and errors are not printed between the progress lines (a trial saw
    about fifteen), the first batch that fails is the last one tried, and the run's end waits for one export
    timeout at most, not one per batch (the trial's run took 23.7 s against 9.6 s without telemetry)."""
    from tests.hardening.runs import contract_run, run_world

    answer = json.dumps({"reply": "AAPL, per the source."}).encode()
    with run_world(tmp_path, answer, delay_s=0.25) as world:  # 3 s of episodes: batches go out during the run
        data = yaml.safe_load(world.config.read_text())
        data["golden_prompts"] = [f"What is AAPL trading at? ({n})" for n in range(6)]
        data["telemetry"] = {"otlp_endpoint": f"http://127.0.0.1:{free_port()}"}  # nothing listens there
        world.config.write_text(yaml.safe_dump(data))
        began = time.monotonic()
        out = contract_run(world)
        took = time.monotonic() - began
    assert out.returncode == 0, out.stderr[-2000:]
    said = [line for line in out.stderr.splitlines() if "telemetry" in line.lower() or "export" in line.lower()]
    assert len(said) == 1 and said[0].startswith("warning: telemetry: "), out.stderr[-3000:]
    assert "span(s) could not be exported to http://127.0.0.1:" in said[0]
    assert took < 3 + 3 + 3, f"{took:.1f} s: more than the run, its start and end, and one export timeout (3 s)"


def test_an_agent_that_sends_no_spans_costs_one_wait_and_one_line(tmp_path: Path) -> None:
    """proxy.otlp set, the agent's exporter pointed nowhere near it: after one episode's wait (SPAN_WAIT_MS) in
    which no span reached the receiver at all, the run stops waiting for spans and says so once; the telemetry
    check then cannot judge (no verdict from spans never seen). Without this, every episode waited 6 s."""
    from flakeproxy.runner.telemetry import SPAN_WAIT_MS
    from tests.runner.world import run, world

    checks = [{"id": "cites", "type": "regex", "pattern": "(?i)source"}, {"id": "noticed", "type": "telemetry_noticed"}]
    matrix = [{"name": "calm"}, {"name": "down", "tool_faults": [{"tool": "market_data_api", "mode": "error"}]}]
    with world(tmp_path, reset=False, invariants=checks, matrix=matrix, run={"replicas": 3}) as w:
        w.data["proxy"]["otlp"] = f"127.0.0.1:{free_port()}"
        w.config.write_text(yaml.safe_dump(w.data))
        started = time.monotonic()
        result = run(w.config)
        took = time.monotonic() - started
    assert len(result.episodes) == 7  # 2 scenarios x 3, and the stateful check
    assert SPAN_WAIT_MS / 1000 <= took < 2 * SPAN_WAIT_MS / 1000, f"{took:.1f} s: one wait, not one per episode"
    [said] = [w for w in result.warnings if "no span reached the proxy's receiver" in w]
    assert f"OTEL_EXPORTER_OTLP_ENDPOINT=http://{w.data['proxy']['otlp']}" in said
    assert all(e.agent_spans == [] for e in result.episodes)
    assert result.cell("noticed", "down").outcome in ("error", "n/a"), result.cell("noticed", "down")
