"""Secret values by their shape, and scrubbing known secret values out of a text in one linear pass.

Helpers of flakeproxy.proxycore.redact. A value is secret by its shape when it is a credential whatever its header or
parameter is called: an `Authorization`-style `Bearer ...` / `Basic ...`, or a provider key format (OpenAI and
Anthropic `sk-...`, JWTs, AWS access keys, GitHub, GitLab, Slack, Google and Hugging Face tokens). Counters
(`x-ratelimit-remaining-tokens: 9000`) never have such a shape. Pure: no mitmproxy, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[redacted]"
#: Literal values shorter than this are not searched for in bodies (too likely to hit innocent text).
MIN_LITERAL = 6
#: At most this many values are searched for in a text: those redacted in headers and the URL first, then the
#: longest of those found in bodies. A hostile body naming thousands of secret fields (each still redacted in
#: place) cannot make scrubbing cost thousands of passes over every other part of its entry.
MAX_LITERALS = 128

_SHAPES = re.compile(
    r"""(?:bearer|basic|digest|token|apikey)\s+\S{8,}   # an Authorization-style scheme and credential
    | sk-[A-Za-z0-9_-]{16,}                             # OpenAI / Anthropic (sk-ant-...) keys
    | eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*  # a JWT
    | (?:AKIA|ASIA)[A-Z0-9]{16}                         # AWS access key ids
    | gh[pousr]_[A-Za-z0-9]{30,} | github_pat_[A-Za-z0-9_]{30,}
    | glpat-[A-Za-z0-9_-]{20,} | xox[abposr]-[A-Za-z0-9-]{10,}
    | AIza[0-9A-Za-z_-]{30,} | hf_[A-Za-z0-9]{30,}""",
    re.IGNORECASE | re.VERBOSE,
)


def secret_shaped(value: str) -> bool:
    """True when the whole value (trimmed) looks like a credential."""
    return _SHAPES.fullmatch(value.strip()) is not None


def _long_enough(values: Iterable[str]) -> list[str]:
    return sorted({v for v in values if len(v) >= MIN_LITERAL and v != REDACTED}, key=lambda v: (-len(v), v))


def searchable(seen: Iterable[str], first: Iterable[str] = ()) -> list[str]:
    """The values to scrub, longest first: `first` (e.g. from headers) always, then the longest others, at most
    MAX_LITERALS in all; each also in its form inside a JSON string."""
    chosen = _long_enough(first)
    taken = set(chosen)
    chosen += [v for v in _long_enough(seen) if v not in taken][: max(0, MAX_LITERALS - len(chosen))]
    out = set(chosen) | {json.dumps(v)[1:-1] for v in chosen}  # a value as it appears inside a JSON string
    return sorted(out, key=lambda v: (-len(v), v))


def scrub(text: str, values: list[str]) -> str:
    """text with every occurrence of the values (longest first, as `searchable` orders them) replaced."""
    for value in values:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def scrub_nested(value: Any, values: list[str]) -> Any:
    """Every string inside value (JSON-shaped: dicts, lists) scrubbed of the values; keys are left as they are."""
    if isinstance(value, str):
        return scrub(value, values)
    if isinstance(value, list):
        return [scrub_nested(v, values) for v in value]
    if isinstance(value, dict):
        return {k: scrub_nested(v, values) for k, v in value.items()}
    return value
