"""The forward listener's door: it relays nowhere flakeproxy.wire.forward_policy refuses.

Checked three times, because a forward request reaches a server three ways: a CONNECT (refused with a 403 before
the tunnel opens), a plain-HTTP request (refused with a 403 before anything is sent), and the connection itself
(server_connect: the last word, after resolving the name once more; the checked address is the one connected
to, so a name that resolves elsewhere a moment later, DNS rebinding, changes nothing). Must be added before the
FaultAddon (a refused request gets no fault) and before ForwardTls (it judges names before proxy.resolve maps them).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
import time
from collections.abc import Callable, Mapping

from mitmproxy import connection, http
from mitmproxy.proxy import server_hooks

from flakeproxy.config.proxy import split_host_port
from flakeproxy.wire.forward_policy import Address, ForwardPolicy, Own

FORWARD = "forward"
REFUSED = "flakeproxy.forward-refused"
CACHE_S = 10.0  # how long a 403 check trusts a name's resolution (the connection itself resolves afresh)


def is_local(ip: Address) -> bool:
    """One of this host's own addresses: only those can be bound to."""
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        try:
            s.bind((str(ip), 0))
        except OSError:
            return False
    return True


class ForwardGuard:
    def __init__(
        self,
        policy: ForwardPolicy,
        listeners: Mapping[str, str],
        own: Callable[[], list[Own]],
        resolve: Mapping[str, str] | None = None,
    ) -> None:
        self.policy, self.listeners, self.own = policy, listeners, own
        self.resolve = {host.lower(): split_host_port(addr) for host, addr in (resolve or {}).items()}
        self._cache: dict[tuple[str, int], tuple[float, list[str]]] = {}
        self._pinned: dict[int, tuple[str, int]] = {}  # id(server) -> the name it was asked for

    def _forward(self, client: connection.Client) -> bool:
        return self.listeners.get(client.proxy_mode.full_spec, FORWARD) == FORWARD

    async def _addresses(self, host: str, port: int, fresh: bool = False) -> list[str]:
        name = host.lower().strip("[]").rstrip(".")
        if name in self.resolve:
            return [self.resolve[name][0]]
        try:
            return [str(ipaddress.ip_address(name.split("%")[0]))]
        except ValueError:
            pass
        cached = self._cache.get((name, port))
        if cached is not None and not fresh and time.monotonic() - cached[0] < CACHE_S:
            return cached[1]
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(name, port, type=socket.SOCK_STREAM)
        except OSError:
            return []  # unresolvable: the connection fails on its own (mitmproxy answers 502)
        found = sorted(dict.fromkeys(str(info[4][0]) for info in infos), key=lambda a: ":" in a)  # IPv4 first
        self._cache[(name, port)] = (time.monotonic(), found)
        return found

    async def _refusal(self, host: str, port: int, fresh: bool = False) -> tuple[str | None, list[str]]:
        addresses = await self._addresses(host, port, fresh)
        return self.policy.refusal(host, port, addresses, self.own()), addresses

    async def _refuse(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or not self._forward(flow.client_conn):
            return
        why, _ = await self._refusal(flow.request.host, flow.request.port)
        if why is not None:
            message = f"flakeproxy's forward listener does not relay there: {why}"
            body = json.dumps({"error": message}).encode()
            flow.response = http.Response.make(403, body, {"content-type": "application/json"})
            flow.metadata[REFUSED] = why

    async def http_connect(self, flow: http.HTTPFlow) -> None:
        """A CONNECT: refuse the tunnel before it opens."""
        await self._refuse(flow)

    async def requestheaders(self, flow: http.HTTPFlow) -> None:
        """A plain-HTTP request (or one in a decrypted tunnel): refuse it before anything is sent."""
        await self._refuse(flow)

    async def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        """The connection itself: resolve once more, refuse, or connect to the address just checked."""
        server = data.server
        if server.address is None or not self._forward(data.client):
            return
        host, port = server.address
        why, addresses = await self._refusal(host, port, fresh=True)
        if why is not None:
            server.error = f"flakeproxy's forward listener does not relay there: {why}"
        elif addresses and host.lower().rstrip(".") not in self.resolve and addresses[0] != host:
            self._pinned[id(server)] = server.address
            server.address = (addresses[0], port)

    def server_connected(self, data: server_hooks.ServerConnectionHookData) -> None:
        """Give the connection its host name back once it is open (as ForwardTls does for proxy.resolve)."""
        named = self._pinned.pop(id(data.server), None)
        if named is not None:
            object.__setattr__(data.server, "address", named)

    def server_connect_error(self, data: server_hooks.ServerConnectionHookData) -> None:
        self._pinned.pop(id(data.server), None)
