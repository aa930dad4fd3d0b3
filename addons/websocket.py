"""WebSocket connections: journal their messages on the upgrade's entry, and apply a fault's plan to them.

The plan (flakeproxy.wire.websocket) decides; this addon only turns its steps into mitmproxy calls. mitmproxy
relays one message at a time per connection and waits for this hook, so a held message holds those behind it.
Events a fault sends the agent are injected (inject.websocket) and pass through this hook again, marked. A close
with a code and reason is given to mitmproxy's WebSocket layer as if the server had sent it: mitmproxy then sends
that close frame to the agent (and to the server) and ends the flow as it does for a real close.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import wsproto.events
from mitmproxy import ctx, http
from mitmproxy.proxy.layers.websocket import WebsocketLayer

from flakeproxy.addons.fault_addon import KEY, UNFINISHED, FaultAddon
from flakeproxy.addons.flow_state import FlowState
from flakeproxy.proxycore.ws_log import WsLog
from flakeproxy.wire.coverage import Coverage
from flakeproxy.wire.websocket import WsPlan, WsStep
from flakeproxy.wire.ws_usage import WsUsage

LIVE = "flakeproxy.websocket"
#: The content of the marker message that makes mitmproxy's WebSocket layer read the close put before it.
CLOSE_MARKER = b"\x00flakeproxy-close\x00"


@dataclass
class Live:
    """One open WebSocket: its log, its fault's plan and coverage, what the fault injected and is closing."""

    log: WsLog
    opened: float
    plan: WsPlan | None = None
    coverage: Coverage | None = None
    #: messages injected and not yet back through the hook, in order: content, the journal's note, whether the
    #: fault made it (else a server message queued behind those, or the close marker)
    queue: deque[tuple[bytes, str | None, bool]] = field(default_factory=deque)
    close: tuple[int, str] | None = None  # the close the fault asked for, once asked
    timer: asyncio.Task[None] | None = None
    usage: WsUsage | None = None  # an LLM target's: the usage its server reports, response by response

    def at_ms(self) -> float:
        return (time.monotonic() - self.opened) * 1000


def _ws_layer(flow: http.HTTPFlow) -> WebsocketLayer | None:
    """mitmproxy's WebSocket layer of this flow's connection (the layers are a small tree below the handler)."""
    servers: Any = ctx.master.addons.get("proxyserver")
    handler = servers.connections.get(flow.client_conn.id) if servers is not None else None
    todo: list[Any] = [handler.layer] if handler is not None else []
    seen: set[int] = set()
    while todo and len(seen) < 256:
        layer = todo.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        if isinstance(layer, WebsocketLayer) and layer.flow is flow:
            return layer
        bound = getattr(layer, "_handle_event", None)  # HttpProxy keeps its child only as its handler
        todo += [getattr(layer, "child_layer", None), getattr(layer, "layer", None), getattr(bound, "__self__", None)]
        todo += [t for t in getattr(layer, "streams", {}).values() if t is not None]
        todo = [t for t in todo if t is not None]
    return None


class WebSocketFaults:
    def __init__(self, faults: FaultAddon) -> None:
        self.faults = faults

    def websocket_start(self, flow: http.HTTPFlow) -> None:
        state: FlowState | None = flow.metadata.get(KEY)
        if state is None:
            return
        if state.watch is not None:
            state.watch.stop()  # a quiet socket is no hung upstream
        live = flow.metadata[LIVE] = Live(WsLog(), time.monotonic())
        state.entry.ws = live.log
        if any(self.faults.injector.targets[t].api for t in state.entry.targets):  # an LLM call, its usage ahead
            live.usage, state.entry.usage = WsUsage(), dict(UNFINISHED)
        if state.applying is not None and (plan := state.applying.websocket()) is not None:
            live.plan, live.coverage = plan, state.applying.coverage
            if live.plan.timer_ms is not None:
                live.timer = asyncio.create_task(self._timer(flow, live, live.plan.timer_ms))

    def response(self, flow: http.HTTPFlow) -> None:
        state: FlowState | None = flow.metadata.get(KEY)
        if flow.websocket is None and state is not None and state.applying is not None and flow.response is not None:
            state.applying.upgrade_refused(flow.response.status_code)

    async def _timer(self, flow: http.HTTPFlow, live: Live, delay_ms: int) -> None:
        await asyncio.sleep(delay_ms / 1000)
        if live.close is None and flow.websocket is not None and flow.websocket.close_code is None:
            assert live.plan is not None
            self._timed(flow, live, live.plan.on_timer())

    async def websocket_message(self, flow: http.HTTPFlow) -> None:
        live: Live | None = flow.metadata.get(LIVE)
        if live is None or flow.websocket is None:
            return
        message = flow.websocket.messages[-1]
        if live.usage is not None and not message.from_client and not message.injected:
            live.usage.feed(message.content)  # as the provider reported it, whatever a fault does next
        if message.injected:
            self._injected(flow, live, message)
            return
        if live.close is not None:
            message.drop()  # the fault has closed the connection: nothing more reaches the agent
            return
        if message.from_client or live.plan is None:
            live.log.add(message.from_client, message.content, message.is_text, live.at_ms())
            if message.from_client and live.plan is not None:
                live.plan.client_message(message.content)
            return
        step = live.plan.server_message(message.content)
        await self._apply(flow, live, message, step)

    async def _apply(self, flow: http.HTTPFlow, live: Live, message: Any, step: WsStep) -> None:
        assert live.coverage is not None
        if step.delay_ms:
            live.coverage.changed("delay", step.effect or f"held {step.delay_ms} ms")
            await asyncio.sleep(step.delay_ms / 1000)
        original, out = message.content, step.deliver
        what = "dropped" if out is None else ("rewritten" if out != original else None)
        what = what or (step.effect if step.delay_ms else None)
        queued = out is not None and bool(live.queue or step.before)  # journaled when it goes out
        if not queued:
            live.log.add(False, original, message.is_text, live.at_ms(), what)
        if out is not None and out != original:
            live.coverage.changed("message", step.effect or "message rewritten")
        elif out is None and step.close is None:
            live.coverage.changed("drop", step.effect or "message dropped")
        for event in step.before:
            self._send(flow, live, event, step.effect or "injected by fault", injected=True)
        if out is not None and queued:  # behind events injected and not yet sent: keep the order
            message.drop()
            self._send(flow, live, out, what)
        elif out is not None:
            message.content = out
        else:
            message.drop()
        if step.close is not None:
            self._close(flow, live, step.close)

    def _send(self, flow: http.HTTPFlow, live: Live, content: bytes, what: str | None, injected: bool = False) -> None:
        """Inject a message to the agent; it comes back through websocket_message, in the order sent."""
        live.queue.append((content, what, injected))
        ctx.master.commands.call("inject.websocket", flow, True, content, True)

    def _close(self, flow: http.HTTPFlow, live: Live, close: tuple[int, str]) -> None:
        live.close = close
        self._send(flow, live, CLOSE_MARKER, None)

    def _timed(self, flow: http.HTTPFlow, live: Live, step: WsStep) -> None:
        for event in step.before:
            self._send(flow, live, event, step.effect or "injected by fault", injected=True)
        if step.close is not None:
            self._close(flow, live, step.close)

    def _injected(self, flow: http.HTTPFlow, live: Live, message: Any) -> None:
        if not live.queue or live.queue[0][0] != message.content:  # not one of ours (another addon's): let it pass
            return
        content, what, injected = live.queue.popleft()
        if content == CLOSE_MARKER:
            message.drop()
            self._closing(flow, live)
            return
        if live.close is not None and flow.websocket is not None and flow.websocket.close_code is not None:
            message.drop()
            return
        live.log.add(False, message.content, message.is_text, live.at_ms(), what)
        if injected and live.coverage is not None and what is not None:
            live.coverage.changed("inject", what)

    def _closing(self, flow: http.HTTPFlow, live: Live) -> None:
        """Hand mitmproxy's WebSocket layer the close as if the server had sent it: it is read right after this
        (injected) message, and closes both sides with its code and reason."""
        layer = _ws_layer(flow)
        if layer is None or live.close is None:  # mitmproxy's layers changed shape: say so, leave the socket open
            live.close = None
            if live.coverage is not None:
                live.coverage.unchanged("the proxy found no WebSocket layer of mitmproxy's to hand the close to")
            return
        if flow.websocket is not None and flow.websocket.close_code is None:
            code, reason = live.close
            layer.server_ws._events.append(wsproto.events.CloseConnection(code, reason))
            live.log.closed(code, reason, "proxy")
            if live.coverage is not None:
                live.coverage.changed("close", f"closed {code} {reason}".rstrip())

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        state: FlowState | None = flow.metadata.get(KEY)
        live: Live | None = flow.metadata.get(LIVE)
        if state is None or live is None or flow.websocket is None:
            return
        if live.timer is not None:
            live.timer.cancel()
        by = "client" if flow.websocket.closed_by_client else "server"
        live.log.closed(flow.websocket.close_code, flow.websocket.close_reason, by)
        if live.usage is not None:
            state.entry.usage = live.usage.finish().to_json()
        self.faults.finish(flow, state)
