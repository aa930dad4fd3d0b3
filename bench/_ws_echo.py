"""A WebSocket echo server for bench/perf_ws.py: python bench/_ws_echo.py PORT (every message sent back)."""

from __future__ import annotations

import asyncio
import sys

from websockets.asyncio.server import ServerConnection, serve


async def echo(ws: ServerConnection) -> None:
    async for message in ws:
        await ws.send(message)


async def main(port: int) -> None:
    async with serve(echo, "127.0.0.1", port, compression=None):
        await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
