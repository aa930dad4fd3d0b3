"""Where the forward listener may relay: never to the proxy itself, and to loopback or private addresses only for
hosts the config names.

The forward listener is an open proxy for whatever reaches it (in staging it listens on 0.0.0.0), and the agent
behind it may obey an instruction planted in a tool result. So it refuses:
- the proxy's own control API and listeners, at any address they can be reached on (loopback, an address of
  this host when they listen on 0.0.0.0, a name that resolves to one);
- any address that is not public (loopback, private, link-local such as a cloud metadata service, ...), unless
  a forward target names the host, `proxy.forward_allow` lists it (a host glob, an IP address or a network), or
  `proxy.resolve` maps it (tests).
Pure: the caller resolves names and says which addresses are this host's own.
"""

from __future__ import annotations

import fnmatch
import ipaddress
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from flakeproxy.wire.call import TargetSpec, names_host

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_allow(entry: str) -> Network | str:
    """A forward_allow entry: an IP address or network, else a host glob (lower case)."""
    try:
        return ipaddress.ip_network(entry.strip("[]"), strict=False)
    except ValueError:
        return entry.lower().rstrip(".")


def _ip(text: str) -> Address | None:
    try:
        ip = ipaddress.ip_address(text.strip("[]").split("%")[0])
    except ValueError:
        return None
    return ip.ipv4_mapped or ip if isinstance(ip, ipaddress.IPv6Address) else ip


@dataclass(frozen=True)
class Own:
    """An address the proxy listens on, and what listens there (for the refusal's wording)."""

    host: str
    port: int
    what: str


class ForwardPolicy:
    def __init__(
        self,
        targets: Mapping[str, TargetSpec],
        allow: Iterable[str] = (),
        resolve: Iterable[str] = (),
        is_local: Callable[[Address], bool] = lambda ip: False,
    ) -> None:
        self.targets = targets
        self.allow = [parse_allow(a) for a in allow]
        self.resolve = {h.lower().rstrip(".") for h in resolve}
        self.is_local = is_local  # is this one of this host's own addresses

    def refusal(self, host: str, port: int, addresses: Iterable[str], own: Iterable[Own]) -> str | None:
        """Why the forward listener must not relay to host:port, which resolves to `addresses`; None: relay it."""
        ips = [ip for ip in (_ip(a) for a in addresses) if ip is not None]
        name = host.lower().strip("[]").rstrip(".")
        for ip in ips:
            mine = next((o for o in own if self._reaches(ip, port, o)), None)
            if mine is not None:
                return f"{host}:{port} is flakeproxy's own {mine.what}"
        hidden = [ip for ip in ips if not ip.is_global]
        if hidden and not self._named(name, hidden):
            kind = "a loopback" if hidden[0].is_loopback else "a private or local"
            return (
                f"{host}:{port} is {kind} address ({hidden[0]}), and no forward target names {name!r}; "
                "name it in a target (host:) or list it in proxy.forward_allow"
            )
        return None

    def _reaches(self, ip: Address, port: int, own: Own) -> bool:
        """Whether a connection to ip:port could reach this listener (loopback, or any local address when it
        listens on all of them)."""
        if port != own.port:
            return False
        bound = _ip(own.host) if own.host != "localhost" else ipaddress.ip_address("127.0.0.1")
        if bound is None or bound.is_unspecified:
            return ip.is_loopback or ip.is_unspecified or self.is_local(ip)
        return ip == bound or (ip.is_loopback and bound.is_loopback) or ip.is_unspecified

    def _named(self, name: str, ips: list[Address]) -> bool:
        if name in self.resolve or names_host(self.targets, "forward", name):
            return True
        for entry in self.allow:
            if isinstance(entry, str) and fnmatch.fnmatchcase(name, entry):
                return True
            if not isinstance(entry, str) and all(ip.version == entry.version and ip in entry for ip in ips):
                return True
        return False
