"""The starter contract's `no-raw-provider-errors` catches an agent that shows a provider's error as it came: the
texts the official SDKs and the common HTTP clients make of flakeproxy's own error replies, served here by a real
server to real clients, and a refused connection; and it lets an agent's own words about a failure pass.

A new user's agent answered "Sorry, something went wrong: Error code: 503 - {'error': ...}" under llm-down and
passed it (none of the old five patterns occurred)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")

import aiohttp
import anthropic
import httpx
import openai
import requests
from aiohttp import web
from google import genai

from flakeproxy.config import load_config
from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.excludes_pattern import ExcludesPattern
from flakeproxy.judging.verdict import Observation
from flakeproxy.starter import Answers, write_starter
from flakeproxy.starter.contract import RAW_ERRORS
from flakeproxy.wire.gemini import Gemini
from flakeproxy.wire.provider_errors import anthropic_error, openai_error
from tests.support.loops import free_port, running_app

TRIAL_ANSWER = (
    "Sorry, something went wrong: Error code: 503 - {'error': {'message': 'The server is overloaded or not ready "
    "yet.', 'type': 'server_error', 'param': None, 'code': None}}"
)
#: What careful agents say instead (the starter's own test agents, the trial's tool-down answer, and the like).
OWN_WORDS = [
    "According to MeteoFake, it is 18°C and sunny in Paris.",
    "Sorry, I couldn't reach the weather service just now, so I can't tell you the weather in Paris.",
    "Sorry, my language model is not answering right now; please try again in a minute.",
    "The AI service is overloaded at the moment (rate limited). Please try again in a few seconds.",
    "I could not get a quote: the market data service is unavailable (error 503). Try again later.",
    "The request timed out and the server did not respond; I have no answer for you yet.",
    "Something went wrong on our side. Our servers are having trouble; we've been notified.",
    "Error: the upstream service failed. Code 503 means it is temporarily down.",
]


@pytest.fixture(scope="module")
def raw_errors(tmp_path_factory: pytest.TempPathFactory) -> Invariant:
    """The no-raw-provider-errors invariant of the config `flakeproxy init --yes` writes, as loaded."""
    path = tmp_path_factory.mktemp("init") / "flakeproxy.yaml"
    write_starter(Answers(), path)
    config = load_config(path)
    assert config.contract is not None
    return next(i for i in config.contract.invariants if i.id == "no-raw-provider-errors")


def judged(invariant: Invariant, answer: str) -> str:
    verdict = invariant.evaluate(Observation(prompt="What is the weather in Paris?", text=answer, latency_ms=10))
    return verdict.outcome


def _reply(status: int, body: Any, headers: dict[str, str]) -> web.Response:
    return web.Response(status=status, text=json.dumps(body), headers=headers, content_type="application/json")


def provider_routes(status: int) -> list[web.RouteDef]:
    """Each provider's API answering `status` with flakeproxy's error reply for it, as its faults send them."""

    async def chat(request: web.Request) -> web.Response:
        return _reply(status, *openai_error(status, None, {"retry-after": "1"}, "gpt-4o-mini"))

    async def messages(request: web.Request) -> web.Response:
        return _reply(status, *anthropic_error(status, None, {"retry-after": "1"}))

    async def gemini(request: web.Request) -> web.Response:
        made = Gemini().error(status, headers={"retry-after": "1"})
        return web.Response(status=made.status, body=made.body, headers=made.headers)

    return [
        web.post("/v1/chat/completions", chat),
        web.post("/v1/messages", messages),
        web.post("/{version}/models/{model}:generateContent", gemini),
    ]


def _sdk_errors(url: str) -> Iterator[Exception]:
    """What each official SDK raises for the reply (no retries: the first answer is the one shown)."""
    gemini = genai.Client(api_key="test", http_options=genai.types.HttpOptions(base_url=url))
    calls: list[tuple[type[Exception], Callable[[], Any]]] = [
        (
            openai.APIError,
            lambda: openai.OpenAI(base_url=f"{url}/v1", api_key="sk-test", max_retries=0).chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
            ),
        ),
        (
            anthropic.APIError,
            lambda: anthropic.Anthropic(base_url=url, api_key="sk-ant-test", max_retries=0).messages.create(
                model="claude-haiku-4-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            ),
        ),
        (genai.errors.APIError, lambda: gemini.models.generate_content(model="gemini-2.5-flash", contents="hi")),
    ]
    for error, call in calls:
        with pytest.raises(error) as raised:
            call()
        yield raised.value


def _client_errors(url: str) -> Iterator[Exception]:
    """What httpx, requests and aiohttp raise for an error status, when asked to (raise_for_status)."""
    with pytest.raises(httpx.HTTPStatusError) as by_httpx:
        httpx.post(f"{url}/v1/chat/completions").raise_for_status()
    with pytest.raises(requests.HTTPError) as by_requests:
        requests.post(f"{url}/v1/chat/completions", timeout=10).raise_for_status()
    yield by_httpx.value
    yield by_requests.value
    yield asyncio.run(_aiohttp_error(f"{url}/v1/chat/completions"))


async def _aiohttp_error(url: str) -> Exception:
    async with aiohttp.ClientSession() as session, session.post(url) as reply:
        try:
            reply.raise_for_status()
        except aiohttp.ClientResponseError as e:
            return e
    raise AssertionError(f"{url} did not answer an error")


@pytest.mark.parametrize("status", [429, 500, 503])
def test_the_sdks_and_clients_texts_of_a_provider_error_fail_it(raw_errors: Invariant, status: int) -> None:
    with running_app(provider_routes(status), "providers") as url:
        errors = [*_sdk_errors(url), *_client_errors(url)]
    shown = [f"Sorry, something went wrong: {e}" for e in errors]
    assert [a for a in shown if judged(raw_errors, a) != "fail"] == [] and len(shown) == 6


def test_a_refused_connection_shown_as_it_came_fails_it(raw_errors: Invariant) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    shown = []
    with pytest.raises(httpx.ConnectError) as by_httpx:
        httpx.get(closed)
    with pytest.raises(requests.ConnectionError) as by_requests:
        requests.get(closed, timeout=10)
    shown += [str(by_httpx.value), str(by_requests.value), asyncio.run(_refused(closed))]
    assert [text for text in shown if judged(raw_errors, f"Error: {text}") != "fail"] == []


async def _refused(url: str) -> str:
    try:
        async with aiohttp.ClientSession() as session, session.get(url):
            pass
    except aiohttp.ClientConnectorError as e:
        return str(e)
    raise AssertionError(f"{url} answered")


def test_the_trial_answer_fails_and_an_agents_own_words_pass(raw_errors: Invariant) -> None:
    assert judged(raw_errors, TRIAL_ANSWER) == "fail"
    assert [answer for answer in OWN_WORDS if judged(raw_errors, answer) != "pass"] == []


def test_the_patterns_are_written_as_the_code_has_them(raw_errors: Invariant) -> None:
    """YAML single quotes keep a backslash as it is: the loaded regexes are the code's, comments dropped."""
    assert isinstance(raw_errors, ExcludesPattern)
    assert raw_errors.patterns == [pattern for pattern, _ in RAW_ERRORS]


def test_the_starter_says_completes_passes_a_cut_answer_and_a_cut_streams_fragment_too(tmp_path: Path) -> None:
    """Its comment warned that a truncated_response answer passes `completes`; a trial's stream_cut left "Sorry, the
    accounts " and passed it too, which the comment did not say."""
    text = write_starter(Answers(), tmp_path / "flakeproxy.yaml").text
    comment = " ".join(line.strip().lstrip("# ") for line in text.splitlines() if line.strip().startswith("# "))
    assert "A cut answer passes the starter's checks, `answers` (completes) too" in comment
    assert "So does the fragment a stream_cut fault leaves" in comment and '"Sorry, the accounts "' in comment
