"""Read the spec's http_mock_assertions fields (request_count, last_request.body, requests[N].headers...)
from journal entries."""

from __future__ import annotations

import fnmatch
import re
from typing import Any
from urllib.parse import urlsplit

_INDEX = re.compile(r"^requests\[(\d+)\](?:\.(body|headers))?$")


class FieldMissing(Exception):
    pass


def matching(entries: list[dict[str, Any]], target: str, filters: dict[str, str]) -> list[dict[str, Any]]:
    """Entries for the target that pass the filters: method, path (a glob), any other key a header."""
    out = []
    for e in entries:
        if target not in e.get("targets", []):
            continue
        if "method" in filters and e.get("method", "").upper() != filters["method"].upper():
            continue
        if "path" in filters and not fnmatch.fnmatchcase(urlsplit(e.get("url", "")).path, filters["path"]):
            continue
        headers = e.get("request_headers") or {}
        if any(headers.get(k.lower()) != v for k, v in filters.items() if k not in ("method", "path")):
            continue
        out.append(e)
    return out


def _request(entry: dict[str, Any], part: str | None) -> Any:
    if part == "body":
        return entry.get("request_body", "")
    if part == "headers":
        return entry.get("request_headers") or {}
    return {
        "method": entry.get("method"),
        "url": entry.get("url"),
        "body": entry.get("request_body", ""),
        "headers": entry.get("request_headers") or {},
    }


def read_field(entries: list[dict[str, Any]], field: str) -> Any:
    if field == "request_count":
        return len(entries)
    if field.startswith("last_request."):
        if not entries:
            raise FieldMissing("no matching request, so no last_request")
        return _request(entries[-1], field.split(".", 1)[1])
    m = _INDEX.match(field)
    if m:
        index = int(m.group(1))
        if index >= len(entries):
            raise FieldMissing(f"requests[{index}] does not exist: {len(entries)} matching requests")
        return _request(entries[index], m.group(2))
    raise FieldMissing(f"unknown field {field}")
