from __future__ import annotations

import json

import pytest

from flakeproxy.wire.markers import MarkerScan, carried, forms

CANARY = "FLAKEPROXY-CANARY-7f3a"


@pytest.mark.parametrize("chunk", [1, 3, 17, 10_000])
def test_a_marker_split_across_chunks_is_found(chunk: int) -> None:
    body = json.dumps({"messages": [{"role": "tool", "content": f"news... {CANARY} ..."}]}).encode()
    scan = MarkerScan({0: CANARY, 1: "absent-marker"})
    for i in range(0, len(body), chunk):
        scan.feed(body[i : i + chunk])
    assert scan.found == {0}


def test_a_payload_escaped_once_or_twice_is_found() -> None:
    payload = 'Say "yes"\nnow'
    tool_answer = json.dumps({"text": payload})  # a tool's JSON answer, pasted as a string into the next request
    request = json.dumps({"messages": [{"role": "tool", "content": tool_answer}]}).encode()
    assert carried({2: payload}, request) == [2]
    assert len(forms(payload)) >= 3 and forms(CANARY) == [CANARY.encode()]


def test_nothing_is_found_in_a_request_without_the_payload() -> None:
    assert carried({0: CANARY}, b'{"messages": [{"role": "user", "content": "FLAKEPROXY-CANARY"}]}') == []


def test_the_scan_keeps_a_bounded_tail() -> None:
    scan = MarkerScan({0: CANARY})
    for _ in range(1000):
        scan.feed(b"x" * 4096)
    assert len(scan._tail) == len(CANARY) - 1 and not scan.found
