"""An LLM upstream that ANSWERS every calm request with an error is a broken world too. The README's smallest config,
its agent on the official openai SDK falling back to a polite answer when its model fails, against an upstream that
says 401 (a bad key) or 404 (a base URL without /v1) to every call: it used to PASS at 100%, exit 0; it stops at
the calm scenario, exit 3, with one line naming the listener, its upstream, the status, the error and the fix. A
429 the SDK retried is no sign of a broken world; a 500 it retried is a warning. Real proxy, upstream and agent."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")

from tests.conftest import REPO
from tests.runner.world import cli, run
from tests.support.failing import Script
from tests.support.loops import free_port, running_app
from tests.support.openai_agent import agent_routes
from tests.support.upstream import RunningUpstream

README_CONFIG = (REPO / "README.md").read_text().split("```yaml\n", 1)[1].split("```", 1)[0]
NO_KEY = (
    '{"error": {"message": "Incorrect API key provided: [redacted]. You can find your API key at '
    'https://platform.openai.com/account/api-keys.", "type": "invalid_req...'
)


@contextmanager
def readme_world(tmp: Path, script: Script | None = None, base_path: str = "/v1") -> Iterator[tuple[Path, str]]:
    """The README's config as written, but for free ports and the fake OpenAI upstream (answering as `script`
    says), and a careful openai-SDK agent whose OPENAI_BASE_URL is the listener + `base_path`; (config, upstream)."""
    listen = f"127.0.0.1:{free_port()}"
    with RunningUpstream(script=script) as llm, RunningUpstream() as tool:
        urls = {"OPENAI_BASE_URL": f"http://{listen}{base_path}", "tool": f"{tool.url}/v1"}
        with running_app(agent_routes(urls, careful=True), "readme-agent") as agent:
            data = yaml.safe_load(README_CONFIG)
            data["agent"]["endpoint"] = f"{agent}/chat"
            data["proxy"]["admin"] = f"127.0.0.1:{free_port()}"
            data["proxy"]["listeners"][0] |= {"listen": listen, "upstream": llm.url}
            data["run"] = {"output": str(tmp / "out")}
            config = tmp / "flakeproxy.yaml"
            config.write_text(yaml.safe_dump(data, sort_keys=False))
            yield config, llm.url


def stopped_at_calm(tmp: Path) -> None:
    """No scenario after the calm one ran, and no cell blames the agent."""
    partial = json.loads((tmp / "out" / "results.json").read_text())
    assert {e["scenario"] for e in partial["episodes"]} <= {None, "no-chaos"}, "the run went on past the calm scenario"
    assert partial["complete"] is False and not [c for c in partial["cells"] if c["outcome"] == "fail"]


@pytest.mark.parametrize(
    ("script", "base_path", "said"),
    [
        (
            Script([401]),
            "/v1",
            f"HTTP 401: {NO_KEY}; nothing the agent does through it can be judged: "
            "401: check the agent's API key for it (missing, wrong or expired)",
        ),
        (
            None,
            "",
            "HTTP 404: 404: Not Found; nothing the agent does through it can be judged: 404: check the agent's "
            "base URL for it (a wrong path, e.g. a missing /v1) and the model it names",
        ),
    ],
    ids=["401-every-call", "404-no-v1"],
)
def test_the_readme_config_against_an_llm_answering_every_call_with_an_error_exits_3(
    tmp_path: Path, script: Script | None, base_path: str, said: str
) -> None:
    with readme_world(tmp_path, script, base_path) as (config, upstream):
        out = cli(config)
    assert out.returncode == 3, out.stdout + out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last == (
        f"error: the upstream of listener openai ({upstream}) answered every request of the calm scenario no-chaos "
        f"(1) with an error, {said}"
    ), last
    assert "sk-test" not in out.stderr and "Traceback" not in out.stderr
    stopped_at_calm(tmp_path)


@pytest.mark.parametrize(
    ("statuses", "warned"), [([429, 200], False), ([500, 200], True)], ids=["429-retried", "500-retried"]
)
def test_an_error_the_sdk_retried_is_a_warning_unless_it_was_a_429(
    tmp_path: Path, statuses: list[int], warned: bool
) -> None:
    with readme_world(tmp_path, Script(statuses)) as (config, upstream):
        result = run(config)
    calm = next(e for e in result.episodes if e.scenario == "no-chaos")
    assert [entry["status"] for entry in calm.journal] == statuses, "the SDK did not retry as the test expects"
    assert calm.answer is not None and "Sorry" not in calm.answer, calm.answer
    lines = [w for w in result.warnings if "the upstream of listener" in w]
    if not warned:
        assert lines == []
        return
    assert lines == [
        f"the upstream of listener openai ({upstream}) answered 1 of 2 requests of the calm scenario "
        'no-chaos with an error, HTTP 500: {"error": {"message": "The server had an error while processing your '
        'request. Sorry about that!", "type": "server_error", "param": null, "code": null}}; verdicts may show that '
        "broken upstream, not the agent"
    ]


def test_a_fault_with_nothing_to_act_on_but_the_upstreams_errors_says_so_not_check_targets(tmp_path: Path) -> None:
    """The base URL without /v1 under a matrix with no calm scenario (nothing stops the run): the stream and the
    answer the faults needed were the upstream's 404s, which no target or fault setting would change."""
    matrix = [
        {"name": "llm-stream-cut", "llm_faults": [{"mode": "stream_cut", "after_events": 4}]},
        {"name": "llm-truncated", "llm_faults": [{"mode": "truncated_response", "max_tokens": 5}]},
    ]
    with readme_world(tmp_path, base_path="") as (config, _):
        data = yaml.safe_load(config.read_text())
        data["chaos_matrix"] = matrix
        says_so = {"id": "says-so", "type": "regex", "pattern": "Sorry", "when": "llm_faults_active"}
        data["contract"]["invariants"].append(says_so)
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        result = run(config)
    notes = [w for w in result.warnings if w.startswith("scenario llm-")]
    assert notes == [
        "scenario llm-stream-cut injected nothing in 1 episode(s) (decided 1, applied 0): the upstream answered 404 "
        "(an error), not a stream stream_cut could act on",
        "scenario llm-truncated injected nothing in 1 episode(s) (decided 1, applied 0): the upstream answered 404 "
        "(an error), not an answer truncated_response could rewrite",
    ], result.warnings
    cell = next(c for c in result.cells if c.scenario == "llm-stream-cut" and c.invariant == "says-so")
    assert cell.outcome == "error" and cell.reason == (
        "scenario llm-stream-cut injected nothing (decided 1 time(s), applied 0: the upstream answered 404 (an "
        "error), not a stream stream_cut could act on); llm_faults_active not met"
    ), cell.reason
