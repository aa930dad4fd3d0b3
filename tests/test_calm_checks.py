"""flakeproxy.judging.calm_checks: which journal entries are an upstream that never answered, what the calm
scenario says about the listeners, and when an unread answer is a config problem (ERROR) or the agent (FAIL)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from flakeproxy import parse_config
from flakeproxy.errors import InfrastructureError
from flakeproxy.judging.calm_checks import check_calm, upstream_failure, upstream_trouble
from flakeproxy.judging.cells import Context, judge_cell
from flakeproxy.results import Episode, UnreadAnswer
from tests.config.base_config import BASE

CONFIG = yaml.safe_load(BASE)
CONFIG["contract"]["invariants"] = [{"id": "answers", "type": "completes", "severity": "critical"}]
config = parse_config(yaml.safe_dump(CONFIG), "test.yaml")
REFUSED = "[Errno 111] Connect call failed ('127.0.0.1', 9101)"


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
    assert check_calm(config, "no-chaos", [calm(1, [])]) == []  # no request: nothing to say about the listener


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
    assert check_calm(config, "no-chaos", unread) == [
        f"warning: {why}; the checks of the answers it could not read are ERROR"
    ]
    read = [calm(1, [], "AAPL is $1, source: X"), unread[1]]  # the path found an answer once: not the config
    assert completes("tool-down", [*read, chaos]) == ("fail", f"the agent did not answer: {PATH_MISS}")
    assert check_calm(config, "no-chaos", read) == []
