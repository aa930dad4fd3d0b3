"""mitmproxy's master with only the addons a fault proxy needs.

mitmdump's DumpMaster loads mitmproxy's ~30 default addons, and mitmproxy calls every loaded addon for every
event of every flow: with the default set, that dispatch was a large share of the proxy's CPU per request
(issue 23: an embedded master with only these measured ~38% less CPU per request than mitmdump).

Kept, and why:
  core             the core options and commands (and their checks when options are set)
  proxyserver      the listeners: reverse, forward (regular) and the slots' copies
  next_layer       decides each connection's protocol layers (HTTP/1, HTTP/2, TLS, ...)
  tlsconfig        TLS both ways: the forward listener's CA (confdir), upstream verification
                   (ssl_insecure, ssl_verify_upstream_trusted_ca); as OwnCaTlsConfig, which loads the CA's key
                   without cryptography's RSA key check (below)
  block            refuses clients from public addresses on the forward listener (block_global), as mitmdump did
  disable_h2c      refuses an h2c upgrade mitmproxy cannot proxy, instead of passing it on half-handled
  update_alt_svc   rewrites an upstream's Alt-Svc in reverse mode, so an agent is not told to bypass the proxy
  errorcheck       a listener that cannot start ends the run (ProxyServer.run reports it as a start failure)

Dropped (none of their options is set by flakeproxy, and the sidecar never exposes mitmproxy's own options):
  the interactive and file ones (browser, command_history, comment, cut, export, readfile, save, savehar,
  script, keepserving, dumper, termlog), the rewriting ones off by default (anticache, anticomp, mapremote,
  maplocal, modifybody, modifyheaders, stickyauth, stickycookie, blocklist), replaying ones (clientplayback,
  serverplayback: flakeproxy replays with its own Replayer), authentication (proxyauth, upstream_auth), DNS
  mode's (dns_resolver, strip_dns_https_records), and onboarding (the mitm.it page; `flakeproxy ca` hands out
  the forward listener's CA instead).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from cryptography.hazmat.primitives import serialization
from mitmproxy import certs
from mitmproxy.addons import (
    block,
    core,
    disable_h2c,
    errorcheck,
    next_layer,
    proxyserver,
    tlsconfig,
    update_alt_svc,
)
from mitmproxy.master import Master
from mitmproxy.options import Options


class OwnCaTlsConfig(tlsconfig.TlsConfig):
    """mitmproxy's TlsConfig, loading the CA in proxy.ca_dir without cryptography's RSA key check.

    The check (n = p*q, p and q prime, ...) took 37 ms of every start, more than a third of what our start cost
    beyond mitmdump's (issue 23), and it guards against keys from untrusted sources (cryptography's
    `unsafe_skip_rsa_key_validation`). This key is the proxy's own, kept 0600 in proxy.ca_dir, and
    ensure_ca (addons/ca.py) has checked that it belongs to the CA's certificate.
    """

    name = "tlsconfig"  # mitmproxy's name for the addon it replaces

    def running(self) -> None:
        with _trusted_key_loading():  # mitmproxy loads its CertStore here (and nowhere else at start)
            super().running()  # type: ignore[no-untyped-call]


@contextlib.contextmanager
def _trusted_key_loading() -> Iterator[None]:
    """While inside: mitmproxy's certs.load_pem_private_key without the RSA check (it falls back to no password
    for an unencrypted key, as mitmproxy's does)."""
    original = certs.load_pem_private_key

    def load(data: bytes, password: bytes | None) -> Any:
        try:
            return serialization.load_pem_private_key(data, password, unsafe_skip_rsa_key_validation=True)
        except TypeError:
            if password is not None:
                return load(data, None)
            raise

    certs.load_pem_private_key = load
    try:
        yield
    finally:
        certs.load_pem_private_key = original


def fault_proxy_master(options: Options) -> Master:
    """A master on the running event loop with the addons above; flakeproxy's own are added by the caller."""
    master = Master(options, with_termlog=False)
    theirs = AddonGroup(
        "mitmproxy-addons",
        core.Core(),
        block.Block(),
        proxyserver.Proxyserver(),
        next_layer.NextLayer(),
        OwnCaTlsConfig(),
        disable_h2c.DisableH2C(),
        update_alt_svc.UpdateAltSvc(),
        errorcheck.ErrorCheck(),
    )
    master.addons.add(theirs)
    return master


class AddonGroup:
    """Addons that mitmproxy calls as one link of its chain, in their order (it walks an addon's `addons`).

    For each event, mitmproxy wraps each link of its chain in an error guard and a coroutine of its own, and builds
    the event's arguments again: with every addon a link, that was ~3 us per addon per event, 8 events a request
    (issue 23: CPU per request 0.87-0.89x of mitmdump's, 0.81-0.85x grouped). Each addon still finds the others by
    name (master.addons.get), and gets each hook as before. What a group changes: an exception in one addon's hook
    (a bug: mitmproxy logs it) skips the hooks after it in the group for that event, as AddonHalt would.
    """

    def __init__(self, name: str, *addons: object) -> None:
        self.name = name  # mitmproxy's name for it (two groups need two names)
        self.addons = list(addons)
