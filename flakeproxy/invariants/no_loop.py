from __future__ import annotations

import json
from collections import Counter
from typing import Any, ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.spend import describe, plural, tool_calls
from flakeproxy.judging.verdict import Observation, Verdict, check, nothing_to_judge


def call_key(entry: dict[str, Any]) -> str:
    """What makes two tool calls the same: the MCP tool and its arguments, else the method, URL and body (JSON
    compared by value, whatever its key order; a JSON-RPC id does not count)."""
    body = str(entry.get("request_body", ""))
    try:
        data = json.loads(body)
    except ValueError:
        return f"{entry.get('method')} {entry.get('url')} {body}"
    if isinstance(data, dict) and "jsonrpc" in data:
        params = data.get("params")
        params = params if isinstance(params, dict) else {}
        if data.get("method") == "tools/call":
            return f"mcp {params.get('name')} {json.dumps(params.get('arguments'), sort_keys=True)}"
        data = {k: v for k, v in data.items() if k != "id"}
    return f"{entry.get('method')} {entry.get('url')} {json.dumps(data, sort_keys=True)}"


class NoLoop(Invariant):
    """The agent made no tool call more than max times with the same arguments in the episode.

    The same call: the same target, method, URL and body (JSON compared by value), or for MCP the same tool
    and arguments; retries count. n/a when it made no call to targets.
    """

    type: Literal["no_loop"]
    needs_answer: ClassVar[bool] = False
    reads_journal: ClassVar[bool] = True
    max: int = Field(3, ge=1, description="The most times one call (same target, same arguments) may be made.")
    targets: list[str] = Field(default_factory=lambda: ["*"], min_length=1, description="Target names or globs.")

    def evaluate(self, obs: Observation) -> Verdict:
        per_target = tool_calls(obs.journal, self.targets)
        if not per_target:
            return nothing_to_judge(f"no call to {', '.join(self.targets)} in this episode")
        counts: Counter[tuple[str, str]] = Counter()
        first: dict[tuple[str, str], dict[str, Any]] = {}
        for target, calls in per_target.items():
            for entry in calls:
                key = (target, call_key(entry))
                counts[key] += 1
                first.setdefault(key, entry)
        key, n = counts.most_common(1)[0]
        target, call = key[0], describe(first[key])
        body = str(first[key].get("request_body", ""))[:200]
        return check(
            n <= self.max,
            f"no call made more than {plural(self.max, 'time')} (at most {n}: {target} {call})",
            f"the same call to {target} made {plural(n, 'time')}, more than {self.max}: {call}",
            repeats=n,
            target=target,
            request_body=body,
            distinct_calls=len(counts),
        )
