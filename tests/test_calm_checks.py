"""flakeproxy.judging.calm_checks: which journal entries are an upstream that never answered, what the calm
scenario says about the listeners and about the agent (it answered none: exit 3), and when an unread answer is a
config problem (ERROR) or the agent (FAIL)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from flakeproxy import parse_config
from flakeproxy.errors import InfrastructureError
from flakeproxy.judging.calm_checks import check_calm, upstream_failure, upstream_trouble
from flakeproxy.judging.cells import Context, judge_cell
from flakeproxy.judging.upstream_status import EXCERPT_CHARS, answered_error, excerpt
from flakeproxy.results import Episode, TurnRecord, UnreadAnswer
from tests.config.base_config import BASE

CONFIG = yaml.safe_load(BASE)
CONFIG["contract"]["invariants"] = [{"id": "answers", "type": "completes", "severity": "critical"}]
config = parse_config(yaml.safe_dump(CONFIG), "test.yaml")
REFUSED = "[Errno 111] Connect call failed ('127.0.0.1', 9101)"
#: a fault decided on a request (the journal's JSON of it), not applied
FAULT = {
    "scenario": "s", "section": "tool_faults", "index": 0, "kind": "schema_drift", "applied": False, "effect": None,
    "not_applied_reason": "the fault changed nothing", "settled": True,
}  # fmt: skip


def entry(listener: str = "llm", status: int | None = 200, error: str | None = None, **rest: Any) -> dict[str, Any]:
    """A journal entry as the proxy writes it (the fields these checks read)."""
    return {"seq": 1, "listener": listener, "upstream_called": True, "status": status, "error": error, **rest}


@pytest.mark.parametrize(
    ("journaled", "failure"),
    [
        (entry(status=502, error=REFUSED), REFUSED),  # refused, DNS, TLS: mitmproxy's 502
        (entry(status=504, error="upstream sent no response within 100 ms"), "upstream sent no response within 100 ms"),
        (entry(status=502, error="upstream connect timed out after 50 ms"), "upstream connect timed out after 50 ms"),
        (entry(status=502), None),  # the upstream's own 502: it answered
        (entry(status=200, error="Client disconnected."), None),  # openai-python closing after [DONE]
        (entry(status=None, error="Client disconnected."), None),  # the agent gave up first
        (entry(status=200, error="upstream body stalled: no bytes for 100 ms"), None),  # it answered, then stalled
        (entry(status=503, upstream_called=False, error="connection closed by fault"), None),  # a fault's reply
    ],
)
def test_an_upstream_failure_is_a_request_its_upstream_never_answered(
    journaled: dict[str, Any], failure: str | None
) -> None:
    assert upstream_failure(journaled) == failure


def calm(n: int, journal: list[dict[str, Any]], answer: str | None = "ok", **rest: Any) -> Episode:
    return Episode(
        id=f"e{n}", scenario="no-chaos", prompt="What is AAPL trading at?", prompt_index=0, replica=n - 1,
        label=f"l{n}", answer=answer, journal=journal, **rest,
    )  # fmt: skip


def test_some_failed_calm_requests_are_a_warning_and_all_of_them_stop_the_run() -> None:
    some = [calm(1, [entry(status=502, error=REFUSED), entry()]), calm(2, [entry("tools")])]
    assert [t.line() for t in upstream_trouble(config, "no-chaos", some)] == [
        "warning: the upstream of listener llm (http://127.0.0.1:9101) failed 1 of 2 requests of the calm scenario "
        f"no-chaos: {REFUSED}; verdicts may show that broken upstream, not the agent"
    ]
    assert check_calm(config, "no-chaos", some) == [upstream_trouble(config, "no-chaos", some)[0].line()]
    every = [calm(1, [entry(status=502, error=REFUSED), entry("tools")]), calm(2, [entry(status=502, error=REFUSED)])]
    with pytest.raises(InfrastructureError, match=r"^the upstream of listener llm \(http://127.0.0.1:9101\) failed "
                       r"every request of the calm scenario no-chaos \(2\): \[Errno 111\]"):  # fmt: skip
        check_calm(config, "no-chaos", every)
    # no request: nothing to say about the listener, but that nothing went through the proxy at all
    [said] = check_calm(config, "no-chaos", [calm(1, [])])
    assert said.startswith("warning: not one request of the calm scenario no-chaos went through the proxy (1 ")


UNREAD = UnreadAnswer(at="$", holds="object", keys=["reply"])
PATH_MISS = "response_path $.reply not found (at 'reply') in: {...}"


def completes(scenario: str, episodes: list[Episode]) -> tuple[str, str]:
    assert config.contract is not None
    mine = [e for e in episodes if e.scenario == scenario]
    cell = judge_cell(
        config.contract.invariants[0], config.scenario(scenario), mine, Context(config, {e.id: e for e in episodes})
    )
    return cell.outcome, cell.reason  # fmt: skip


def test_an_answer_read_in_no_calm_episode_is_error_and_one_read_there_fails_under_chaos() -> None:
    chaos = calm(3, [], None, error=PATH_MISS, unread=UNREAD).model_copy(update={"scenario": "tool-down"})
    unread = [calm(1, [], None, error=PATH_MISS, unread=UNREAD), calm(2, [], None, error=PATH_MISS, unread=UNREAD)]
    why = "agent.response_path $.reply matched nothing in the calm answers; the bodies have keys: reply"
    outcome, reason = completes("no-chaos", [*unread, chaos])
    assert outcome == "error" and reason.endswith(f"the agent answered, but its answer could not be read: {why}")
    assert completes("tool-down", [*unread, chaos])[0] == "error"
    with pytest.raises(InfrastructureError, match=f"the first: {re.escape(PATH_MISS)}; .*: {re.escape(why)}; fix "
                       "agent.response_path$"):  # fmt: skip
        check_calm(config, "no-chaos", unread)  # the agent answered, but nothing could be read: see below
    read = [calm(1, [], "AAPL is $1, source: X"), unread[1]]  # the path found an answer once: not the config
    assert completes("tool-down", [*read, chaos]) == ("fail", f"the agent did not answer: {PATH_MISS}")
    assert check_calm(config, "no-chaos", read) == []


@pytest.mark.parametrize(
    ("journaled", "status"),
    [
        (entry(status=401, response_body='{"error": "bad key"}'), 401),
        (entry(status=502), 502),  # the upstream's own 502
        (entry(status=429, error="Client disconnected."), 429),  # it answered, then the agent left
        (entry(status=200), None),
        (entry(status=None, error="Client disconnected."), None),
        (entry(status=503, upstream_called=False), None),  # the proxy's reply, not the upstream's
        (entry(status=404, fault={**FAULT, "applied": True, "effect": "response body rewritten"}), None),
        (entry(status=404, fault=FAULT), 404),  # a fault decided, but it changed nothing
    ],
)
def test_an_answered_error_is_the_upstreams_own_status_of_400_or_more(
    journaled: dict[str, Any], status: int | None
) -> None:
    assert answered_error(journaled) == status


def answered(listener: str, *statuses: int) -> list[Episode]:
    """One calm episode per status, each one request on `listener` answered with it (and a body saying so)."""
    bodies = {200: '{"ok": true}'}
    return [
        calm(n, [entry(listener, status, response_body=bodies.get(status, f'{{"error": "status {status}"}}'))])
        for n, status in enumerate(statuses, 1)
    ]


LLM_DOWN = "the upstream of listener llm (http://127.0.0.1:9101) answered every request of the calm scenario no-chaos"
TOOLS = "the upstream of listener tools (http://127.0.0.1:9102)"


@pytest.mark.parametrize(
    ("episodes", "stops", "lines"),
    [
        # an LLM listener: every status >= 400 stops the run, with the fix for each kind of status
        (
            answered("llm", 401, 401),
            f'{LLM_DOWN} (2) with an error, HTTP 401: {{"error": "status 401"}}; nothing the agent does through it '
            "can be judged: 401: check the agent's API key for it (missing, wrong or expired)",
            [],
        ),
        (
            answered("llm", 404),
            f'{LLM_DOWN} (1) with an error, HTTP 404: {{"error": "status 404"}}; nothing the agent does through it '
            "can be judged: 404: check the agent's base URL for it (a wrong path, e.g. a missing /v1) and the model "
            "it names",
            [],
        ),
        (
            answered("llm", 429, 503, 429),
            f'{LLM_DOWN} (3) with an error, HTTP 429 (2), 503 (1): {{"error": "status 429"}}; nothing the agent does '
            "through it can be judged: 429: its quota or rate limit was used up before the run (check the "
            "account's limits and billing, or wait); 503: the upstream itself is failing (run again once it "
            "answers)",
            [],
        ),
        (
            answered("llm", 400, 403),
            f'{LLM_DOWN} (2) with an error, HTTP 400 (1), 403 (1): {{"error": "status 400"}}; nothing the agent '
            "does through it can be judged: 400: the upstream refused what the agent sent (read its error); 403: "
            "check the agent's API key for it (missing, wrong or expired)",
            [],
        ),
        # some, not all: a warning, but not for a 429 (the SDKs retry it)
        (
            answered("llm", 500, 200, 429, 200),
            None,
            [
                "warning: the upstream of listener llm (http://127.0.0.1:9101) answered 1 of 4 requests of the calm "
                'scenario no-chaos with an error, HTTP 500: {"error": "status 500"}; verdicts may show that broken '
                "upstream, not the agent"
            ],
        ),
        (answered("llm", 429, 200, 429, 200), None, []),
        # a tool's listener: 401, 403, 5xx stop it; another 4xx may be meant, so only a warning; some: nothing
        (
            answered("tools", 503, 403),
            f"{TOOLS} answered every request of the calm scenario no-chaos (2) with an error, HTTP 503 (1), 403 (1): "
            '{"error": "status 503"}; nothing the agent does through it can be judged: 503: the upstream itself is '
            "failing (run again once it answers); 403: check the agent's API key for it (missing, wrong or expired)",
            [],
        ),
        (
            answered("tools", 404, 422),
            None,
            [
                f"warning: {TOOLS} answered every request of the calm scenario no-chaos (2) with an error, HTTP 404 "
                '(1), 422 (1): {"error": "status 404"}; unless the agent is meant to get that, verdicts show that '
                "upstream, not the agent: 404: check the agent's URL for it (its path); 422: the upstream refused "
                "what the agent sent (read its error)"
            ],
        ),
        (
            answered("tools", 404, 503),
            None,
            [
                f"warning: {TOOLS} answered every request of the calm scenario no-chaos (2) with an error, HTTP 404 "
                '(1), 503 (1): {"error": "status 404"}; unless the agent is meant to get that, verdicts show that '
                "upstream, not the agent: 404: check the agent's URL for it (its path); 503: the upstream itself is "
                "failing (run again once it answers)"
            ],
        ),
        (answered("tools", 503, 200), None, []),
        (answered("tools", 200, 200) + answered("llm", 200), None, []),  # a healthy world: nothing to say
    ],
    ids=[
        "llm-401", "llm-404", "llm-429-503", "llm-400-403", "llm-some-500", "llm-429-retried",
        "tool-5xx-403", "tool-404-422", "tool-404-503", "tool-some-503", "healthy",
    ],
)  # fmt: skip
def test_an_upstream_answering_every_calm_request_with_an_error_is_a_broken_world(
    episodes: list[Episode], stops: str | None, lines: list[str]
) -> None:
    if stops is not None:
        with pytest.raises(InfrastructureError) as raised:
            check_calm(config, "no-chaos", episodes)
        assert str(raised.value) == stops
        return
    assert check_calm(config, "no-chaos", episodes) == lines


def test_refused_and_error_statuses_together_stop_the_run_with_both() -> None:
    episodes = [calm(1, [entry(status=502, error=REFUSED)]), *answered("llm", 401)]
    with pytest.raises(InfrastructureError) as raised:
        check_calm(config, "no-chaos", episodes)
    assert str(raised.value) == (
        f'{LLM_DOWN} (2) with an error, HTTP 401: {{"error": "status 401"}}; 1 got no answer: {REFUSED}; nothing '
        "the agent does through it can be judged: 401: check the agent's API key for it (missing, wrong or "
        "expired); start that upstream"
    )


def test_the_error_body_is_quoted_on_one_line_and_bounded() -> None:
    long = entry(status=401, response_body='{\n  "error": "' + "x" * 400 + '"\n}')
    assert excerpt(long) == '{ "error": "' + "x" * (EXCERPT_CHARS - 12) + "..."
    assert excerpt(entry(status=503, response_body="")) == "(empty body)"


TIMED_OUT = "agent timed out after 30000 ms"
NOT_SENT = f"not sent: turn 1 got no reply ({TIMED_OUT}), so the conversation stopped there"


def conversation(n: int, *turns: tuple[str | None, str | None, bool]) -> Episode:
    """A calm conversation whose turns got (answer, error, sent); its answer and error are the last turn's."""
    record = [TurnRecord(turn=i, prompt=f"q{i}", answer=a, error=e, sent=s) for i, (a, e, s) in enumerate(turns, 1)]
    return calm(n, [], record[-1].answer, error=record[-1].error, transcript=record, turns=[t.prompt for t in record])


SILENT = "the agent answered none of the {} of the calm scenario no-chaos, each an agent error, the first: {}; "
SILENT += "nothing it does can be judged against a world in which it never worked: {}"
SLOW = "raise agent.timeout_ms (now 30000) if the agent is only slow, else see in the agent's logs why it hangs"
LOGS = "see the agent's logs for why it fails when nothing is broken"


@pytest.mark.parametrize(
    ("episodes", "stops"),
    [
        ([calm(1, [], None, error=TIMED_OUT), calm(2, [], None, error=TIMED_OUT)],
         SILENT.format("2 episodes", TIMED_OUT, SLOW)),
        # a conversation: its own error is turn 1's, not the "not sent" of the turns after it
        ([conversation(1, (None, TIMED_OUT, True), (None, NOT_SENT, False))],
         SILENT.format("one episode", TIMED_OUT, SLOW)),
        ([calm(1, [], None, error='agent answered HTTP 500: {"detail": "boom"}'),
          calm(2, [], None, error="agent closed the connection mid-request: Server disconnected")],
         SILENT.format("2 episodes", 'agent answered HTTP 500: {"detail": "boom"}', LOGS)),
        # some answered: nothing new (a turn answered counts, the conversation broke later)
        ([calm(1, [], None, error=TIMED_OUT), calm(2, [], "AAPL is $1, source: X")], None),
        ([conversation(1, ("Hi, source: X", None, True), (None, TIMED_OUT, True))], None),
        ([calm(1, [entry()], "")], None),  # an empty answer is an answer (output_not_empty judges it)
        ([], None),
    ],
    ids=["all-timed-out", "conversation", "agent-5xx", "some-answered", "a-turn-answered", "empty-answer", "none"],
)  # fmt: skip
def test_an_agent_that_answered_no_calm_episode_stops_the_run(episodes: list[Episode], stops: str | None) -> None:
    """A trial's agent hung on every calm episode: the whole matrix still ran (12 episodes x the timeout) and
    printed 147 ERROR rows, as if anything could be judged of an agent that never worked in a calm world."""
    chaos = calm(9, [], None, error=TIMED_OUT).model_copy(update={"scenario": "tool-down"})  # not calm: not counted
    if stops is None:
        assert check_calm(config, "no-chaos", [*episodes, chaos]) == []
        return
    with pytest.raises(InfrastructureError) as raised:
        check_calm(config, "no-chaos", [*episodes, chaos])
    assert str(raised.value) == stops


def test_an_upstream_down_is_named_before_an_agent_that_answered_nothing() -> None:
    """The agent failed because its LLM was unreachable: the listener's line says that better."""
    episodes = [calm(1, [entry(status=502, error=REFUSED)], None, error='agent answered HTTP 502: {"error": "llm"}')]
    with pytest.raises(InfrastructureError, match=r"^the upstream of listener llm .* failed every request"):
        check_calm(config, "no-chaos", episodes)
