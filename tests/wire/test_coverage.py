from __future__ import annotations

import pytest

from flakeproxy.wire.coverage import Coverage, WatchedStream, blames_upstream
from flakeproxy.wire.json_edit import same_content
from flakeproxy.wire.providers import OpenAIChat
from flakeproxy.wire.sse import format_event
from flakeproxy.wire.streams import MapEvents, MidStreamError, StreamCut
from flakeproxy.wire.text import drift


def chat(*words: str) -> bytes:
    events = [format_event({"choices": [{"delta": {"content": w}, "finish_reason": None}]}) for w in words]
    return b"".join(events) + format_event("[DONE]")


def watch(transform: object, body: bytes, chunk: int) -> tuple[Coverage, bytes]:
    """Feed body in pieces of `chunk` bytes (events split across pieces), then end it."""
    coverage = Coverage("k")
    stream = WatchedStream(transform, coverage)  # type: ignore[arg-type]
    out = b"".join(stream.feed(body[i : i + chunk]) for i in range(0, len(body), chunk)) + stream.finish()
    coverage.finish()
    return coverage, out


@pytest.mark.parametrize(
    ("before", "after", "same"),
    [(b"abc", b"abc", True), (b'{"a": 1}', b'{"a":1}', True), (b'{"a": 1}', b'{"a": 2}', False), (b"x", b"y", False)],
)
def test_same_content(before: bytes, after: bytes, same: bool) -> None:
    assert same_content(before, after) is same


@pytest.mark.parametrize(
    ("note", "effect"),
    [
        (lambda c: c.delayed(250), "delayed 250 ms"),
        (lambda c: c.replied(503), "replied 503"),
        (lambda c: c.closed(), "connection closed"),
        (lambda c: c.rewrote("response", b"12345", b"12"), "response body rewritten (5 -> 2 bytes)"),
        (lambda c: c.rewrote("request", b"{}", b'{"a": 1}'), "request body rewritten (2 -> 8 bytes)"),
    ],
)
def test_what_applies(note: object, effect: str) -> None:
    coverage = Coverage("k")
    note(coverage)  # type: ignore[operator]
    assert coverage.record() == {"applied": True, "effect": effect, "not_applied_reason": None, "settled": True}


@pytest.mark.parametrize(
    ("note", "reason"),
    [
        (lambda c: c.delayed(0), "the fault changed nothing (k: nothing to do on this call)"),
        (lambda c: c.rewrote("response", b'{"a": 1}', b'{"a":1}'), "the fault changed nothing in the answer (k: "),
        (
            lambda c: c.not_streamed(),
            "the agent asked for no stream: the answer came whole, and k acts on streamed answers only",
        ),
        (lambda c: c.upstream_failed("refused"), "the upstream failed before the fault could apply: refused"),
    ],
)
def test_what_does_not_apply(note: object, reason: str) -> None:
    coverage = Coverage("k")
    note(coverage)  # type: ignore[operator]
    coverage.finish()
    record = coverage.record()
    assert record["applied"] is False and record["effect"] is None
    assert record["not_applied_reason"].startswith(reason)


@pytest.mark.parametrize(
    ("status", "note", "reason"),
    [
        (404, lambda c: c.not_streamed(), "the upstream answered 404 (an error), not a stream k could act on"),
        (
            401,
            lambda c: c.rewrote("response", b'{"error": {}}', b'{"error": {}}'),
            "the upstream answered 401 (an error), not an answer k could rewrite",
        ),
        (
            200,
            lambda c: c.not_streamed(),
            "the agent asked for no stream: the answer came whole, and k acts on streamed answers only",
        ),
        (503, lambda c: c.rewrote("request", b"{}", b"{}"), "the fault changed nothing in the request (k: "),
    ],
)
def test_an_error_the_upstream_answered_is_why_a_fault_had_nothing_to_act_on(
    status: int, note: object, reason: str
) -> None:
    """Not "needs stream: true" or "nothing to rewrite", which send the user to the config: the upstream's error."""
    coverage = Coverage("k")
    coverage.answered(status)
    note(coverage)  # type: ignore[operator]
    coverage.finish()
    assert coverage.record()["not_applied_reason"].startswith(reason)
    assert blames_upstream(coverage.record()["not_applied_reason"]) is (status != 200 and "request" not in reason)


def test_an_upstream_failure_after_a_delay_leaves_it_applied() -> None:
    coverage = Coverage("slow")
    coverage.delayed(100)
    coverage.upstream_failed("reset")
    assert coverage.record()["applied"] is True and coverage.record()["not_applied_reason"] is None


def test_an_open_stream_not_cut_yet_is_unsettled_and_says_so() -> None:
    coverage = Coverage("stream_cut")
    WatchedStream(StreamCut(5), coverage).feed(chat("a "))
    record = coverage.record()
    assert (record["applied"], record["effect"], record["settled"]) == (False, None, False)
    assert record["not_applied_reason"].startswith("the exchange was still open when the episode ended")


@pytest.mark.parametrize("terminal", [None, OpenAIChat().is_terminal], ids=["any", "openai"])
def test_a_cut_is_applied_the_moment_the_agents_stream_ends_not_when_the_upstream_sends_more(terminal: object) -> None:
    """The cut lands on an event boundary with the upstream still open: nothing more has arrived, and none may
    before the episode is read (a real provider's next event comes tens of ms later)."""
    coverage = Coverage("stream_cut")
    stream = WatchedStream(StreamCut(2, terminal), coverage)  # type: ignore[arg-type]
    two = len(chat("a ", "b ")) - len(format_event("[DONE]"))
    out = stream.feed(chat("a ", "b ", "c")[:two])
    assert stream.done and out
    record = coverage.record()
    assert (record["applied"], record["effect"], record["settled"]) == (True, "stream ended after 2 events", True)


@pytest.mark.parametrize("chunk", [1, 7, 10_000])
def test_a_cut_is_applied_and_names_the_events(chunk: int) -> None:
    coverage, out = watch(StreamCut(2), chat("a ", "b ", "c"), chunk)
    assert coverage.record()["effect"] == "stream ended after 2 events"
    assert out == chat("a ", "b ")[: -len(format_event("[DONE]"))]


def test_a_cut_at_the_providers_own_last_event_cut_nothing() -> None:
    body = chat("a ", "b ")
    coverage, out = watch(StreamCut(3, OpenAIChat().is_terminal), body, 5)
    assert out == body
    assert coverage.record()["not_applied_reason"] == "the fault changed nothing in the answer (k: nothing to rewrite)"


@pytest.mark.parametrize("chunk", [3, 10_000])
def test_an_inserted_error_is_applied(chunk: int) -> None:
    err = OpenAIChat().stream_error("boom", "server_error")
    coverage, out = watch(MidStreamError(1, err), chat("a ", "b "), chunk)
    assert out.endswith(err)
    assert coverage.record()["effect"] == "stream rewritten, stream ended after 1 events"


@pytest.mark.parametrize(("drift_type", "applied"), [("json_field_rename", False), ("tone_shift", True)])
def test_a_map_that_changes_no_text_is_not_applied(drift_type: str, applied: bool) -> None:
    body = chat("Hello ", "world")
    coverage, out = watch(MapEvents(OpenAIChat(), drift(drift_type, "compress", 2.0), None), body, 9)
    assert coverage.record()["applied"] is applied and (out == body) is not applied
