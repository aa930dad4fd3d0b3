from __future__ import annotations

from flakeproxy.journal import BodyCapture, Journal, JournalEntry, redact_headers


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
