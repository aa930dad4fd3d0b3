"""Whether a request the agent sends its model carries a context attack's payload (its canary or filler).

Scanned as the body passes, chunk by chunk (a marker split across two chunks is found), in the forms a
payload takes once an agent has put a tool's answer into a JSON request: as it is, JSON-escaped, and
escaped twice (a tool answer that was itself a JSON string).
"""

from __future__ import annotations

import json
from collections.abc import Mapping


def forms(marker: str) -> list[bytes]:
    """The byte strings that mean `marker` appears: raw, JSON-escaped, escaped twice (duplicates dropped)."""
    once = json.dumps(marker)[1:-1]
    twice = json.dumps(once)[1:-1]
    out: list[bytes] = []
    for text in (marker, once, twice):
        for encoded in (text.encode(), json.dumps(text, ensure_ascii=True)[1:-1].encode()):
            if encoded and encoded not in out:
                out.append(encoded)
    return out


class MarkerScan:
    """Feed a body's chunks; `found` holds the keys of the markers seen. Linear in the body's size: only the
    last (longest form - 1) bytes are kept between chunks."""

    def __init__(self, markers: Mapping[int, str]) -> None:
        self.forms = {key: forms(marker) for key, marker in markers.items()}
        self.found: set[int] = set()
        self._keep = max((len(f) for fs in self.forms.values() for f in fs), default=1) - 1
        self._tail = b""

    def feed(self, chunk: bytes) -> None:
        if len(self.found) == len(self.forms) or not chunk:
            return
        window = self._tail + chunk
        for key, wanted in self.forms.items():
            if key not in self.found and any(f in window for f in wanted):
                self.found.add(key)
        self._tail = window[-self._keep :] if self._keep else b""


def carried(markers: Mapping[int, str], body: bytes) -> list[int]:
    """The keys of the markers a whole body carries, sorted."""
    scan = MarkerScan(markers)
    scan.feed(body)
    return sorted(scan.found)
