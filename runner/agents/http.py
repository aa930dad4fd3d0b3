"""An agent behind HTTP: the template filled JSON-safely, the answer found by response_path,
SSE and NDJSON answers assembled, a non-2xx answer an agent error with status and excerpt. An agent
that cannot be reached stops the run (infrastructure); one that drops the connection after the request
was sent is that cell's agent error."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import quote

import aiohttp

from flakeproxy.config.agent import HttpAgent, parse_response_path
from flakeproxy.errors import InfrastructureError
from flakeproxy.proxycore.redact import Redactor
from flakeproxy.results import UnreadAnswer
from flakeproxy.runner.agents.base import Invocation, Reply, clip
from flakeproxy.runner.http_errors import tls_failure, why
from flakeproxy.runner.ports import EpisodePort
from flakeproxy.runner.retry import retrying
from flakeproxy.wire.call import CELL_HEADER
from flakeproxy.wire.sse import SseParser


def fill(template: Any, prompt: str, how: Invocation | None = None) -> Any:
    """The template with {prompt} substituted as a value (never spliced into JSON text), {messages} (a value of
    its own) by the conversation so far plus this turn as OpenAI-style messages, {session} by the episode's
    session id.

    A JSON string template was parsed into its structure at load; a str template at the top is a text body.
    """
    run = how or Invocation()
    if isinstance(template, str):
        if template == "{messages}":
            return run.messages(prompt)
        if template == "{prompt}":
            return prompt
        text = template.replace("{session}", run.session) if run.session is not None else template
        return text.replace("{prompt}", prompt)
    if isinstance(template, dict):
        return {k: fill(v, prompt, run) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, prompt, run) for v in template]
    return template


class PathMissing(Exception):
    """response_path stopped at a step the body does not have; `unread` says where, and what the body held there."""

    def __init__(self, step: str | int, unread: UnreadAnswer) -> None:
        super().__init__(step)
        self.unread = unread


def follow(data: Any, steps: list[str | int]) -> Any:
    for n, step in enumerate(steps):
        try:
            data = _step(data, step)
        except LookupError:
            raise PathMissing(step, unread_at(steps[:n], data)) from None
    return data


def _step(data: Any, step: str | int) -> Any:
    """One step of a response path: a list index (negative from the end) or an object key."""
    if isinstance(step, int):
        if isinstance(data, list) and -len(data) <= step < len(data):
            return data[step]
    elif isinstance(data, dict) and step in data:
        return data[step]
    raise LookupError(step)


#: what a JSON value is, by the Python type json.loads gives it (None: null)
JSON_KINDS: dict[type, str] = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
}


def unread_at(found: list[str | int], data: Any) -> UnreadAnswer:
    """Where a response path stopped (the steps found, written as a path) and what the body held there."""
    at = "$" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" if s.isidentifier() else f"[{s!r}]" for s in found)
    keys = [str(k)[:40] for k in list(data)[:20]] if isinstance(data, dict) else []
    holds = JSON_KINDS.get(type(data), "null")
    return UnreadAnswer.model_validate({"at": at, "holds": holds, "keys": keys})


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


class HttpAdapter:
    def __init__(self, config: HttpAgent) -> None:
        self.config = config
        self.steps = parse_response_path(config.response_path) if config.response_path else None
        self.session: aiohttp.ClientSession | None = None

    @property
    def has_reset(self) -> bool:
        return self.config.reset_endpoint is not None

    def ports(self, redactor: Redactor) -> list[EpisodePort]:
        """Its calls go through the proxy: no records of its own."""
        return []

    async def start(self) -> None:
        self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.config.timeout_ms / 1000))

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()

    def _endpoints(self, how: Invocation | None) -> tuple[str, str | None]:
        """The endpoint and reset endpoint of the replica that runs this invocation (its slot's, if slotted), with
        the episode's {session} in both: a reset can then clear that episode's session alone."""
        endpoint, reset = self.config.endpoint, self.config.reset_endpoint
        if how is not None and how.slot is not None and self.config.slots:
            endpoint, reset = self.config.slots[how.slot].endpoint, self.config.slots[how.slot].reset_endpoint
        return self._session(endpoint, how), self._session(reset, how) if reset is not None else None

    def _unreachable(self, what: str, how: Invocation | None, key: str, e: aiohttp.ClientError) -> InfrastructureError:
        """Nothing answers at an agent URL: the fix is to start the agent, or to point `key` (agent.endpoint, or
        its slot's) where it listens."""
        where = (
            f"agent.slots[{how.slot}].{key}"
            if how is not None and how.slot is not None and self.config.slots
            else f"agent.{key}"
        )
        if tls := tls_failure(e):  # it answered: its TLS is what failed
            return InfrastructureError(f"{what}: {tls}")
        return InfrastructureError(
            f"{what} unreachable: {why(e)}; start the agent, or fix {where} if it listens elsewhere"
        )

    @staticmethod
    def _session(text: str, how: Invocation | None) -> str:
        """{session} in an endpoint or header: the episode's session id (quoted for a URL's path or query)."""
        if how is None or how.session is None:
            return text
        return text.replace("{session}", quote(how.session, safe=""))

    async def reset(self, how: Invocation | None = None) -> None:
        """POST the reset endpoint; a refused connection is waited for (infrastructure), an error status is not."""
        _, where = self._endpoints(how)
        assert self.session is not None and where
        session = self.session

        async def post() -> None:
            async with session.post(where) as response:
                if response.status >= 400:
                    body = clip(await response.text())
                    raise InfrastructureError(f"agent reset {where} answered HTTP {response.status}: {body}")

        try:
            await retrying(post, aiohttp.ClientConnectionError, first_s=0.1, max_s=2, attempts=5)
        except aiohttp.ClientError as e:
            raise self._unreachable(f"agent reset {where}", how, "reset_endpoint", e) from e

    async def invoke(self, prompt: str, how: Invocation | None = None) -> Reply:
        assert self.session is not None
        run = how or Invocation()
        endpoint, _ = self._endpoints(run)
        body = fill(self.config.request_template, prompt, run)
        # the trace context goes first: a traceparent the user configured wins, as the agent's own would
        own = {k: v.replace("{session}", run.session) if run.session else v for k, v in self.config.headers.items()}
        headers = {**(run.trace.headers() if run.trace else {}), **own}
        headers.update({CELL_HEADER: run.cell} if run.cell else {})
        kwargs: dict[str, Any] = {"params": body} if self.config.method in ("GET", "DELETE") else {"json": body}
        if isinstance(self.config.request_template, str):  # a text template: the filled text is the body
            kwargs = {"data": body.encode()}
            if not any(k.lower() == "content-type" for k in headers):
                headers["content-type"] = "text/plain; charset=utf-8"
        start = time.monotonic()
        try:
            async with self.session.request(self.config.method, endpoint, headers=headers, **kwargs) as response:
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                raw = await response.read()
                ms = (time.monotonic() - start) * 1000
                if response.status >= 300:
                    return Reply(
                        None, ms, f"agent answered HTTP {response.status}: {clip(raw.decode(errors='replace'))}"
                    )
                return self._answer(raw, kind, ms)
        except TimeoutError:
            ms = (time.monotonic() - start) * 1000
            return Reply(None, ms, f"agent timed out after {self.config.timeout_ms} ms", lost=True)
        except aiohttp.ClientConnectorError as e:
            # nothing accepted the connection: the agent is not there, the run cannot go on
            raise self._unreachable(f"agent {endpoint}", how, "endpoint", e) from e
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as e:
            # connected and sent, then the agent hung up, reset or cut its answer: this cell's agent error
            ms = (time.monotonic() - start) * 1000
            return Reply(None, ms, f"agent closed the connection mid-request: {e}", lost=True)
        except aiohttp.ClientError as e:
            return Reply(None, (time.monotonic() - start) * 1000, f"agent request failed: {e}", lost=True)

    def _answer(self, raw: bytes, kind: str, ms: float) -> Reply:
        text = raw.decode("utf-8", errors="replace")
        try:
            if kind == "text/event-stream":
                return Reply(self._assemble([e.data for e in SseParser().feed(raw + b"\n\n")]), ms)
            if kind in ("application/x-ndjson", "application/jsonl"):
                return Reply(self._assemble([line for line in text.splitlines() if line.strip()]), ms)
            if self.steps is None:
                return Reply(text, ms)
            try:
                data = json.loads(text)
            except ValueError:
                return Reply(None, ms, f"agent answer is not JSON, so response_path cannot apply: {clip(text)}")
            if (value := follow(data, self.steps)) is None:  # an answer with no text: not the text "null"
                why = f"response_path {self.config.response_path} holds null in the agent's answer: {clip(text)}"
                return Reply(None, ms, why)
            return Reply(as_text(value), ms)
        except PathMissing as e:
            why = f"response_path {self.config.response_path} not found (at {e.args[0]!r}) in: {clip(text)}"
            return Reply(None, ms, why, unread=e.unread)

    def _assemble(self, pieces: list[str]) -> str:
        """Join streamed pieces: by response_path when set, OpenAI-style deltas, or the raw data."""
        out = []
        for piece in pieces:
            if piece.strip() == "[DONE]":
                break
            try:
                data = json.loads(piece)
            except ValueError:
                out.append(piece)
                continue
            if self.steps is not None:
                try:
                    value = follow(data, self.steps)
                except PathMissing:
                    continue
                if value is not None:  # a piece with nothing at the path (a last delta's null content)
                    out.append(as_text(value))
            elif isinstance(data, dict) and data.get("choices"):
                out.append((data["choices"][0].get("delta") or {}).get("content") or "")
            else:
                out.append(as_text(data))
        return "".join(out)
