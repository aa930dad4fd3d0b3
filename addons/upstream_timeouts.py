"""Upstream timeouts per listener, which mitmproxy lacks: it has no connect timeout (mitmproxy#1095, open
since 2016) and no read timeout; its tcp_timeout is the client connection's inactivity (600 s) and
closes that connection without an answer.

One deadline per flow sent upstream, kept by a single timer handle (no task per flow):
- until the TCP connection is up, connect_timeout_ms: the connect is cancelled and mitmproxy answers 502;
- until the response headers, read_timeout_ms: a 504 is handed to mitmproxy as the upstream's answer
  (HTTP/1 upstreams; on others the connection is closed: 502);
- between body bytes, read_timeout_ms (a buffered body must be complete within it): the upstream
  connection is closed; the agent gets 502 when nothing was sent yet, else a stream that ends there.

Reaching a connection uses mitmproxy internals (proxyserver.connections, ConnectionHandler.transports
and server_event), the same in mitmproxy 11.0.2 and 12.2.3; tests/addons/test_upstream_timeouts.py
fails if they change.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mitmproxy import ctx, http
from mitmproxy.connection import Server
from mitmproxy.proxy import events

from flakeproxy.wire.action import Reply


@dataclass(frozen=True)
class Timeouts:
    connect_ms: int = 10_000
    read_ms: int = 120_000  # the config's default (flakeproxy.config.proxy.Listener)


def raw_response(reply: Reply) -> bytes:
    """An HTTP/1.1 response as an upstream would send it, ending the connection."""
    head = [f"HTTP/1.1 {reply.status} {reply.reason or 'Gateway Timeout'}"]
    head += [f"{k}: {v}" for k, v in reply.headers.items()]
    head += [f"content-length: {len(reply.body)}", "connection: close"]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + reply.body


class UpstreamWatch:
    """The upstream deadline of one flow; `expired` holds the reason once it has passed."""

    def __init__(self, flow: http.HTTPFlow, timeouts: Timeouts, gateway_timeout: Callable[[], Reply]) -> None:
        self.flow, self.timeouts, self.gateway_timeout = flow, timeouts, gateway_timeout  # made only if needed
        self.started = self.last = time.monotonic()
        self.phase = "connect"  # -> headers -> body -> done
        self.expired: str | None = None
        self._task: asyncio.Task[Any] | None = None
        first = min(timeouts.connect_ms, timeouts.read_ms) / 1000
        self._timer = asyncio.get_running_loop().call_at(self.started + first, self._check)

    def headers(self) -> None:
        """The response headers arrived: from now on, the body's bytes count."""
        self.phase, self.last = "body", time.monotonic()

    def activity(self) -> None:
        self.last = time.monotonic()

    def stop(self) -> None:
        self.phase = "done"
        self._timer.cancel()

    def _deadline(self) -> float:
        if self.phase == "connect":
            setup = self.flow.server_conn.timestamp_tcp_setup
            if setup is None:
                return self.started + self.timeouts.connect_ms / 1000
            self.phase = "headers"  # connected (or reused a connection): wait for the answer
            self.last = max(self.started, time.monotonic() - (time.time() - setup))
        return self.last + self.timeouts.read_ms / 1000

    def _check(self) -> None:
        if self.phase == "done":
            return
        deadline = self._deadline()
        if time.monotonic() < deadline:
            self._timer = asyncio.get_running_loop().call_at(deadline, self._check)
            return
        handler = ctx.master.addons.get("proxyserver").connections.get(self.flow.client_conn.id)
        if handler is None:  # the client is gone: nothing to answer
            return
        self.expired = self._expire(handler)
        self.phase = "done"

    def _expire(self, handler: Any) -> str:
        server = self.flow.server_conn
        if self.phase == "connect":
            reason = f"upstream connect timed out after {self.timeouts.connect_ms} ms"
        elif self.phase == "headers":
            reason = f"upstream sent no response within {self.timeouts.read_ms} ms"
            if server.alpn in (None, b"", b"http/1.1"):
                event = events.DataReceived(server, raw_response(self.gateway_timeout()))
                self._task = asyncio.get_running_loop().create_task(handler.server_event(event))
                return reason
        else:
            reason = f"upstream body stalled: no bytes for {self.timeouts.read_ms} ms"
        _cancel(handler, server, reason)
        return reason


def _cancel(handler: Any, server: Any, reason: str) -> None:
    """Cancel the task that connects to (or reads from) the flow's upstream; while connecting, that
    connection may not be flow.server_conn yet: it is the one to the same address not yet set up."""
    io = handler.transports.get(server)
    if io is None:
        pending = [
            c
            for c in handler.transports
            if isinstance(c, Server) and c.address == server.address and c.timestamp_tcp_setup is None
        ]
        io = handler.transports[pending[0]] if pending else None
    if io is not None and io.handler is not None:
        io.handler.cancel(reason)
