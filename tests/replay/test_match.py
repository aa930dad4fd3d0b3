"""Matching a live request to a recording (pure): strict, args, order, tool_responses in order."""

from __future__ import annotations

import json

import pytest

from flakeproxy.config.replays import Exchange, ReplayOptions, Session, ToolResponse
from flakeproxy.proxycore.redact import Redactor
from flakeproxy.replay.build import digest
from flakeproxy.replay.match import Matcher

URL = "http://up:9000/v1/search"


def exchange(body: dict[str, object], answer: str, url: str = URL, target: str | None = "search") -> Exchange:
    text = json.dumps(body)
    return Exchange(
        target=target, listener="tools", method="POST", url=url, request_digest=digest(text),
        request_body=text, status=200, response_body=answer,
    )  # fmt: skip


def ask(
    matcher: Matcher, body: dict[str, object], url: str = URL, targets: tuple[str, ...] = ("search",)
) -> str | None:
    found = matcher.match(
        "tools", targets, "POST", url, [("content-type", "application/json")], json.dumps(body).encode()
    )
    return None if found is None else found.response_body


SESSION = Session(
    id="s",
    input="q",
    exchanges=[exchange({"q": "a", "ts": 1}, "A"), exchange({"q": "b", "ts": 1}, "B")],
)


@pytest.mark.parametrize(
    ("mode", "asked", "wanted"),
    [
        ("strict", [{"q": "b", "ts": 1}, {"q": "a", "ts": 1}], ["B", "A"]),
        ("strict", [{"q": "a", "ts": 2}], [None]),  # another body digest
        ("strict", [{"q": "a", "ts": 1}, {"q": "a", "ts": 1}], ["A", None]),  # each exchange served once
        ("args", [{"q": "b", "ts": 99}, {"q": "a", "ts": 98}], ["B", "A"]),  # ts ignored
        ("args", [{"q": "c", "ts": 1}], [None]),
        ("order", [{"q": "zzz"}, {"q": "yyy"}, {"q": "x"}], ["A", "B", None]),
    ],
)
def test_modes(mode: str, asked: list[dict[str, object]], wanted: list[str | None]) -> None:
    options = ReplayOptions.model_validate({"match": mode, "ignore_fields": ["ts"]})
    matcher = Matcher(SESSION, options, Redactor())
    assert [ask(matcher, body) for body in asked] == wanted


def test_strict_and_args_compare_path_and_query_not_the_host() -> None:
    matcher = Matcher(SESSION, ReplayOptions(), Redactor())
    assert ask(matcher, {"q": "a", "ts": 1}, url="http://elsewhere:1/v1/search") == "A"
    assert ask(matcher, {"q": "b", "ts": 1}, url="http://up:9000/v1/search?page=2") is None


def test_tool_responses_are_served_in_order_for_their_tool() -> None:
    session = Session(
        id="anchor",
        input="q",
        tool_responses=[
            ToolResponse(tool="search", response={"hits": 1}),
            ToolResponse(tool="other", response="plain", status=503),
            ToolResponse(tool="search", response={"hits": 2}, latency_ms=30),
        ],
    )
    matcher = Matcher(session, ReplayOptions(), Redactor())
    first, second = (
        matcher.match("tools", ("search",), "GET", URL, [], b""),
        matcher.match("tools", ("search",), "GET", URL, [], b""),
    )
    other = matcher.match("tools", ("other",), "GET", URL, [], b"")
    assert first is not None and second is not None and other is not None
    assert (json.loads(first.response_body), json.loads(second.response_body)) == ({"hits": 1}, {"hits": 2})
    assert (second.latency_ms, other.status, other.response_body) == (30, 503, "plain")
    assert matcher.match("tools", ("search",), "GET", URL, [], b"") is None and matcher.unused == 0


def test_a_secret_in_the_live_request_is_redacted_before_the_digest() -> None:
    recorded = exchange({"q": "a", "api_key": "[redacted]"}, "A", url=URL + "?api_key=[redacted]")
    matcher = Matcher(Session(id="s", input="q", exchanges=[recorded]), ReplayOptions(), Redactor())
    assert ask(matcher, {"q": "a", "api_key": "sk-real-1234567"}, url=URL + "?api_key=sk-real-1234567") == "A"
