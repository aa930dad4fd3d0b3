"""Which recorded response answers a live request (pure: the addon asks, the replay upstream serves).

A request is first compared, redacted as the recording was (flakeproxy.replay.build.redact_request), then:
- anchor-style `tool_responses` of one of its targets are served in the order listed, whatever the mode;
- `strict`: the first unused exchange with the same listener, method, path and query, and body digest;
- `args`: the same, comparing JSON bodies without `ignore_fields` (at any depth) instead of digests;
- `order`: the n-th call to a target (or to a listener, for requests of no target) gets its n-th exchange.
Every exchange is served at most once. None means unmatched: the caller applies `unmatched:`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from flakeproxy.config.replays import Exchange, ReplayOptions, Session, ToolResponse
from flakeproxy.proxycore.redact import Redactor
from flakeproxy.replay.build import RedactedRequest, digest, path_of, redact_request


def tool_exchange(response: ToolResponse, listener: str, method: str, url: str) -> Exchange:
    """An anchor-style tool response as the exchange that serves it (a dict or list is sent as JSON)."""
    is_text = isinstance(response.response, str)
    body = response.response if isinstance(response.response, str) else json.dumps(response.response)
    kind = "text/plain; charset=utf-8" if is_text else "application/json"
    return Exchange(
        target=response.tool,
        listener=listener,
        method=method,
        url=url,
        request_digest=digest(""),
        status=response.status,
        response_headers={"content-type": kind},
        response_body=body if response.response is not None else "",
        latency_ms=response.latency_ms,
    )


def _without(data: Any, ignored: frozenset[str]) -> Any:
    if isinstance(data, dict):
        return {k: _without(v, ignored) for k, v in data.items() if k not in ignored}
    if isinstance(data, list):
        return [_without(v, ignored) for v in data]
    return data


def _args(body: str, ignored: frozenset[str]) -> Any:
    try:
        return _without(json.loads(body), ignored)
    except ValueError:
        return body


class Matcher:
    """The state of one replayed session: which exchanges and tool responses are still unserved."""

    def __init__(self, session: Session, options: ReplayOptions, redactor: Redactor) -> None:
        self.session, self.options, self.redactor = session, options, redactor
        self.used: set[int] = set()
        self.calls: dict[str, int] = {}
        self.tools: dict[str, list[ToolResponse]] = {}
        for response in session.tool_responses:
            self.tools.setdefault(response.tool, []).append(response)
        self.ignored = frozenset(options.ignore_fields)

    @property
    def unused(self) -> int:
        left = sum(len(v) for v in self.tools.values())
        return left + len(self.session.exchanges) - len(self.used)

    def match(
        self,
        listener: str,
        targets: Sequence[str],
        method: str,
        url: str,
        headers: Iterable[tuple[str, str]],
        body: bytes,
    ) -> Exchange | None:
        """The recorded exchange that answers this request, or None."""
        key = targets[0] if targets else f"listener:{listener}"
        n = self.calls[key] = self.calls.get(key, 0) + 1
        for target in targets:
            if target in self.tools:
                listed = self.tools[target]
                return tool_exchange(listed.pop(0), listener, method, url) if listed else None
        request = redact_request(self.redactor, url, headers, body.decode("utf-8", "replace"))
        found = self._find(listener, key, n, method, request)
        if found is not None:
            self.used.add(found)
            return self.session.exchanges[found]
        return None

    def _find(self, listener: str, key: str, n: int, method: str, request: RedactedRequest) -> int | None:
        exchanges = self.session.exchanges
        if self.options.match == "order":
            mine = [i for i, e in enumerate(exchanges) if (e.target or f"listener:{e.listener}") == key]
            return mine[n - 1] if n <= len(mine) and mine[n - 1] not in self.used else None
        wanted = path_of(request.url)
        for i, exchange in enumerate(exchanges):
            if i in self.used or exchange.listener != listener or exchange.method != method.upper():
                continue
            if path_of(exchange.url) != wanted:
                continue
            if self.options.match == "strict" and exchange.request_digest == request.digest:
                return i
            if self.options.match == "args" and _args(exchange.request_body, self.ignored) == _args(
                request.body, self.ignored
            ):
                return i
        return None
