"""The staging world for forward-listener tests: HTTPS upstreams under the providers' real host names (on
loopback, certificates from a test CA of our own), a config whose targets name those hosts, and a raw HTTPS
client that goes through the forward listener by CONNECT and reports the certificate it was shown.

The proxy reaches the real-looking names through `proxy.resolve` (test only: host -> 127.0.0.1:PORT), so
no name is looked up anywhere and nothing leaves loopback; the clients never resolve them either (they
send CONNECT host:443 to the proxy)."""

from __future__ import annotations

import http.client
import ssl
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.loops import free_port
from tests.support.tls import UpstreamCa, https_upstream, make_ca
from tests.support.upstream import Upstream

LLM_HOSTS = ["api.openai.com", "api.anthropic.com"]
OTHER_HOST = "tools.staging.test"  # no target names it: tunnelled untouched with intercept: targets


@dataclass
class World:
    ca: UpstreamCa
    llm: Upstream  # serves both providers' hosts
    other: Upstream

    def resolve(self) -> dict[str, str]:
        llm, other = self.llm.url.removeprefix("https://"), self.other.url.removeprefix("https://")
        return {**dict.fromkeys(LLM_HOSTS, llm), OTHER_HOST: other}


@contextmanager
def staging_world(folder: Path) -> Iterator[World]:
    ca = make_ca(folder)
    with ExitStack() as stack:
        llm = stack.enter_context(https_upstream(ca.leaf(LLM_HOSTS)))
        other = stack.enter_context(https_upstream(ca.leaf([OTHER_HOST])))
        yield World(ca, llm, other)


def forward_config(world: World, ca_dir: Path, **proxy: Any) -> tuple[str, str]:
    """A staging config: the forward listener, targets by the providers' real hosts (api: inferred), the test
    CA trusted for upstreams. Returns (config text, forward HOST:PORT)."""
    forward = f"127.0.0.1:{free_port()}"
    section = {
        "admin": f"127.0.0.1:{free_port()}",
        "forward": forward,
        "ca_dir": str(ca_dir),
        "upstream_ca": str(world.ca.cert_file),
        "resolve": world.resolve(),
        **proxy,
    }
    targets = {
        "openai": {"listener": "forward", "host": "api.openai.com"},
        "anthropic": {"listener": "forward", "host": "api.anthropic.com"},
    }
    return yaml.safe_dump({"version": "2.0", "proxy": section, "targets": targets}, sort_keys=False), forward


def trust_file(folder: Path, *pems: Path) -> Path:
    """One PEM file holding these certificates (what SSL_CERT_FILE points at)."""
    path = folder / f"trust-{len(list(folder.glob('trust-*')))}.pem"
    path.write_text("".join(p.read_text() for p in pems))
    return path


@dataclass
class Seen:
    status: int
    body: bytes
    issuer: str  # the common name of the issuer of the certificate the client was shown


def through_forward(forward: str, host: str, path: str, trust: Path) -> Seen:
    """GET https://host/path through the forward listener (CONNECT), trusting only the certificates in trust."""
    proxy_host, proxy_port = forward.rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(trust))
    conn = http.client.HTTPSConnection(proxy_host, int(proxy_port), context=context, timeout=10)
    conn.set_tunnel(host, 443)
    try:
        conn.request("GET", path)
        assert isinstance(conn.sock, ssl.SSLSocket)
        cert = conn.sock.getpeercert()
        response = conn.getresponse()
        body = response.read()
        issuer = dict(pair[0] for pair in cert["issuer"])["commonName"] if cert else ""
        return Seen(response.status, body, str(issuer))
    finally:
        conn.close()
