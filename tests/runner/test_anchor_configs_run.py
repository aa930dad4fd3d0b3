"""The anchors' configs run unchanged, given an agent: a Flakestorm-style config through `flakeproxy ci`, and
the invariants-weights-gates spec's pattern examples (tests/config/spec_examples.py) through a contract run
against real workspaces, a real PostgreSQL, a recording http_mock and a local OpenAI-compatible judge."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml
from aiohttp import web

from flakeproxy import load_config
from flakeproxy.runner.ci import run_ci_async
from tests.config.spec_examples import PATTERN_SQL_HTTP, PATTERN_TESTS_GATE
from tests.config.test_anchor_configs import FLAKESTORM
from tests.runner.world import run, world
from tests.support.loops import free_port, running_app

PG = "postgresql://postgres@127.0.0.1:5432/test"


def test_a_flakestorm_config_runs_in_ci(tmp_path: Path) -> None:
    """Run invariants without id, flat scoring weights, the matrix under contract:, a global chaos: on "*"."""
    with world(tmp_path) as w:
        data = yaml.safe_load(FLAKESTORM)
        data.update(agent=w.data["agent"], proxy=w.data["proxy"], targets=w.data["targets"])
        data["scoring"] = {"mutation": 0.30, "chaos": 0.30, "contract": 0.40, "replay": 0.0}
        w.config.write_text(yaml.safe_dump(data, sort_keys=False))
        result = asyncio.run(run_ci_async(load_config(w.config), str(w.config), tmp_path / "out"))
    assert result.ci is not None and result.score is not None
    pillars = {p.name: p for p in result.ci.pillars}
    assert all(pillars[name].ran for name in ("contract", "chaos", "mutation"))
    assert (pillars["mutation"].weight, pillars["chaos"].weight, pillars["contract"].weight) == (0.30, 0.30, 0.40)
    ids = {"latency", "valid_json", "contains", "contains-2", "regex", "excludes_pii", "refusal_check"}
    for pillar in ("chaos", "mutation"):
        assert all(set(item.verdicts) == ids for item in pillars[pillar].items)
    # the agent answers prose, so valid_json fails everywhere: a run of the anchor's config that judged something
    assert all(item.verdicts["valid_json"].outcome == "fail" for item in pillars["chaos"].items)
    assert [c.scenario for c in result.cells] == ["no-chaos", "search-tool-down"]


def contract_config(tmp: Path, snippet: str, agent: dict[str, Any], **extra: Any) -> Path:
    """The spec example unchanged as the contract, with the agent, a calm scenario and what else it names."""
    spec = yaml.safe_load(snippet)
    data = {
        "version": "2.0",
        "agent": agent,
        "golden_prompts": ["Do the task, then say what you did"],
        "contract": {"name": "spec pattern", "invariants": spec["invariants"]},
        "chaos_matrix": [{"name": "no-chaos"}],
        "scoring": spec.get("scoring", {}),
        "run": {"seed": 7, "output": str(tmp / "out"), "workspace": str(tmp / "ws")},
        **extra,
    }
    path = tmp / "flakeproxy.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def workspace(tmp: Path, tests_exit: int) -> Path:
    """A repository with an npm project whose `npm test` exits tests_exit, committed, so git diff sees the agent."""
    ws = tmp / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "package.json").write_text(json.dumps({"name": "w", "scripts": {"test": f"exit {tests_exit}"}}))
    (ws / "src" / "main.ts").write_text("export const add = (a: number, b: number) => a - b;\n")
    for git in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *git], cwd=ws, check=True, timeout=30)
    return ws


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tests_exit", [0, 1], ids=["tests-pass", "tests-fail"])
def test_the_tests_gate_pattern_runs_unchanged(tmp_path: Path, tests_exit: int) -> None:
    ws = workspace(tmp_path, tests_exit)
    fix = "sed -i 's/a - b/a + b/' src/main.ts && echo 'Fixed add (source: the failing test)'"
    config = contract_config(
        tmp_path, PATTERN_TESTS_GATE, {"type": "command", "command": ["sh", "-c", fix], "cwd": str(ws)}
    )
    result = run(config)
    assert result.score is not None
    cells = {c.invariant: c.outcome for c in result.cells}
    if tests_exit == 0:
        assert cells == {"tests_pass": "pass", "no_console_log": "pass", "small_diff": "pass"}
        assert result.score.passed and result.score.composite["no-chaos"].composite == 1.0
    else:  # the gate: composite 0, the scenario and the run fail
        assert cells["tests_pass"] == "fail" and not result.score.passed
        assert result.score.composite["no-chaos"].gate_failed == ["tests_pass"]


MAILER = """
import json, os, urllib.request
cell = {{"x-flakeproxy-cell": os.environ["FLAKEPROXY_CELL"]}} if "FLAKEPROXY_CELL" in os.environ else {{}}
body = json.dumps({{"subject": "Reconciliation", "text": "Dear finance team, 0 mismatches found; next step: none."}})
headers = {{"content-type": "application/json", "to": "finance@co", **cell}}
urllib.request.urlopen(urllib.request.Request("{url}/api/messages", body.encode(), headers), timeout=5).read()
print("Reconciled the customers and emailed finance")
"""


@pytest.fixture
def schema() -> Iterator[str]:
    """customers_a and customers_b, equal, in a schema of their own (the example names the tables unqualified)."""
    name = f"fp_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG, autocommit=True) as conn:
        conn.execute(f"create schema {name}")
        for table in ("customers_a", "customers_b"):
            conn.execute(f"create table {name}.{table} (id int, email text)")
            conn.execute(f"insert into {name}.{table} values (1, 'a@x'), (2, 'b@x')")
    try:
        yield name
    finally:
        with psycopg.connect(PG, autocommit=True) as conn:
            conn.execute(f"drop schema {name} cascade")


def test_the_sql_and_http_mock_pattern_runs_unchanged(tmp_path: Path, schema: str) -> None:
    judged: list[Any] = []

    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        judged.append(body)
        verdict = {"score": 0.9, "passed": True, "reason": "professional, with the numbers and a next step"}
        message = {"role": "assistant", "content": json.dumps(verdict)}
        return web.json_response({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})

    port = free_port()
    with running_app([web.post("/v1/chat/completions", completions)], "judge") as judge:
        agent = {"type": "command", "command": [sys.executable, "-c", MAILER.format(url=f"http://127.0.0.1:{port}")]}
        services = {
            "db": {"type": "postgres", "dsn": f"{PG}?options=-csearch_path%3D{schema}"},
            "smtp": {"type": "http_mock", "listen": f"127.0.0.1:{port}", "record": True,
                     "routes": [{"method": "POST", "path": "/api/messages", "status": 202}]},
        }  # fmt: skip
        (tmp_path / "ws").mkdir()
        config = contract_config(
            tmp_path, PATTERN_SQL_HTTP, agent, services=services, judge={"base_url": f"{judge}/v1"}
        )
        result = run(config)
    cells = {c.invariant: (c.outcome, c.reason) for c in result.cells}
    assert {k: v[0] for k, v in cells.items()} == {
        "reconciliation_clean": "pass",
        "email_sent_once": "pass",
        "email_quality": "pass",
    }, cells
    assert result.score is not None and result.score.passed
    assert judged and judged[0]["model"] == "paragon-fast" and "0 mismatches" in judged[0]["messages"][-1]["content"]
