"""What a stream fault's transform is given, bounded: never an SSE event larger than a cap, and for a compressed
stream (gzip, deflate, br) the decoded events, its output encoded again the same way.

- CappedEvents hands its transform complete events only; an event that grows past MAX_EVENT_BYTES without
  ending is not held any longer: it and the rest of the stream pass unchanged, and the fault says why.
- EncodedWatch decodes each chunk in pieces of at most PIECE_BYTES, watches the transform on the decoded bytes
  (so "applied" means the same as on a plain stream) and encodes what goes out, flushed chunk by chunk.
- watch_stream puts them together, or says "compressed stream: ..." when the encoding cannot be re-encoded.
"""

from __future__ import annotations

from flakeproxy.wire.action import StreamTransform
from flakeproxy.wire.coverage import Coverage, WatchedStream
from flakeproxy.wire.encoding import StreamCodec, Undecodable, stream_codec
from flakeproxy.wire.sse import EventSplitter
from flakeproxy.wire.streams import ByteCut, EventStream

#: The largest SSE event a stream fault holds (as much as a body rewrite buffers).
MAX_EVENT_BYTES = 16 * 1024 * 1024
MAX_EVENT_TEXT = "16 MiB"
#: A compressed stream is decoded this much at a time.
PIECE_BYTES = 256 * 1024


class CappedEvents:
    """A StreamTransform that feeds `inner` whole events and gives up on one larger than `cap` bytes."""

    def __init__(self, inner: StreamTransform, coverage: Coverage, cap: int = MAX_EVENT_BYTES) -> None:
        self.inner, self.coverage, self.cap = inner, coverage, cap
        self._split = EventSplitter()
        self._passed = 0  # bytes let through unchanged after giving up
        self.passing = False
        self.done, self.cut, self.events, self.consumed = inner.done, inner.cut, inner.events, inner.consumed
        self.ended_by = inner.ended_by

    def _sync(self, out: bytes) -> bytes:
        self.done, self.cut, self.events = self.inner.done, self.inner.cut, self.inner.events
        self.consumed = self.inner.consumed + self._passed
        return out

    def feed(self, chunk: bytes) -> bytes:
        if self.passing:
            self._passed += len(chunk)
            return self._sync(chunk)
        out = self.inner.feed(b"".join(self._split.feed(chunk)))
        if self._split.held > self.cap and not self.inner.done:
            held = self._split.rest()
            self.passing, self._passed = True, self._passed + len(held)
            self.coverage.unchanged(
                f"an SSE event grew past {MAX_EVENT_TEXT}, the most a stream fault holds; the stream passed "
                "unchanged from there"
            )
            return self._sync(out + held)
        return self._sync(out)

    def finish(self) -> bytes:
        if self.passing:
            return b""
        rest = self._split.rest()
        out = self.inner.feed(rest) if rest and not self.inner.done else b""
        return self._sync(out + self.inner.finish())


class EncodedWatch(WatchedStream):
    """A WatchedStream over a compressed stream: decodes what comes in, encodes what goes out."""

    def __init__(self, transform: StreamTransform, coverage: Coverage, codec: StreamCodec) -> None:
        super().__init__(transform, coverage)
        self.codec = codec
        self._ended = False  # the encoded stream's end went out
        self._broken = False

    @property
    def done(self) -> bool:
        return self._broken or self.transform.done

    def feed(self, chunk: bytes) -> bytes:
        if self.done:  # nothing more goes out; the watch only needs to see that input went on
            super().feed(chunk)
            return b""
        outs = []
        try:
            for piece in self.codec.decode(chunk, PIECE_BYTES):
                outs.append(super().feed(piece))
                if self.transform.done:
                    break
        except Undecodable as e:
            self._broken = True
            self.coverage.unchanged(f"compressed stream: the upstream's {self.codec.encoding} broke ({e})")
        return self._encode(b"".join(outs))

    def finish(self) -> bytes:
        if self.done:
            super().finish()
            return self._encode(b"")
        return self._encode(super().finish(), last=True)

    def _encode(self, data: bytes, last: bool = False) -> bytes:
        if self._ended:
            return b""
        out = self.codec.encode(data)
        if last or self.done:
            self._ended = True
            out += self.codec.end()
        return out


def capped(transform: StreamTransform, coverage: Coverage) -> StreamTransform:
    """The transform fed whole events of at most MAX_EVENT_BYTES (ByteCut cuts anywhere, so it holds nothing)."""
    if isinstance(transform, EventStream) and not isinstance(transform, ByteCut):
        return CappedEvents(transform, coverage)
    return transform


def watch_stream(transform: StreamTransform, coverage: Coverage, encoding: str | None) -> WatchedStream | None:
    """The watched, bounded transform for a stream of this Content-Encoding; None (and the reason noted) when
    the stream cannot be decoded and encoded again, so it passes unchanged."""
    try:
        codec = stream_codec(encoding)
    except Undecodable as e:
        coverage.unchanged(f"compressed stream: {e}; the stream passed unchanged")
        return None
    held = capped(transform, coverage)
    return WatchedStream(held, coverage) if codec is None else EncodedWatch(held, coverage, codec)
