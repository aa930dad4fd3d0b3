"""The forward listener's HTTPS: which hosts it decrypts, and (for tests) where host names connect.

With `proxy.intercept: targets` the forward listener decrypts only connections to hosts a forward target
names; every other host is tunnelled untouched (mitmproxy's `ignore_connection`), so the agent sees that
host's own certificate, pinned clients keep working, and nothing of it is journaled.
"""

from __future__ import annotations

from collections.abc import Mapping

from mitmproxy import connection
from mitmproxy.proxy import server_hooks
from mitmproxy.tls import ClientHelloData

from flakeproxy.config.proxy import split_host_port
from flakeproxy.wire.call import TargetSpec, names_host

FORWARD = "forward"


class ForwardTls:
    def __init__(
        self,
        targets: Mapping[str, TargetSpec],
        listeners: Mapping[str, str],
        intercept: str,
        resolve: Mapping[str, str] | None = None,
    ) -> None:
        self.targets = targets
        self.listeners = listeners  # mitmproxy mode spec -> listener name
        self.intercept_all = intercept == "all"
        self.resolve = {host.lower(): split_host_port(addr) for host, addr in (resolve or {}).items()}
        self._named: dict[int, tuple[str, int]] = {}  # id(server) -> the address it was asked for

    def _listener(self, client: connection.Client) -> str:
        return self.listeners.get(client.proxy_mode.full_spec, FORWARD)

    def tls_clienthello(self, data: ClientHelloData) -> None:
        """Decrypt a forward connection only when a target names its host (or intercept: all)."""
        if self.intercept_all or self._listener(data.context.client) != FORWARD:
            return
        address = data.context.server.address
        host = data.client_hello.sni or (address[0] if address else None)
        if host is not None and not names_host(self.targets, FORWARD, host):
            data.ignore_connection = True

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        """proxy.resolve (tests): connect a mapped host name to its loopback address instead of resolving it."""
        server = data.server
        if server.address is None or not self.resolve:
            return
        target = self.resolve.get(server.address[0].lower().rstrip("."))
        if target is not None:
            self._named[id(server)] = server.address
            server.address = target

    def server_connected(self, data: server_hooks.ServerConnectionHookData) -> None:
        """Give the connection its host name back once it is open, as if DNS had answered: mitmproxy keeps
        matching requests (and their host) against it by name. The address setter refuses open
        connections, hence the plain attribute write."""
        named = self._named.pop(id(data.server), None)
        if named is not None:
            object.__setattr__(data.server, "address", named)

    def server_connect_error(self, data: server_hooks.ServerConnectionHookData) -> None:
        self._named.pop(id(data.server), None)
