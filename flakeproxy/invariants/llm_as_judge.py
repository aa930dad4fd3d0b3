from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from flakeproxy.config.base import HttpUrl, StrictModel
from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.journal_fields import FieldMissing, matching, read_field
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge


class Rubric(StrictModel):
    pass_: str = Field(alias="pass")
    fail: str


class LlmAsJudge(Invariant):
    """An OpenAI-compatible model scores the input against criteria; score >= pass_threshold passes."""

    type: Literal["llm_as_judge"]
    calls_out: ClassVar[bool] = True
    reads_whole: ClassVar[bool] = True
    model: str = Field(min_length=1)
    criteria: str = Field(min_length=1)
    input_from: str = Field(
        "agent_output",
        description="agent_output, a journal field like smtp.last_request.body, or workspace:PATH",
    )
    rubric: Rubric | None = None
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    pass_threshold: float = Field(0.5, ge=0.0, le=1.0)
    base_url: HttpUrl | None = Field(None, description="The judge's endpoint; default judge.base_url.")

    def _input(self, obs: Observation) -> str:
        if self.input_from == "agent_output":
            return obs.text or ""
        if self.input_from.startswith("workspace:"):
            return (Path(obs.workspace or ".") / self.input_from.split(":", 1)[1]).read_text(encoding="utf-8")
        target, _, field = self.input_from.partition(".")
        value = read_field(matching(obs.journal, target, {}), field)
        return value if isinstance(value, str) else json.dumps(value)

    def _ask(self, base_url: str, api_key: str | None, text: str) -> Any:
        rubric = f"\nPass: {self.rubric.pass_}\nFail: {self.rubric.fail}" if self.rubric else ""
        system = (
            "You are a strict evaluator. Judge the input against the criteria and reply with JSON only: "
            '{"score": <0..1>, "passed": <true|false>, "reason": "<one sentence>"}.\n'
            f"Criteria:\n{self.criteria}{rubric}"
        )
        body = {
            "model": self.model,
            "temperature": self.temperature,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": text}],
        }
        headers = {"content-type": "application/json", **({"authorization": f"Bearer {api_key}"} if api_key else {})}
        request = urllib.request.Request(
            base_url.rstrip("/") + "/chat/completions", json.dumps(body).encode(), headers, method="POST"
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())["choices"][0]["message"]["content"]

    def evaluate(self, obs: Observation) -> Verdict:
        """The judge must answer {score, passed, reason} as JSON; anything else is an error, not a fail."""
        base_url = self.base_url or (obs.judge.base_url if obs.judge else None)
        if base_url is None:
            return cannot_judge("llm_as_judge needs base_url or a judge: section")
        try:
            text = self._input(obs)
        except (FieldMissing, OSError) as e:
            return cannot_judge(f"cannot read input_from {self.input_from}: {e}")
        try:
            content = self._ask(base_url, obs.judge.api_key if obs.judge else None, text)
        except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError, TypeError) as e:
            return cannot_judge(f"the judge at {base_url} did not answer usably: {e}")
        try:
            reply = json.loads(re.sub(r"^```(?:json)?|```$", "", str(content).strip()).strip())
            score, reason = float(reply["score"]), str(reply.get("reason", ""))
        except (ValueError, KeyError, TypeError) as e:
            return cannot_judge(
                f"the judge's reply is not {{score, passed, reason}} JSON ({e}): {str(content)[:200]!r}"
            )
        score = max(0.0, min(1.0, score))
        return Verdict(
            "pass" if score >= self.pass_threshold else "fail",
            f"judge score {score:.2f} (threshold {self.pass_threshold}): {reason}",
            {"score": score, "judge_passed": reply.get("passed")},
            score,
        )
