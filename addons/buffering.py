"""Which bodies the proxy holds whole and which it streams (issue 23).

Streaming every body bounded the proxy's memory for 1 GiB bodies, but mitmproxy's streaming path costs about
1.25x the CPU of its buffered one, and most of an agent's calls carry a few KiB of JSON. So a body whose length
is known and below BUFFER_BELOW_BYTES is buffered; SSE, chunked and read-until-close bodies, and large ones,
stream as before. Memory stays bounded: at most BUFFER_BELOW_BYTES per body on top of what streaming holds.
A fault behaves the same either way (tests/addons run the fault tests with both; `streamed` in the journal says
which path a response took).
"""

from __future__ import annotations

from mitmproxy import http

#: Bodies of a known length below this are buffered whole; 0 streams every one (as before issue 23).
BUFFER_BELOW_BYTES = 1024 * 1024
#: Responses too? Not by default: when an upstream fails mid-body (a reset, a stall past read_timeout_ms) after
#: its headers, mitmproxy answers 502 for a buffered response, where the agent, direct, would have had the status
#: and part of the body; streamed, it has them through the proxy too (tests/addons/test_upstream_failures.py).
#: Requests are buffered; responses wait for a way to keep that failure's shape (issue 23).
BUFFER_RESPONSES = False


def buffers(message: http.Message) -> bool:
    """Whether mitmproxy should read this body whole: its length is known (Content-Length, or an HTTP/1 request
    with neither length nor chunking, which has none) and below BUFFER_BELOW_BYTES."""
    if BUFFER_BELOW_BYTES <= 0 or "transfer-encoding" in message.headers:
        return False
    if isinstance(message, http.Response) and not BUFFER_RESPONSES:
        return False
    length = message.headers.get("content-length")
    if length is None:
        return isinstance(message, http.Request) and message.http_version.startswith("HTTP/1")
    return length.strip().isdigit() and int(length) < BUFFER_BELOW_BYTES
