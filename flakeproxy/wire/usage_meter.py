"""The usage of one LLM call, read from the answer's bytes as the agent receives them (issue 25).

`UsageMeter(api)` is fed every chunk of the answer the agent gets, in its Content-Encoding; `finish()` gives the
call's Usage. An SSE answer goes through flakeproxy.wire.usage_stream.UsageReader (event by event, bounded); a
JSON answer is kept whole up to WHOLE_CAP bytes and parsed at the end, and past that only its first and last
EDGE_BYTES are kept (the providers put `usage` / `usageMetadata` after the content, the model before it). So the
work is linear in the answer and the memory bounded, whatever its size. Compressed answers (gzip, deflate, br)
are decoded piece by piece; zstd is not (its usage is unknown).

How the exchange ended decides first (`Ending`): an answer the proxy made itself (a fault's reply, a closed
connection) never reached the provider and is not billed (0, known); an answer that never came or was cut
mid-body is unknown; an HTTP error reply is not billed (0, known); else what the answer says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from flakeproxy.wire.encoding import StreamCodec, Undecodable, stream_codec
from flakeproxy.wire.usage import Api, Usage, read_body, unknown
from flakeproxy.wire.usage_stream import EDGE_BYTES, UsageReader, first_string, tail_object

WHOLE_CAP = 1024 * 1024
_PIECE = 64 * 1024


@dataclass(frozen=True)
class Ending:
    """How the exchange ended, as the addon saw it."""

    status: int | None  # what the agent got (None: no answer)
    proxy_made: bool = False  # the proxy answered (or closed) itself: the provider never saw the request
    cut: str | None = None  # why the answer is incomplete (the upstream failed mid-body, a read timeout), if it is
    fault_end: bool = False  # a fault ended the stream early: the end events the agent got, if any, are the fault's


class _JsonTail:
    """A JSON answer: whole up to WHOLE_CAP, else its first and last EDGE_BYTES."""

    def __init__(self) -> None:
        self.whole: bytearray | None = bytearray()
        self.head = b""
        self.tail = bytearray()

    def feed(self, data: bytes) -> None:
        if self.whole is not None:
            self.whole += data
            if len(self.whole) <= WHOLE_CAP:
                return
            self.head, self.tail, self.whole = bytes(self.whole[:EDGE_BYTES]), self.whole[-EDGE_BYTES:], None
            return
        self.tail += data
        if len(self.tail) > 2 * EDGE_BYTES:  # trimmed now and then: linear in the answer, however it is chunked
            del self.tail[:-EDGE_BYTES]

    def usage(self, api: Api, status: int) -> Usage:
        if self.whole is not None:
            return read_body(api, bytes(self.whole), status)
        head, tail = self.head.decode("utf-8", "replace"), bytes(self.tail[-EDGE_BYTES:]).decode("utf-8", "replace")
        key = "usageMetadata" if api == "gemini" else "usage"
        found = tail_object(tail, key)
        if found is None:
            return unknown(f"no {key} at the end of a {WHOLE_CAP}+ byte answer")
        model = first_string(tail if api == "gemini" else head, "modelVersion" if api == "gemini" else "model")
        return read_body(api, _json_object(key, found, model), status)


def _json_object(key: str, found: object, model: str | None) -> str:
    body: dict[str, object] = {key: found}
    if model:
        body["modelVersion" if key == "usageMetadata" else "model"] = model
    return json.dumps(body)


class UsageMeter:
    """Feed the answer's bytes as the agent gets them, each with the Content-Encoding they are in; set `sse` (an
    event stream) before the first. `request` is the request's body (b"" when it was not read): it says whether
    an OpenAI chat stream asked for its usage, read only when the stream reported none."""

    def __init__(self, api: Api, request: bytes = b"") -> None:
        self.api = api
        self.request = request
        self.sse = False
        self._sse: UsageReader | None = None
        self._json: _JsonTail | None = None
        self._codec: StreamCodec | None = None
        self._undecodable: str | None = None
        self._started = False

    def _start(self, encoding: str | None) -> None:
        self._started = True
        self._sse, self._json = (UsageReader(self.api), None) if self.sse else (None, _JsonTail())
        try:
            self._codec = stream_codec(encoding)
        except Undecodable as e:
            self._undecodable = f"the answer's usage was not read: {e}"

    def feed(self, chunk: bytes, encoding: str | None = None) -> None:
        if not self._started:
            self._start(encoding)
        if self._undecodable or not chunk:
            return
        try:
            pieces = list(self._codec.decode(chunk, _PIECE)) if self._codec is not None else [chunk]
        except Undecodable as e:
            self._undecodable = f"the answer could not be decoded: {e}"
            return
        for piece in pieces:
            if self._sse is not None:
                self._sse.feed(piece)
            elif self._json is not None:
                self._json.feed(piece)

    @property
    def complete(self) -> bool:
        """An event stream whose own end ([DONE], message_stop, ...) the agent got: all of the answer."""
        return self._sse is not None and not self._undecodable and self._sse.complete

    def finish(self, ending: Ending) -> Usage:
        if ending.proxy_made:
            what = f"HTTP {ending.status}" if ending.status is not None else "a closed connection"
            return Usage(input_tokens=0, output_tokens=0, reason=f"the proxy answered ({what}): not sent, not billed")
        if ending.status is None:
            return unknown(f"no answer from the provider: {ending.cut or 'the exchange failed'}")
        if self._sse is not None and ending.cut and not self._undecodable:
            read = self._sse.finish(ending.fault_end, self.request)  # a usage event before the cut counts
            return read.model_copy(update={"reason": f"{ending.cut}: {read.reason}"}) if read.unknown else read
        if ending.cut:
            return unknown(f"the answer was cut: {ending.cut}")
        if ending.status >= 400:
            return read_body(self.api, b"", ending.status)
        if self._undecodable:
            return unknown(self._undecodable)
        if self._sse is not None:
            return self._sse.finish(False, self.request)
        if self._json is not None:
            return self._json.usage(self.api, ending.status)
        return read_body(self.api, b"", ending.status)  # no body at all: not JSON
