"""A hostile upstream on loopback for the hardening tests: bodies that are one long run of word characters, a
gzip bomb, OpenAI-shaped SSE streams compressed with gzip, br or zstd at a real pace, one huge SSE event, and a
chunked body that breaks. Everything it serves is made from query parameters, so one app serves every test."""

from __future__ import annotations

import asyncio
import functools
import json
import random
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import brotli
import zstandard
from aiohttp import web

from tests.support.loops import LoopThread, free_port, running_app

PACE_S = 0.02  # a real provider's gap between events
WORDS = ["The", " quote", " for", " AAPL", " is", " 189.50", " according", " to", " the", " feed."]


def hostile_text(kind: str, size: int) -> bytes:
    """`size` bytes that are one run of word characters: one character, hex, or a cut JSON string."""
    if kind == "one":
        return b"a" * size
    if kind == "hex":
        return random.Random(size).randbytes(size // 2 + 1).hex().encode()[:size]  # the same for the same size
    return (b'{"id": "' + b"b" * size)[:size]  # cut JSON past the journal's 64 KiB


@functools.cache
def gzip_bomb(mib: int) -> bytes:
    """`mib` MiB of zeros as one gzip member (about 1 KiB per MiB; mtime 0, so the same bytes every time)."""
    z, zeros = zlib.compressobj(9, zlib.DEFLATED, 31), b"\0" * (1 << 20)
    return b"".join(z.compress(zeros) for _ in range(mib)) + z.flush()


def chat_chunk(content: str | None, finish: str | None = None) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "chatcmpl-h", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [choice]}


def sse(data: Any) -> bytes:
    return f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


def chat_events(big_bytes: int = 0) -> list[bytes]:
    """An OpenAI chat stream; with big_bytes, its second event carries that many bytes of content."""
    events = [sse(chat_chunk(""))]
    if big_bytes:
        events.append(sse(chat_chunk("x" * big_bytes)))
    events += [sse(chat_chunk(w)) for w in WORDS]
    return [*events, sse(chat_chunk(None, "stop")), sse("[DONE]")]


class Encoder:
    """Compress a stream event by event, each flushed so it leaves at once (as a provider's gateway does)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        if encoding == "gzip":
            self.z: Any = zlib.compressobj(6, zlib.DEFLATED, 31)
        elif encoding == "br":
            self.z = brotli.Compressor()
        else:
            self.z = zstandard.ZstdCompressor().compressobj()

    def chunk(self, data: bytes) -> bytes:
        if self.encoding == "gzip":
            return bytes(self.z.compress(data) + self.z.flush(zlib.Z_SYNC_FLUSH))
        if self.encoding == "br":
            return bytes(self.z.process(data) + self.z.flush())
        return bytes(self.z.compress(data) + self.z.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK))

    def end(self) -> bytes:
        if self.encoding == "gzip":
            return bytes(self.z.flush(zlib.Z_FINISH))
        if self.encoding == "br":
            return bytes(self.z.finish())
        return bytes(self.z.flush())


async def _stream(request: web.Request, events: list[bytes], encoding: str | None, gap: float) -> web.StreamResponse:
    headers = {"content-type": "text/event-stream", "cache-control": "no-cache"}
    if encoding:
        headers["content-encoding"] = encoding
    response = web.StreamResponse(headers=headers)
    await response.prepare(request)
    encoder = Encoder(encoding) if encoding else None
    for i, event in enumerate(events):
        if i and gap:
            await asyncio.sleep(gap)
        await response.write(encoder.chunk(event) if encoder else event)
    if encoder:
        await response.write(encoder.end())
    await response.write_eof()
    return response


async def chat(request: web.Request) -> web.StreamResponse:
    """POST /v1/chat/completions: ?enc=gzip|br|zstd compresses the stream (br: the JSON answer too), ?big=N adds
    an N-byte event, ?gap=S paces it; ?bad_utf8=1 puts a byte that is not UTF-8 in the JSON answer."""
    body = await request.json()
    q = request.query
    if not body.get("stream"):
        message = {"role": "assistant", "content": "".join(WORDS)}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        answer = json.dumps({"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice]})
        raw = answer.encode()
        if q.get("bad_utf8"):  # one byte that is not UTF-8
            raw = raw.replace(b" feed.", b" feed \xff.")
        headers = {"content-type": "application/json"}
        if q.get("enc") == "br":
            raw, headers["content-encoding"] = brotli.compress(raw), "br"
        return web.Response(body=raw, headers=headers)
    events = chat_events(int(q.get("big", "0")))
    return await _stream(request, events, q.get("enc"), float(q.get("gap", str(PACE_S))))


async def hostile(request: web.Request) -> web.Response:
    """GET or POST /hostile?kind=one|hex|cut&size=N: a body of that shape (the request's body is read and dropped)."""
    await request.read()
    body = hostile_text(request.query.get("kind", "one"), int(request.query.get("size", "65536")))
    return web.Response(body=body, content_type=request.query.get("type", "application/octet-stream"))


async def bomb(request: web.Request) -> web.Response:
    """GET /bomb?mib=N: N MiB of zeros as a gzip JSON answer."""
    body = gzip_bomb(int(request.query["mib"]))
    return web.Response(body=body, headers={"content-type": "application/json", "content-encoding": "gzip"})


RATE_LIMITS = {"x-ratelimit-remaining-tokens": "149984", "x-ratelimit-limit-tokens": "150000"}


async def small(request: web.Request) -> web.Response:
    """GET /v1/quotes: a small JSON answer with a provider's rate-limit counters."""
    return web.json_response({"symbol": "AAPL", "price": 189.5, "source": "exchange feed"}, headers=RATE_LIMITS)


ROUTES = [
    web.post("/v1/chat/completions", chat),
    web.get("/hostile", hostile),
    web.post("/hostile", hostile),
    web.get("/bomb", bomb),
    web.get("/v1/quotes", small),
]


@contextmanager
def hostile_upstream() -> Iterator[str]:
    """The hostile app on a free loopback port; yields its URL."""
    with running_app(ROUTES, "hostile") as url:
        yield url


async def _broken_chunks(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer any request with a JSON 200 whose chunked body breaks after its first chunk (a bad chunk size)."""
    await reader.readuntil(b"\r\n\r\n")
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
    writer.write(head + b'5\r\n{"a":\r\nzz\r\nnot a chunk\r\n')
    await writer.drain()
    writer.close()


@contextmanager
def broken_chunked_upstream() -> Iterator[str]:
    """A raw HTTP/1.1 server whose chunked bodies are malformed; yields its URL."""
    port, thread = free_port(), LoopThread("broken-chunks")
    server = thread.run(asyncio.start_server(_broken_chunks, "127.0.0.1", port))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        thread.run(server.wait_closed())
        thread.close()


__all__ = ["PACE_S", "broken_chunked_upstream", "gzip_bomb", "hostile_text", "hostile_upstream"]
