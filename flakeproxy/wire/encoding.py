"""Content-Encoding, bounded: bodies decoded only up to a limit on the decoded bytes, and SSE streams decoded
and re-encoded piece by piece.

A small compressed body can hold gigabytes (2 MB of gzip holds 2 GiB of zeros), so no decoding here ever
produces more than its caller's limit at once: a whole body past the limit is refused (TooLarge), and a
stream is decoded in pieces of at most `piece` bytes. gzip, deflate and br are decoded and re-encoded; zstd
bodies are decoded (bounded) but zstd streams are not re-encoded. brotli and zstandard come with mitmproxy;
they are imported only when a body needs them. Pure: no mitmproxy, no I/O.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Iterator
from typing import Any

IDENTITY = frozenset({"", "identity"})
_ZLIB_WBITS = {"gzip": 31, "x-gzip": 31, "deflate": 15}


class Undecodable(ValueError):
    """The body's encoding is unknown, unsupported here, or the body is not valid in it."""


class TooLarge(ValueError):
    """The body decodes to more than the limit."""


def normal(encoding: str | None) -> str:
    return (encoding or "").strip().lower()


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as e:  # pragma: no cover - both come with mitmproxy
        raise Undecodable(f"{name} is not installed") from e


class _Zlib:
    def __init__(self, wbits: int) -> None:
        self.wbits = wbits
        self.d = zlib.decompressobj(wbits)
        self.tried_raw = wbits != 15  # deflate: zlib-wrapped as the RFC says, else raw deflate as some servers send

    def pieces(self, data: bytes, piece: int) -> Iterator[bytes]:
        while True:
            try:
                out = self.d.decompress(data, piece)
            except zlib.error as e:
                if self.tried_raw:
                    raise Undecodable(str(e)) from e
                self.tried_raw, self.d = True, zlib.decompressobj(-15)
                continue
            self.tried_raw = True
            if out:
                yield out
            data = self.d.unconsumed_tail
            if data or (len(out) == piece and not self.d.eof):  # more input, or more output held with none
                continue
            if self.d.eof and self.d.unused_data and self.wbits == 31:  # a gzip of several members
                data, self.d = self.d.unused_data, zlib.decompressobj(self.wbits)
                continue
            return


class _Brotli:
    def __init__(self) -> None:
        self.d = _module("brotli").Decompressor()

    def pieces(self, data: bytes, piece: int) -> Iterator[bytes]:
        try:
            out = self.d.process(data, output_buffer_limit=piece)
            yield out
            while not self.d.can_accept_more_data():
                yield self.d.process(b"", output_buffer_limit=piece)
        except TypeError as e:  # brotli < 1.2 cannot bound its output
            raise Undecodable("this brotli cannot bound what it decodes (brotli 1.2 or later can)") from e
        except _module("brotli").error as e:
            raise Undecodable(str(e)) from e


def _decoder(encoding: str) -> _Zlib | _Brotli:
    if encoding in _ZLIB_WBITS:
        return _Zlib(_ZLIB_WBITS[encoding])
    if encoding == "br":
        return _Brotli()
    raise Undecodable(f"content-encoding {encoding!r} is not one flakeproxy decodes (gzip, deflate, br, zstd)")


def _zstd(body: bytes, limit: int, partial: bool = False) -> bytes:
    """At most limit + 1 decoded bytes; `partial`: a body's first bytes, decoded as far as they go."""
    zstandard = _module("zstandard")
    parts, size = [], 0
    try:
        with zstandard.ZstdDecompressor().stream_reader(body, read_across_frames=True) as reader:
            while size <= limit and (part := reader.read(min(limit + 1 - size, 1 << 20))):
                parts.append(part)
                size += len(part)
    except zstandard.ZstdError as e:
        if not (partial and parts):
            raise Undecodable(str(e)) from e
    return b"".join(parts)


def decode_body(body: bytes, encoding: str | None, limit: int) -> bytes:
    """The whole body decoded; TooLarge past `limit` decoded bytes, Undecodable if it cannot be decoded."""
    name = normal(encoding)
    if name in IDENTITY:
        return body
    if name == "zstd":
        out = _zstd(body, limit)
    else:
        parts, size = [], 0
        for part in _decoder(name).pieces(body, min(limit + 1, 1 << 20)):
            parts.append(part)
            size += len(part)
            if size > limit:
                break
        out = b"".join(parts)
    if len(out) > limit:
        raise TooLarge(f"it decodes ({name}) to more than {limit} bytes")
    return out


def decode_prefix(kept: bytes, encoding: str | None, limit: int) -> bytes | None:
    """The first (up to `limit`) decoded bytes of a body's first bytes, as far as they go; None when they cannot
    be decoded (then show them as they are)."""
    name = normal(encoding)
    if name in IDENTITY or not kept:
        return kept
    try:
        if name == "zstd":
            return _zstd(kept, limit, partial=True)[:limit]
        out = b""
        for part in _decoder(name).pieces(kept, limit):
            out += part[: limit - len(out)]
            if len(out) >= limit:
                break
        return out
    except Undecodable:
        return None


class StreamCodec:
    """Decodes a compressed stream piece by piece and encodes what goes out again the same way, each chunk
    flushed so that an event leaves the proxy when it is ready."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._in = _decoder(encoding)
        if encoding == "br":
            self._out: Any = _module("brotli").Compressor()
        else:
            self._out = zlib.compressobj(6, zlib.DEFLATED, _ZLIB_WBITS[encoding])

    def decode(self, chunk: bytes, piece: int) -> Iterator[bytes]:
        """The decoded bytes of chunk, in pieces of at most `piece` bytes."""
        yield from self._in.pieces(chunk, piece)

    def encode(self, data: bytes) -> bytes:
        if self.encoding == "br":
            return bytes(self._out.process(data) + self._out.flush()) if data else b""
        return self._out.compress(data) + self._out.flush(zlib.Z_SYNC_FLUSH) if data else b""

    def end(self) -> bytes:
        """The encoded stream's end (gzip's trailer, brotli's last block)."""
        if self.encoding == "br":
            return bytes(self._out.finish())
        return bytes(self._out.flush(zlib.Z_FINISH))


def stream_codec(encoding: str | None) -> StreamCodec | None:
    """The codec for a stream's Content-Encoding: None for none; Undecodable for one it cannot re-encode."""
    name = normal(encoding)
    if name in IDENTITY:
        return None
    if name == "zstd":
        raise Undecodable("zstd streams are not decoded and re-encoded by flakeproxy (gzip, deflate and br are)")
    return StreamCodec(name)
