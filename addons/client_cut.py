"""Close the agent's connection in the middle of a streamed answer, with no chunk terminator.

mitmproxy has no public way to end a client connection while a response is in transit (flow.kill() takes
effect only at the next hook: mitmproxy#4711, PR #8200 open), so this reaches the connection's asyncio
writer through the proxyserver addon's handlers (present in mitmproxy 11.0 to 12.2). The bytes already
written are flushed first, then the socket is closed (FIN): the agent's HTTP client sees the body end
mid-chunk (httpx: RemoteProtocolError "incomplete chunked read").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from mitmproxy import ctx, http


def client_cutter(flow: http.HTTPFlow) -> Callable[[], None]:
    """A function that, called from a stream callable, closes flow's client connection once the chunk the
    callable returns has been handed to the socket (the close is scheduled, not done in place)."""

    def close() -> None:
        server = ctx.master.addons.get("proxyserver")
        handler = server.connections.get(flow.client_conn.id) if server is not None else None
        io = handler.transports.get(flow.client_conn) if handler is not None else None
        writer = getattr(io, "writer", None)
        if isinstance(writer, asyncio.StreamWriter) and not writer.is_closing():
            writer.close()

    def schedule() -> None:
        asyncio.get_running_loop().call_soon(close)

    return schedule
