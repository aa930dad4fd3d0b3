"""A raw HTTP/1.1 client call that reports what the client really saw, errors included."""

from __future__ import annotations

import http.client
import time
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass
class Seen:
    status: int | None
    reason: str
    headers: dict[str, str]
    body: bytes
    error: str | None
    elapsed: float


def fetch(
    base: str,
    path: str,
    method: str = "GET",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 10,
) -> Seen:
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    start = time.monotonic()
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        status, reason = response.status, response.reason
        got = {k.lower(): v for k, v in response.getheaders()}
        try:
            data, error = response.read(), None
        except http.client.IncompleteRead as e:
            data, error = e.partial, f"IncompleteRead: {e}"
        return Seen(status, reason, got, data, error, time.monotonic() - start)
    except (http.client.RemoteDisconnected, ConnectionError) as e:
        return Seen(None, "", {}, b"", f"{type(e).__name__}: {e}", time.monotonic() - start)
    finally:
        conn.close()
