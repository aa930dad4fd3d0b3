"""A buffered body decoded for a fault, bounded like the wire: at most REWRITE_LIMIT_BYTES decoded.

mitmproxy's `get_content()` decodes a whole body however large it grows (2 MB of gzip can hold 2 GiB of zeros);
mitmproxy's stream_large_bodies bounds only the bytes on the wire. Here a body that decodes past the limit, or
cannot be decoded, is not given to the fault: it passes unchanged, and the reason says why.
"""

from __future__ import annotations

from mitmproxy import http

from flakeproxy.wire.encoding import TooLarge, Undecodable, decode_body, normal

#: The most a rewrite buffers, on the wire (mitmproxy's stream_large_bodies) and decoded.
REWRITE_CAP = "16m"
REWRITE_CAP_TEXT = "16 MiB"
REWRITE_LIMIT_BYTES = 16 * 1024 * 1024


def decoded(message: http.Message, what: str) -> tuple[bytes | None, str | None]:
    """(the decoded body, None), or (None, why it is not given to a fault); `what` is "answer" or "request"."""
    raw = message.raw_content or b""
    encoding = message.headers.get("content-encoding")
    try:
        return decode_body(raw, encoding, REWRITE_LIMIT_BYTES), None
    except TooLarge:
        return None, (
            f"the {what} decodes ({normal(encoding)}) to more than {REWRITE_CAP_TEXT}, the most a rewrite buffers; "
            "it passed unchanged"
        )
    except Undecodable as e:
        return None, f"the {what}'s body could not be decoded ({e}); it passed unchanged"
