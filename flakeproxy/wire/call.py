"""One request as faults see it: where it came in, what it targets, what it carries."""

from __future__ import annotations

import contextvars
import fnmatch
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from flakeproxy.wire.mcp import called_tool

#: The header an agent forwards on its outgoing calls to say which episode (proxy cell) they belong to.
#: The runner sends it with each prompt (command agents get it as FLAKEPROXY_CELL); the proxy removes it.
#: The URL a python agent's wrapped tool call is journaled under (IN_PROCESS + its name): not on the wire.
IN_PROCESS = "python://"
CELL_HEADER = "x-flakeproxy-cell"
#: The episode (proxy cell) a python-callable agent is answering for, while flakeproxy calls it.
CURRENT_CELL: contextvars.ContextVar[str | None] = contextvars.ContextVar("flakeproxy_cell", default=None)


#: The listener URLs of the slot a python-callable agent runs in (run.attribution: slots): name -> URL.
CURRENT_URLS: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar("flakeproxy_urls", default={})  # noqa: B039


def current_cell() -> str | None:
    """For a python agent: the value to send as x-flakeproxy-cell on its calls through the proxy."""
    return CURRENT_CELL.get()


def listener_url(name: str) -> str | None:
    """For a python agent run in slots: the URL of listener `name` in the slot of the episode it is answering
    for; outside slots, the listener's own URL (None outside an episode, or for a listener on port 0)."""
    return CURRENT_URLS.get().get(name)


@dataclass(frozen=True)
class TargetSpec:
    """The part of a config target that matching needs (kept free of the config models)."""

    listener: str
    path: str | None = None
    method: str | None = None
    mcp_tool: str | None = None
    api: str | None = None
    host: str | None = None  # a glob on the request's host name (lower case)


def host_matches(pattern: str | None, host: str) -> bool:
    """True when a target's host glob (None: any host) matches a request's host name (any case)."""
    return pattern is None or fnmatch.fnmatchcase(host.lower().strip("[]").rstrip("."), pattern)


def names_host(targets: Mapping[str, TargetSpec], listener: str, host: str) -> bool:
    """True when some target on this listener could match requests to host (a target without host: does)."""
    return any(t.listener == listener and host_matches(t.host, host) for t in targets.values())


@dataclass(frozen=True)
class Call:
    listener: str
    method: str
    url: str
    path: str
    headers: Mapping[str, str]  # lower-case names
    body: bytes
    targets: tuple[str, ...] = ()
    api: str | None = None  # the api of the LLM target this call matched, if any
    mcp_tool: str | None = None


def is_ws_upgrade(call: Call) -> bool:
    """The call asks to become a WebSocket (an HTTP/1.1 upgrade)."""
    return call.method == "GET" and call.headers.get("upgrade", "").lower() == "websocket"


def folded(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers as a Call holds them, from (name, value) pairs: lower-case names, a repeated name's values joined
    with ", " as mitmproxy folds them (its Headers.items() does so with a lookup per name: 12 us a request)."""
    out: dict[str, str] = {}
    for name, value in pairs:
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def resolve(
    targets: Mapping[str, TargetSpec],
    listener: str,
    method: str,
    url: str,
    path: str,
    headers: Mapping[str, str],
    body: bytes,
) -> Call:
    """A Call with the names of every target the request matches."""
    bare_path = path.split("?", 1)[0]
    host = urlsplit(url).hostname or ""
    tool = called_tool(headers, body) if any(t.mcp_tool for t in targets.values()) else None
    matched = []
    for name, t in targets.items():
        if t.listener != listener:
            continue
        if t.method and t.method != method.upper():
            continue
        if t.host and not host_matches(t.host, host):
            continue
        if t.path and not fnmatch.fnmatchcase(bare_path, t.path):
            continue
        if t.mcp_tool and t.mcp_tool != tool:
            continue
        matched.append(name)
    api = next((targets[n].api for n in matched if targets[n].api), None)
    return Call(
        listener, method.upper(), url, path, headers, body, tuple(matched), openai_api(api, bare_path, body), tool
    )


#: OpenAI's two HTTP APIs, by the end of the path the OpenAI SDKs send them to (on any base URL).
OPENAI_PATHS = {"/chat/completions": "openai", "/responses": "openai-responses"}
#: ... and by a top-level key only one of the two requests has (`messages`: chat; `input`: Responses).
OPENAI_KEYS = {"messages": "openai", "input": "openai-responses"}


def openai_api(api: str | None, path: str, body: bytes) -> str | None:
    """The API a call speaks, for a target of `api`: `openai` and `openai-responses` are one provider's two APIs,
    which an agent sends to the same base URL (the OpenAI Agents SDK speaks Responses by default), so what the call
    was sent to decides between them: a path ending in /chat/completions or /responses, else the request's body
    (`messages` or `input`), else the target's `api:`. Faults are shaped, and usage read, as that API's."""
    if api not in ("openai", "openai-responses"):
        return api
    end = path.rstrip("/")
    for suffix, which in OPENAI_PATHS.items():
        if end.endswith(suffix):
            return which
    keys = _top_keys(body)
    found = {which for key, which in OPENAI_KEYS.items() if key in keys}
    return found.pop() if len(found) == 1 else api


def _top_keys(body: bytes) -> set[str]:
    """The top-level keys of a JSON object body (none when it is empty, not JSON, or not an object)."""
    if not body.lstrip().startswith(b"{"):
        return set()
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return set()
    return set(data) if isinstance(data, dict) else set()
