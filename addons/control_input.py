"""Reading control API requests: the token, a JSON object body, query values, episode ids.

Every bad input raises Problem, which the API answers as a 4xx JSON error naming what is wrong.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from flakeproxy import control_api as api
from flakeproxy.proxycore.injector import EPISODE_ID

#: The largest request body the control API reads (a scenario is a few KiB)...
MAX_BODY_BYTES = 1024 * 1024
#: ...but for a replay plan: a recorded session whole, from a session file of up to 64 MiB (flakeproxy/replay/
#: files.py MAX_SESSION_BYTES; a 2 MB tool answer made a 4.3 MB session, which the 1 MiB bound refused, exit 3).
MAX_PLAN_BYTES = 160 * 1024 * 1024


def route(spec: api.Route, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.RouteDef:
    """The aiohttp route serving one route of the control API (flakeproxy.control_api, where paths are written)."""
    return web.route(spec.method, spec.template, handler)


class Problem(Exception):
    """A request the control API refuses: its status, the message, extra JSON fields (e.g. valid)."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.message, self.extra = status, message, extra


def check_token(authorization: str, token: str) -> None:
    """`Authorization: Bearer <token>`; the scheme in any case, never a bare token."""
    scheme, _, given = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise Problem(401, "missing or wrong token; send Authorization: Bearer <proxy.token>")


async def json_object(request: web.Request, limit: int = MAX_BODY_BYTES) -> dict[str, Any]:
    """The body as a JSON object ({} when there is none), refused beyond `limit` bytes (read no further)."""
    if not request.can_read_body:
        return {}
    size = request.content_length
    if size is not None and size > limit:
        raise _too_large(size, limit)
    chunks, got = list[bytes](), 0
    while chunk := await request.content.read(64 * 1024):  # a chunked body says no length: counted as it comes
        got += len(chunk)
        if got > limit:
            raise _too_large(None, limit)
        chunks.append(chunk)
    raw = b"".join(chunks)
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise Problem(400, f"body is not UTF-8 (byte {e.start}: {raw[e.start : e.start + 1]!r}); send JSON") from e
    except json.JSONDecodeError as e:
        raise Problem(400, f"body is not JSON ({e})") from e
    except RecursionError as e:
        raise Problem(400, "body nests JSON too deeply to read; send a JSON object a few levels deep") from e
    if not isinstance(data, dict):
        raise Problem(400, f"body must be a JSON object, got {type(data).__name__}")
    return data


def _too_large(size: int | None, limit: int) -> Problem:
    got = f"{size} bytes" if size is not None else "more"
    return Problem(413, f"body too large: {got}; the control API reads at most {limit} bytes here")


def optional_str(body: Mapping[str, Any], key: str, what: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise Problem(400, f"{key} must be a string ({what}) or null, got {json.dumps(value)[:80]}")
    return value


def episode_id(value: str) -> str:
    if not EPISODE_ID.fullmatch(value):
        raise Problem(
            400,
            f"episode id {value[:140]!r} is not valid: use 1-128 letters, digits, '.', '_', ':' or '-' (e.g. 'e12.r0')",
        )
    return value


def query_int(query: Mapping[str, str], name: str, minimum: int, default: int | None = None) -> int | None:
    """An integer query parameter >= minimum, or default when absent."""
    raw = query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise Problem(400, f"{name} must be an integer >= {minimum}, got {raw[:40]!r}")
    return value


JOURNAL_QUERY = api.JOURNAL_QUERY
#: Entries per api.JOURNAL page unless ?limit= says otherwise, and the most one page may hold.
JOURNAL_PAGE, JOURNAL_PAGE_MAX = 1000, 10_000


def journal_query(query: Mapping[str, str]) -> dict[str, Any]:
    """api.JOURNAL?since=SEQ&limit=N&episode=ID|unattributed=1 as Journal.page() arguments."""
    unknown = sorted(set(query) - set(JOURNAL_QUERY))
    if unknown:
        raise Problem(400, f"unknown query parameters {unknown}", valid=JOURNAL_QUERY)
    limit = query_int(query, "limit", 1, JOURNAL_PAGE) or JOURNAL_PAGE
    if limit > JOURNAL_PAGE_MAX:
        raise Problem(400, f"limit must be at most {JOURNAL_PAGE_MAX}, got {limit}; page with since= and next")
    flag = query.get("unattributed", "0").lower()
    if flag not in ("0", "1", "true", "false"):
        raise Problem(400, f"unattributed must be 1 or 0, got {flag[:20]!r}")
    episode = episode_id(query["episode"]) if "episode" in query else None
    if episode is not None and flag in ("1", "true"):
        raise Problem(400, "episode and unattributed=1 exclude each other; ask for one")
    since = query_int(query, "since", 0, 0) or 0
    return {"since": since, "limit": limit, "episode": episode, "unattributed": flag in ("1", "true")}
