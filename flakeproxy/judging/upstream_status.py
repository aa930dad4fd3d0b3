"""What an upstream's own error statuses say about the world, and what fixes them: the words of the calm checks
(flakeproxy.judging.calm_checks, which decides when they stop the run) for requests the upstream ANSWERED with an
error, as opposed to requests it never answered.

An LLM listener's upstream answers its agent's calls with an error only when something around the agent is
wrong: its key (401, 403), its base URL or model (404), its quota (429), the provider itself (5xx), or what it
sends (other 4xx). A tool's upstream may be meant to say 404 or 422 to some questions; 401, 403 and 5xx it is not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from flakeproxy.wire.record import read_fault

#: How much of the first error body a line quotes (the journal's redacted text, whitespace collapsed).
EXCERPT_CHARS = 160


def answered_error(entry: dict[str, Any]) -> int | None:
    """The status of a request its upstream answered with an error (>= 400, the upstream's own); None when the
    status is < 400 or unknown, the proxy answered instead of the upstream, or one of our faults acted on it.
    A request the upstream never answered (the proxy's 502 or 504) is calm_checks.upstream_failure's."""
    status = entry.get("status")
    if not isinstance(status, int) or status < 400 or not entry.get("upstream_called", True):
        return None
    fault = read_fault(entry.get("fault"))
    return None if fault is not None and fault.applied else status


def excerpt(entry: dict[str, Any]) -> str:
    """The start of an entry's response body as the journal holds it (secrets redacted), on one line."""
    body = " ".join(str(entry.get("response_body") or "").split())
    if not body:
        return "(empty body)"
    return body if len(body) <= EXCERPT_CHARS else body[:EXCERPT_CHARS] + "..."


def hard(status: int, llm: bool) -> bool:
    """An error the upstream gives no agent on purpose: any on an LLM listener; 401, 403 or 5xx on a tool's."""
    return llm or status in (401, 403) or status >= 500


def statuses(found: Sequence[int]) -> str:
    """`HTTP 401`, or with several statuses each with its count: `HTTP 429 (2), 503 (1)`."""
    counts = Counter(found)
    if len(counts) == 1:
        return f"HTTP {found[0]}"
    return "HTTP " + ", ".join(f"{status} ({n})" for status, n in counts.items())


def _kind(status: int) -> str:
    if status in (401, 403):
        return "key"
    if status in (404, 429):
        return str(status)
    return "server" if status >= 500 else "request"


def fixes(found: Sequence[int], llm: bool) -> str:
    """What to fix for these statuses, one clause per kind of status, in the order they came."""
    url = (
        "check the agent's base URL for it (a wrong path, e.g. a missing /v1) and the model it names"
        if llm
        else "check the agent's URL for it (its path)"
    )
    fix = {
        "key": "check the agent's API key for it (missing, wrong or expired)",
        "404": url,
        "429": "its quota or rate limit was used up before the run (check the account's limits and billing, or wait)",
        "server": "the upstream itself is failing (run again once it answers)",
        "request": "the upstream refused what the agent sent (read its error)",
    }
    kinds: dict[str, list[int]] = {}
    for status in found:
        same = kinds.setdefault(_kind(status), [])
        if status not in same:
            same.append(status)
    return "; ".join(f"{', '.join(map(str, each))}: {fix[kind]}" for kind, each in kinds.items())
