"""Which requests of a journal are retries: repeats of a faulted request, told apart from the agent's next step."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from flakeproxy.wire.record import read_fault

#: The header the official OpenAI and Anthropic SDKs (Stainless-generated) send with the attempt number.
RETRY_COUNT_HEADER = "x-stainless-retry-count"


def on_target(journal: Iterable[dict[str, Any]], target: str) -> list[dict[str, Any]]:
    """The entries that hit target, in the order the proxy saw them."""
    return sorted(
        (e for e in journal if target in e.get("targets", [])), key=lambda e: (e.get("seq", 0), e["started_at"])
    )


def signature(entry: dict[str, Any]) -> tuple[str, str, str]:
    """A request's identity for retry counting: method, URL and a digest of its body."""
    body = str(entry.get("request_body", "")).encode()
    return entry.get("method", ""), entry.get("url", ""), hashlib.sha256(body).hexdigest()


def is_sdk_retry(entry: dict[str, Any]) -> bool:
    value = (entry.get("request_headers") or {}).get(RETRY_COUNT_HEADER, "0")
    return value.strip().isdigit() and int(value) > 0


def applied_fault(entry: dict[str, Any]) -> bool:
    fault = read_fault(entry.get("fault"))
    return fault is not None and fault.applied


def retries_of(calls: list[dict[str, Any]], first: int) -> list[dict[str, Any]]:
    """The requests after calls[first] that repeat it: the same method, URL and body, or an SDK retry of the
    same method and URL (the SDKs resend the same body; a ReAct agent's next step sends a longer one)."""
    sig = signature(calls[first])
    out = []
    for entry in calls[first + 1 :]:
        same = signature(entry) == sig
        sdk = is_sdk_retry(entry) and signature(entry)[:2] == sig[:2]
        if same or sdk:
            out.append(entry)
        else:
            break  # a different request: the agent moved on
    return out
