"""Which requests of a journal are retries: repeats of a request that failed, told apart from the agent's next step.

One definition for the checks and the reports: a retry repeats a request of the same turn on the same target (the
same method, URL and body, or the SDK's retry-count header with the same method and URL), sent before the agent
sent anything else there; `retries_after_fault` counts those of a faulted request, the reports' "retries seen"
(`retry_seqs`) those of any request that failed (a fault applied, an HTTP error, no answer) and the SDKs' own."""

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


def failed(entry: dict[str, Any]) -> bool:
    """The agent saw the request fail: a fault applied to it, an HTTP error, or no answer (an error, none yet)."""
    status = entry.get("status")
    return applied_fault(entry) or bool(entry.get("error")) or not isinstance(status, int) or status >= 400


def _places(journal: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The journal's requests by turn and target (by listener where no target matched), each in order."""
    out: dict[tuple[Any, tuple[str, ...]], list[dict[str, Any]]] = {}
    for entry in sorted(journal, key=lambda e: (e.get("seq", 0), e.get("started_at", 0.0))):
        where = tuple(entry.get("targets") or []) or (f"listener {entry.get('listener')}",)
        out.setdefault((entry.get("turn"), where), []).append(entry)
    return list(out.values())


def retry_seqs(journal: Iterable[dict[str, Any]]) -> set[int]:
    """The seqs of the journal's retries: the SDKs' (the retry-count header) and the repeats of a request that
    failed, in its turn (a conversation's next turn asking the same again is not a retry, nor is a repeat of a
    request that succeeded: the agent's next step, which `no_loop` judges)."""
    out: set[int] = set()
    for calls in _places(journal):
        for i, entry in enumerate(calls):
            if is_sdk_retry(entry):
                out.add(int(entry.get("seq", -1)))
            if failed(entry):
                out.update(int(e.get("seq", -1)) for e in retries_of(calls, i))
    return out
