from __future__ import annotations

from flakeproxy.journal import BodyCapture, Journal, JournalEntry, redact_headers
from flakeproxy.wire.coverage import Coverage


def test_redaction() -> None:
    headers = [
        ("Authorization", "Bearer x"),
        ("X-Api-Key", "k"),
        ("Cookie", "c"),
        ("Set-Cookie", "d"),
        ("X-Session-Id", "s"),
        ("Anthropic-Api-Key", "a"),
        ("Accept", "json"),
        ("accept", "text"),
    ]
    out = redact_headers(headers)
    assert out.pop("accept") == "json, text"
    assert set(out.values()) == {"[redacted]"}


def test_capture_caps_and_counts() -> None:
    capture = BodyCapture(cap=4)
    capture.add(b"abc")
    capture.add(b"def")
    assert (capture.text(), capture.size, capture.truncated) == ("abcd", 6, True)


def _entry(seq: int, cell: str | None) -> JournalEntry:
    return JournalEntry(seq, cell, [], 0.0, "l", [], "GET", "u", {}, "", 0)


def test_journal_is_bounded_and_filters_by_cell() -> None:
    journal = Journal(max_entries=3)
    for i in range(5):
        journal.add(_entry(i, "a" if i % 2 else "b"))
    assert [e.seq for e in journal.entries] == [2, 3, 4] and journal.dropped == 2
    assert [e.seq for e in journal.for_cell("a")] == [3]


def test_to_json_reads_the_live_parts_without_changing_the_entry() -> None:
    entry = _entry(1, "a")
    entry.fault = {"kind": "stream_cut"}
    entry.capture, entry.coverage = BodyCapture(cap=4), Coverage("stream_cut")
    entry.capture.add(b"abcdef")
    data = entry.to_json()
    assert (data["response_body"], data["response_bytes"], data["body_truncated"]) == ("abcd", 6, True)
    assert data["fault"] == {"kind": "stream_cut", "applied": False, "effect": None, "not_applied_reason": None}
    assert (entry.response_body, entry.response_bytes, entry.fault) == ("", 0, {"kind": "stream_cut"})
    entry.coverage.closed()
    assert entry.to_json()["fault"]["effect"] == "connection closed"
