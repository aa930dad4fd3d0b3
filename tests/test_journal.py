from __future__ import annotations

from flakeproxy.proxycore.journal import BodyCapture, Journal, JournalEntry, readable, redact_headers
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


def _entry(seq: int, cell: str | None, body: str = "") -> JournalEntry:
    return JournalEntry(seq, cell, [], 0.0, "l", [], "GET", "u", {}, body, len(body))


def test_journal_is_bounded_in_bytes_oldest_first() -> None:
    one = _entry(0, None, "x" * 1000).weight()
    journal = Journal(max_bytes=3 * one)
    for i in range(1, 6):
        journal.add(_entry(i, "a" if i % 2 else "b", "x" * 1000))
    assert [e.seq for e in journal.entries] == [3, 4, 5] and journal.dropped == 2 and journal.bytes == 3 * one
    assert [e.seq for e in journal.for_episode("a")] == [3, 5]


def test_an_entry_that_grows_is_counted_when_it_settles() -> None:
    journal = Journal(max_bytes=2 * _entry(0, None).weight() + 100_000)
    first, second = _entry(1, None), _entry(2, None)
    journal.add(first)
    journal.add(second)
    second.capture = BodyCapture(cap=200_000)
    second.capture.add(b"y" * 150_000)
    journal.settle(second)
    assert [e.seq for e in journal.entries] == [2] and journal.dropped == 1
    journal.settle(first)  # dropped already: no longer counted
    assert journal.bytes == second.weight()


def test_a_single_entry_over_the_budget_stays() -> None:
    journal = Journal(max_bytes=10)
    journal.add(_entry(1, None, "x" * 100))
    assert len(journal.entries) == 1 and journal.dropped == 0


def test_pages_follow_seq_and_filter() -> None:
    journal = Journal()
    for i in range(1, 8):
        journal.add(_entry(i, None if i % 3 == 0 else "a"))
    seqs = lambda page: ([e.seq for e in page[0]], page[1])  # noqa: E731
    assert seqs(journal.page(limit=3)) == ([1, 2, 3], 3)
    assert seqs(journal.page(since=3, limit=3)) == ([4, 5, 6], 6)
    assert seqs(journal.page(since=6, limit=3)) == ([7], None)
    assert seqs(journal.page(limit=4)) == ([1, 2, 3, 4], 4)
    assert seqs(journal.page(limit=7)) == ([1, 2, 3, 4, 5, 6, 7], None)
    assert seqs(journal.page(episode="a", limit=2)) == ([1, 2], 2)
    assert seqs(journal.page(unattributed=True)) == ([3, 6], None)
    assert seqs(journal.page(since=3, unattributed=True, limit=1)) == ([6], None)


def test_to_json_reads_the_live_parts_without_changing_the_entry() -> None:
    entry = _entry(1, "a")
    decided = {"scenario": "s", "section": "llm_faults", "index": 0, "kind": "stream_cut", "call_index": 1, "seed": 3}
    entry.fault = dict(decided)
    entry.capture, entry.coverage = BodyCapture(cap=4), Coverage("stream_cut")
    entry.capture.add(b"abcdef")
    data = entry.to_json()
    assert (data["response_body"], data["response_bytes"], data["body_truncated"]) == ("abcd", 6, True)
    fault = data["fault"]
    assert {k: fault[k] for k in decided} == decided
    assert (fault["applied"], fault["effect"], fault["settled"]) == (False, None, False)
    assert (entry.response_body, entry.response_bytes, entry.fault) == ("", 0, decided)
    entry.coverage.closed()
    assert entry.to_json()["fault"]["effect"] == "connection closed"


def test_a_compressed_capture_reads_as_text() -> None:
    import gzip
    import zlib

    body = b'{"a": "' + b"x" * 200_000 + b'"}'
    capture = BodyCapture(encoding="gzip")
    capture.add(gzip.compress(body))
    assert capture.text() == body[:65536].decode()
    assert readable(zlib.compress(b"hi"), "deflate") == b"hi"
    assert readable(b"not gzip", "gzip") == b"not gzip"
    assert readable(b"br bytes", "br") == b"br bytes"


def test_an_episodes_entries_are_its_own_and_leave_with_the_oldest() -> None:
    """for_episode reads the episode's own index (ending an episode does not scan the whole journal); trimming the
    oldest entries takes them out of it too, and clear() empties it."""
    journal = Journal(max_bytes=10_000)
    for seq in range(1, 13):
        journal.add(_entry(seq, f"c{seq % 3}", "x" * 500))
    held = {e.seq for e in journal.entries}
    assert journal.dropped > 0 and len(held) < 12
    for cell in ("c0", "c1", "c2"):
        expected = [e.seq for e in journal.entries if e.episode == cell]
        assert [e.seq for e in journal.for_episode(cell)] == expected and expected
    assert journal.for_episode("nobody") == []
    journal.clear()
    assert journal.for_episode("c0") == []


def test_traffic_of_no_episode_has_its_own_smaller_budget_and_never_evicts_an_episodes_entries() -> None:
    one = _entry(0, None, "x" * 1000).weight()
    journal = Journal(max_bytes=10 * one, loose_max_bytes=2 * one)
    journal.add(_entry(1, "e1", "x" * 1000))
    for seq in range(2, 40):  # a sidecar's pass-through traffic, long after the episode's one request
        journal.add(_entry(seq, None, "x" * 1000))
    assert [e.seq for e in journal.entries] == [1, 38, 39] and journal.dropped == 36
    assert [e.seq for e in journal.for_episode("e1")] == [1]
    assert [e.seq for e in journal.page(unattributed=True)[0]] == [38, 39]
    assert [e.seq for e in journal.page(since=1)[0]] == [38, 39]


def test_an_entrys_weight_is_what_it_really_holds() -> None:
    """The budget means bytes of memory: a small exchange as the addon records it (redacted headers, bodies, a
    settled response) weighs within a third of what tracemalloc sees it keep alive."""
    import gc
    import tracemalloc

    from flakeproxy.proxycore.redact import DEFAULT

    def exchange(seq: int) -> JournalEntry:
        request = [
            ("Host", "127.0.0.1:4000"),
            ("User-Agent", "agent/1.0"),
            ("Content-Type", "application/json"),
            ("Content-Length", "52"),
            ("Accept", "*/*"),
            ("Authorization", f"Bearer sk-{seq:040d}"),
        ]
        entry = JournalEntry(
            seq,
            None,
            [],
            1.0,
            "tools",
            ["quotes"],
            "POST",
            f"http://127.0.0.1:4000/q?n={seq}",
            DEFAULT.headers(request),
            '{"symbol": "AAPL", "fields": ["price", "currency"]}',
            52,
        )
        entry.status, entry.latency_ms, entry.complete = 200, 1.5, True
        entry.response_headers = DEFAULT.headers(
            [("Content-Type", "application/json"), ("Content-Length", "33"), ("Date", "Tue, 24 Nov 2026 07:00:00 GMT")]
        )
        entry.capture = BodyCapture()
        entry.capture.add(b'{"price": %d.0, "currency": "USD"}' % seq)
        return entry

    journal = Journal()
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for seq in range(1, 2001):
            journal.add(entry := exchange(seq))
            journal.settle(entry)
        gc.collect()
        real = (tracemalloc.get_traced_memory()[0] - before) / 2000
    finally:
        tracemalloc.stop()
    assert 0.75 * real <= journal.bytes / 2000 <= 1.33 * real, (real, journal.bytes / 2000)
