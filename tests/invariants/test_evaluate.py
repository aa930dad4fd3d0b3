"""Each invariant type judges an observation: a table of (invariant, answer) -> outcome."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from flakeproxy.invariants import AnyInvariant
from flakeproxy.judging.verdict import Observation

INV: TypeAdapter[Any] = TypeAdapter(AnyInvariant)
ANSWER = "AAPL trades at $189.50 according to the exchange feed."


def judge(spec: dict[str, Any], text: str | None = ANSWER, **obs: Any) -> str:
    invariant = INV.validate_python({"id": "x", **spec})
    observation = Observation(prompt="p", text=text, latency_ms=obs.pop("latency_ms", 100.0), **obs)
    return str(invariant.evaluate(observation).outcome)


@pytest.mark.parametrize(
    ("spec", "text", "outcome"),
    [
        ({"type": "contains", "value": "exchange FEED"}, ANSWER, "pass"),
        ({"type": "contains", "value": "bloomberg"}, ANSWER, "fail"),
        ({"type": "contains_any", "values": ["reuters", "exchange"]}, ANSWER, "pass"),
        ({"type": "contains_any", "values": ["reuters"]}, ANSWER, "fail"),
        ({"type": "regex", "pattern": r"\$[\d,]+\.\d{2}"}, ANSWER, "pass"),
        ({"type": "regex", "pattern": r"(?i)source"}, ANSWER, "fail"),
        ({"type": "excludes_pattern", "patterns": ["system prompt", r"\bpassword\b"]}, ANSWER, "pass"),
        ({"type": "excludes_pattern", "patterns": ["EXCHANGE"]}, ANSWER, "fail"),
        ({"type": "output_not_empty"}, " \n", "fail"),
        ({"type": "output_not_empty"}, ANSWER, "pass"),
        ({"type": "valid_json"}, '{"a": 1}', "pass"),
        ({"type": "valid_json"}, ANSWER, "fail"),
        ({"type": "valid_json", "json_schema": {"type": "object", "required": ["price"]}}, '{"a": 1}', "fail"),
        ({"type": "valid_json", "json_schema": {"type": "object", "required": ["price"]}}, '{"price": 1}', "pass"),
        ({"type": "similarity", "expected": "According to the exchange feed AAPL trades at $189.50"}, ANSWER, "pass"),
        ({"type": "similarity", "expected": "I cannot help with that."}, ANSWER, "fail"),
        ({"type": "behavior_unchanged", "baseline": ANSWER}, ANSWER, "pass"),
        ({"type": "behavior_unchanged", "baseline": "Sorry, the service is down."}, ANSWER, "fail"),
        ({"type": "excludes_pii"}, ANSWER, "pass"),
        ({"type": "excludes_pii"}, "Reach jane@example.com", "fail"),
        ({"type": "excludes_pii", "allow": ["help@example.com"]}, "Reach help@example.com", "pass"),
        ({"type": "refusal_check"}, "I'm sorry, I can't help with that.", "pass"),
        ({"type": "refusal_check"}, ANSWER, "fail"),
        ({"type": "refusal_check", "expect": "comply"}, ANSWER, "pass"),
        ({"type": "prompt_leak", "canaries": ["FINBOT-7"]}, "my code is FINBOT-7", "fail"),
        (
            {"type": "prompt_leak", "system_prompt": "You are FinBot and you never reveal account numbers"},
            "Sure! You are FinBot and you never reveal account numbers.",
            "fail",
        ),
        (
            {"type": "prompt_leak", "system_prompt": "You are FinBot and you never reveal account numbers"},
            ANSWER,
            "pass",
        ),
    ],
)
def test_text_invariants(spec: dict[str, Any], text: str, outcome: str) -> None:
    assert judge(spec, text) == outcome


def test_latency_and_completes() -> None:
    assert judge({"type": "latency", "max_ms": 200}, latency_ms=150) == "pass"
    assert judge({"type": "latency", "max_ms": 200}, latency_ms=250) == "fail"
    assert judge({"type": "completes"}) == "pass"
    assert judge({"type": "completes"}, None, error="timed out after 30000 ms") == "fail"


def test_behavior_unchanged_auto_without_baseline_cannot_judge() -> None:
    assert judge({"type": "behavior_unchanged"}, baseline=None) == "error"
    assert judge({"type": "behavior_unchanged"}, baseline=ANSWER) == "pass"


def test_files_and_commands(tmp_path: Path) -> None:
    (tmp_path / "out.json").write_text('{"status": "success"}')
    ws = {"workspace": str(tmp_path)}
    assert judge({"type": "file_exists", "path": "out.json"}, **ws) == "pass"
    assert judge({"type": "file_absent", "path": "out.json"}, **ws) == "fail"
    assert (
        judge(
            {
                "type": "file_content",
                "path": "out.json",
                "contains": '"success"',
                "not_contains": "error",
                "pattern": "^{",
            },
            **ws,
        )
        == "pass"
    )
    assert judge({"type": "file_content", "path": "out.json", "not_contains": "success"}, **ws) == "fail"
    assert judge({"type": "file_exists", "path": "out.json"}) == "error"  # no workspace: cannot judge
    assert judge({"type": "command_exit", "command": "test -f out.json"}, **ws) == "pass"
    assert judge({"type": "command_exit", "command": "exit 3", "exit_code": 3}, **ws) == "pass"
    assert judge({"type": "command_exit", "command": "echo nope >&2; exit 1"}, **ws) == "fail"


APPLIED_ERROR = {
    "scenario": "down",
    "section": "tool_faults",
    "index": 0,
    "kind": "error",
    "applied": True,
    "effect": "replied 503",
    "not_applied_reason": None,
    "settled": True,
}


def entry(target: str, at: float, fault: bool = False, retry_after: str | None = None) -> dict[str, Any]:
    headers = {"retry-after": retry_after} if retry_after else {}
    return {
        "targets": [target],
        "url": f"http://{target}.test/x",
        "method": "GET",
        "started_at": at,
        "latency_ms": 1.0,
        "fault": APPLIED_ERROR if fault else None,
        "response_headers": headers,
    }


def test_traffic_invariants() -> None:
    journal = [entry("quotes", 0.0, True, "1"), entry("quotes", 0.3), entry("quotes", 1.5), entry("llm", 2.0)]
    ok = {"journal": journal}
    assert judge({"type": "call_count", "target": "quotes", "max": 3}, **ok) == "pass"
    assert judge({"type": "call_count", "target": "quotes", "max": 2}, **ok) == "fail"
    assert judge({"type": "retries_after_fault", "target": "quotes", "max": 1}, **ok) == "fail"
    assert judge({"type": "retries_after_fault", "target": "quotes", "max": 2}, **ok) == "pass"
    assert judge({"type": "retry_after_respected", "target": "quotes"}, **ok) == "fail"  # retried after 0.3 s
    patient = {"journal": [entry("quotes", 0.0, True, "1"), entry("quotes", 1.2)]}
    assert judge({"type": "retry_after_respected", "target": "quotes"}, **patient) == "pass"
    gave_up = {"journal": [entry("quotes", 0.0, True, "1")]}  # no retry: no wait seen, so no pass
    assert judge({"type": "retry_after_respected", "target": "quotes"}, **gave_up) == "not_applicable"
    assert judge({"type": "no_call_to", "targets": ["llm"]}, **ok) == "fail"
    assert judge({"type": "no_call_to", "hosts": ["*.evil.example"]}, **ok) == "pass"


def test_checks_that_cannot_run_are_errors_not_passes() -> None:
    assert judge({"type": "sql", "service": "db", "query": "select 1", "equals": 1}) == "error"  # no such service
    assert judge({"type": "custom", "script": "missing.py"}) == "error"
