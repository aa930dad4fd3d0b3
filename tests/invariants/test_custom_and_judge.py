"""custom scripts and llm_as_judge, each passing, failing and erroring; the judge is a local
OpenAI-compatible server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from pydantic import TypeAdapter

from flakeproxy.config.settings import JudgeConfig
from flakeproxy.invariants import AnyInvariant
from flakeproxy.judging.verdict import Observation
from tests.support.loops import free_port, running_app

INV: TypeAdapter[Any] = TypeAdapter(AnyInvariant)


def judge(spec: dict[str, Any], **obs: Any) -> tuple[str, str]:
    invariant = INV.validate_python({"id": "x", **spec})
    verdict = invariant.evaluate(Observation("What is AAPL?", obs.pop("text", "AAPL is $189.50"), 5.0, **obs))
    return verdict.outcome, verdict.reason


SCRIPT = """
import json, sys
ctx = json.load(sys.stdin)
mode = "{mode}"
if mode == "crash":
    sys.exit(3)
if mode == "garbage":
    print("not json")
else:
    ok = "$" not in ctx["agent_output"] if mode == "nodollar" else True
    print(json.dumps({{"passed": ok, "score": 1 if ok else 0, "reason": f"saw {{ctx['task']['prompt']}}",
                       "details": {{"journal": ctx["audit_log_path"].endswith(".jsonl")}}}}))
"""


@pytest.mark.parametrize(
    ("mode", "outcome", "reason"),
    [
        ("pass", "pass", "saw What is AAPL?"),
        ("nodollar", "fail", "saw What is AAPL?"),
        ("crash", "error", "custom script exited 3"),
        ("garbage", "error", "printed no {passed, score, reason} JSON"),
    ],
)
def test_custom(tmp_path: Path, mode: str, outcome: str, reason: str) -> None:
    (tmp_path / "check.py").write_text(SCRIPT.format(mode=mode))
    got, why = judge({"type": "custom", "script": "check.py"}, workspace=str(tmp_path))
    assert got == outcome and reason in why


@pytest.fixture(scope="module")
def judge_server() -> Iterator[tuple[str, list[Any]]]:
    seen: list[Any] = []

    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body)
        text = body["messages"][1]["content"]
        if "garbage" in text:
            content = "I think it is fine."
        else:
            score = 0.9 if "professional" in text else 0.2
            content = "```json\n" + json.dumps({"score": score, "passed": score > 0.5, "reason": "tone"}) + "\n```"
        return web.json_response({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})

    with running_app([web.post("/v1/chat/completions", completions)], "judge") as url:
        yield f"{url}/v1", seen


def test_llm_as_judge(judge_server: tuple[str, list[Any]]) -> None:
    url, seen = judge_server
    spec = {
        "type": "llm_as_judge",
        "model": "judge-1",
        "criteria": "Professional tone",
        "pass_threshold": 0.7,
        "rubric": {"pass": "professional", "fail": "casual"},
    }
    config = JudgeConfig(base_url=url, api_key="k")
    assert judge(spec, text="a professional answer", judge=config)[0] == "pass"
    assert judge(spec, text="yo dude", judge=config)[0] == "fail"
    outcome, reason = judge(spec, text="garbage", judge=config)
    assert outcome == "error" and "not {score, passed, reason} JSON" in reason
    assert seen[0]["temperature"] == 0.0 and seen[0]["model"] == "judge-1"
    assert "Pass: professional" in seen[0]["messages"][0]["content"]


def test_llm_as_judge_reads_a_journal_field(judge_server: tuple[str, list[Any]]) -> None:
    url, _ = judge_server
    journal = [
        {
            "targets": ["smtp"],
            "method": "POST",
            "url": "http://m/api/messages",
            "request_body": "a professional renewal email",
            "request_headers": {},
        }
    ]
    spec = {
        "type": "llm_as_judge",
        "model": "m",
        "criteria": "c",
        "input_from": "smtp.last_request.body",
        "base_url": url,
    }
    assert judge(spec, text="irrelevant", journal=journal)[0] == "pass"


def test_llm_as_judge_unreachable_is_an_error() -> None:
    spec = {"type": "llm_as_judge", "model": "m", "criteria": "c", "base_url": f"http://127.0.0.1:{free_port()}/v1"}
    outcome, reason = judge(spec)
    assert outcome == "error" and "did not answer usably" in reason
