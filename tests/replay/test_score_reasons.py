"""Why a replayed session ERRORs: a request no recording matched is blamed on the agent only when nothing else
can explain it (the replay could not serve an exchange as first recorded, or layered faults applied)."""

from __future__ import annotations

from flakeproxy import parse_config
from flakeproxy.config.replays import ReplayOptions, Session
from flakeproxy.replay.score import Replayed, judge_session
from flakeproxy.results import Episode
from tests.config.base_config import BASE

config = parse_config(BASE, "test.yaml")
SESSION = Session(id="s", input="What is AAPL trading at?")
EPISODE = Episode(id="e1", scenario=None, prompt=SESSION.input, prompt_index=0, label="replay | s", answer="x")
UNMATCHED = ["POST http://llm/v1/chat/completions (target llm)"]


def reason(replayed: Replayed) -> str:
    result = judge_session(config, SESSION, "config", EPISODE, replayed, ReplayOptions())
    assert result.outcome == "error"
    return result.reason


def test_an_unmatched_request_with_nothing_else_to_explain_it_blames_the_recording() -> None:
    assert reason(Replayed(served=1, unmatched=UNMATCHED)).endswith("no longer describes the agent; record it again")


def test_an_exchange_the_replay_could_not_reproduce_is_named_instead_of_the_agent() -> None:
    inexact = ["GET http://tools/v1/quotes (its response body was over the journal's 64 KiB cap)"]
    said = reason(Replayed(served=1, unmatched=UNMATCHED, inexact=inexact))
    assert f"could not serve {inexact[0]} as the agent first got it" in said and "record it again" not in said


def test_a_session_whose_faults_were_applied_in_the_agents_process_says_it_cannot_replay() -> None:
    """A trial: a python agent's tool-fault session said 'faults applied on the wire' and, replayed, 'record it
    again', which can never help: the wrapped tool's fault is not on the wire, and the replay does not repeat it."""
    from flakeproxy.replay.export import fault_notes

    fault = {"scenario": "quote-tool-down", "section": "tool_faults", "index": 0, "kind": "error", "applied": True,
             "effect": "raised", "not_applied_reason": None, "settled": True}  # fmt: skip
    wire = {**fault, "section": "llm_faults", "kind": "rate_limit", "effect": "replied 429"}
    recorded = EPISODE.model_copy(
        update={
            "scenario": "quote-tool-down",
            "journal": [
                {"url": "python://get_quote", "method": "CALL", "targets": ["get_quote"], "fault": fault},
                {"url": "http://llm/v1/chat/completions", "method": "POST", "targets": ["llm"], "fault": wire},
            ],
        }
    )
    notes = fault_notes(recorded)
    assert notes == [
        "recorded under scenario quote-tool-down; faults applied on the wire: llm_faults[0] rate_limit",
        "recorded under scenario quote-tool-down; faults applied in the agent's process (its wrapped tools), which "
        "a replay does not repeat: tool_faults[0] error",
    ]
    session = SESSION.model_copy(update={"scenario": "quote-tool-down", "notes": notes})
    result = judge_session(config, session, "config", EPISODE, Replayed(served=1, unmatched=UNMATCHED), ReplayOptions())
    assert result.outcome == "error" and "record it again" not in result.reason
    assert "applied in its process, not on the wire: the replay does not repeat them" in result.reason
