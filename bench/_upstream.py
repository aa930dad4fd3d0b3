"""A tiny upstream for the benchmarks: GET /json (a small JSON body; POST /json reads the request's first),
GET /sse (events 100 ms apart), POST /big (reads the body, answers 64 KiB), POST /sink (counts a streamed
body), GET /source?bytes=N (streams N bytes)."""

from __future__ import annotations

import asyncio
import sys

from aiohttp import web

BODY = b'{"symbol": "AAPL", "price": 189.5, "currency": "USD", "source": "exchange feed"}'


async def small(request: web.Request) -> web.Response:
    return web.Response(body=BODY, content_type="application/json")


async def small_post(request: web.Request) -> web.Response:
    await request.read()
    return web.Response(body=BODY, content_type="application/json")


async def sse(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await response.prepare(request)
    for i in range(3):
        if i:
            await asyncio.sleep(0.1)
        await response.write(f'data: {{"n": {i}}}\n\n'.encode())
    await response.write_eof()
    return response


async def big(request: web.Request) -> web.Response:
    await request.read()
    return web.Response(body=b"x" * 65536, content_type="text/plain")


async def sink(request: web.Request) -> web.Response:
    size = 0
    async for chunk in request.content.iter_any():
        size += len(chunk)
    return web.json_response({"bytes": size})


async def source(request: web.Request) -> web.StreamResponse:
    left = int(request.query["bytes"])
    response = web.StreamResponse(headers={"content-type": "application/octet-stream"})
    response.content_length = left
    await response.prepare(request)
    chunk = b"z" * (1024 * 1024)
    while left > 0:
        await response.write(chunk[:left])
        left -= len(chunk)
    await response.write_eof()
    return response


def main() -> None:
    app = web.Application()
    app.add_routes(
        [
            web.get("/json", small),
            web.post("/json", small_post),
            web.get("/sse", sse),
            web.post("/big", big),
            web.post("/sink", sink),
            web.get("/source", source),
        ]
    )
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)


if __name__ == "__main__":
    main()
