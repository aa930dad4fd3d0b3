"""Large JSON answers encoded off the event loop and written piece by piece, so proxied flows keep moving."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any, Protocol

from aiohttp import web

#: Items encoded per trip to the worker thread (each trip is one `await` on the event loop).
BATCH = 32
#: At most this many items are encoded on the event loop and sent in one piece with a length: an episode's
#: journal is usually a few entries, for which a thread hop and a chunked answer cost more than the encoding.
INLINE_ITEMS = 8


class ToJson(Protocol):
    def to_json(self) -> dict[str, Any]: ...


def encode_items(items: Sequence[ToJson]) -> bytes:
    """Items as JSON joined by ', '; each item is its own json.dumps call, so the event loop's thread
    gets the interpreter between items instead of waiting for one huge call."""
    return b", ".join(json.dumps(item.to_json()).encode() for item in items)


async def json_list_response(
    request: web.Request,
    head: dict[str, Any],
    key: str,
    items: Sequence[ToJson],
    tail: dict[str, Any] | None = None,
) -> web.StreamResponse:
    """`{**head, key: [items...], **tail}`, the items encoded in a worker thread a batch at a time and
    written as they are ready (no copy of the whole answer is ever made in one piece); a few items at once."""
    if len(items) <= INLINE_ITEMS:
        inline = json.dumps({**head, key: [item.to_json() for item in items], **(tail or {})})
        return web.Response(text=inline, content_type="application/json", charset="utf-8")
    response = web.StreamResponse(headers={"content-type": "application/json; charset=utf-8"})
    await response.prepare(request)
    await response.write(json.dumps({**head, key: []}).encode()[:-3] + b"[")  # '{..., "key": ['
    for start in range(0, len(items), BATCH):
        part = await asyncio.to_thread(encode_items, items[start : start + BATCH])
        await response.write((b", " if start else b"") + part)
    close = json.dumps(tail or {}).encode()
    await response.write(b"]" + (b", " + close[1:] if tail else b"}"))
    await response.write_eof()
    return response
