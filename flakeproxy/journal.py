"""The journal: one entry per request the proxy saw, with secrets redacted (flakeproxy.redact) and
bodies capped."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

from flakeproxy.redact import DEFAULT, Redactor
from flakeproxy.wire.coverage import Coverage

BODY_CAP_BYTES = 64 * 1024


def redact_headers(headers: Iterable[tuple[str, str]], redactor: Redactor = DEFAULT) -> dict[str, str]:
    """Headers as a dict (repeated names joined with ', '), secret values replaced (Redactor.headers)."""
    return redactor.headers(headers)


class BodyCapture:
    """Keeps the first `cap` bytes of a body and counts all of it."""

    def __init__(self, cap: int = BODY_CAP_BYTES) -> None:
        self.cap = cap
        self.size = 0
        self._parts: list[bytes] = []
        self._kept = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        room = self.cap - self._kept
        if room > 0 and chunk:
            self._parts.append(chunk[:room])
            self._kept += min(room, len(chunk))

    def text(self) -> str:
        return b"".join(self._parts).decode("utf-8", "replace")

    @property
    def truncated(self) -> bool:
        return self.size > self._kept


@dataclass
class JournalEntry:
    """What happened to one request. `cell` is None when it could not be attributed to one cell."""

    seq: int
    cell: str | None
    cell_candidates: list[str]
    started_at: float
    listener: str
    targets: list[str]
    method: str
    url: str
    request_headers: dict[str, str]
    request_body: str
    request_bytes: int
    fault: dict[str, Any] | None = None
    upstream_called: bool = True
    status: int | None = None
    latency_ms: float | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: str = ""
    response_bytes: int = 0
    body_truncated: bool = False
    streamed: bool = False
    error: str | None = None
    complete: bool = False  # False while the response is still on its way (e.g. a long stream)
    capture: BodyCapture | None = field(default=None, repr=False, compare=False)
    coverage: Coverage | None = field(default=None, repr=False, compare=False)
    redactor: Redactor | None = field(default=None, repr=False, compare=False)  # set by Journal.add

    def to_json(self) -> dict[str, Any]:
        """The entry as JSON, secrets redacted (the entry is left as it is); for a response still streaming,
        the body received so far; the fault with whether it applied (see flakeproxy.wire.coverage)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _LIVE}
        if self.capture is not None:
            data["response_body"] = self.capture.text()
            data["response_bytes"] = self.capture.size
            data["body_truncated"] = self.capture.truncated
        if self.fault is not None:
            data["fault"] = {**self.fault, **(self.coverage.record() if self.coverage else _NO_COVERAGE)}
        return (self.redactor or DEFAULT).entry(data)


_LIVE = {"capture", "coverage", "redactor"}  # objects the proxy updates while the flow goes on; read at serialization
_NO_COVERAGE = {"applied": False, "effect": None, "not_applied_reason": None}


class Journal:
    """Entries in arrival order, bounded: the oldest go first once max_entries is reached."""

    def __init__(self, max_entries: int = 10_000, redactor: Redactor | None = None) -> None:
        self.max_entries = max_entries
        self.redactor = redactor or DEFAULT  # the config's: Redactor(config.redact)
        self.entries: list[JournalEntry] = []
        self.dropped = 0
        self._seq = 0

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def add(self, entry: JournalEntry) -> None:
        entry.redactor = entry.redactor or self.redactor
        self.entries.append(entry)
        if len(self.entries) > self.max_entries:
            excess = len(self.entries) - self.max_entries
            del self.entries[:excess]
            self.dropped += excess

    def for_cell(self, cell_id: str) -> list[JournalEntry]:
        return [e for e in self.entries if e.cell == cell_id]

    def clear(self) -> None:
        self.entries.clear()
        self.dropped = 0
