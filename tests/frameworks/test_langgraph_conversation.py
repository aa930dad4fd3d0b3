"""A LangGraph agent with a checkpointer keyed by thread id, behind the real proxy: flakeproxy's {session} in
its endpoint gives each episode a thread of its own, so a 3-turn conversation whose turn 2 depends on turn 1
passes; the same agent asked without the thread (a new one per request) fails it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner.test_conversations import chat_world
from tests.support.chat import TURNS

pytest.importorskip("langgraph", reason="LangGraph installs with the dev tools on Python 3.13+ only")
pytest.importorskip("langchain_openai", reason="langchain-openai installs with the dev tools on Python 3.13+ only")

from tests.frameworks.langgraph_chat_agent import chat_routes
from tests.support.loops import running_app


def _run(tmp_path: Path, endpoint: str) -> tuple[list[str], list[str | None], dict[str, str]]:
    """(the thread ids the agent used, the answers turn by turn, outcome per invariant) of one calm run."""
    with chat_world(tmp_path, {"message": "{prompt}"}) as w:
        threads: list[str] = []
        with running_app(chat_routes(f"http://{w.llm_listener}", threads), "langgraph-chat") as agent:
            w.data["agent"] |= {"endpoint": agent + endpoint, "reset_endpoint": f"{agent}/reset"}
            result = w.run()
    [episode] = result.episodes
    assert episode.transcript is not None and len(episode.transcript) == 3
    assert [t.prompt for t in episode.transcript] == TURNS
    return threads, [t.answer for t in episode.transcript], {c.invariant: c.outcome for c in result.cells}


@pytest.mark.timeout(120)
def test_a_thread_per_session_carries_the_conversation(tmp_path: Path) -> None:
    threads, answers, outcomes = _run(tmp_path, "/threads/{session}/chat")
    assert len(threads) == 3 and len(set(threads)) == 1 and threads[0].startswith("fp-")  # one thread, 3 turns
    assert answers == ["AAPL trades at $189.50.", "AAPL is at 174.34 EUR.", "You asked about AAPL."]
    assert set(outcomes.values()) == {"pass"}, outcomes


@pytest.mark.timeout(120)
def test_without_the_thread_the_same_agent_fails_it(tmp_path: Path) -> None:
    threads, answers, outcomes = _run(tmp_path, "/chat")
    assert len(set(threads)) == 3  # a new thread per request: the history is gone
    assert answers == ["AAPL trades at $189.50.", "Which stock do you mean?", "Which stock do you mean?"]
    assert outcomes["in-euros"] == outcomes["remembers"] == "fail"
