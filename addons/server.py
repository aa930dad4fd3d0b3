"""Run the proxy: mitmproxy with one reverse listener per configured upstream, the optional forward listener
(HTTPS through it decrypted with the CA in proxy.ca_dir), the addon, the control API."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from mitmproxy.master import Master
from mitmproxy.options import Options

from flakeproxy.addons.ca import ensure_ca, upstream_trust
from flakeproxy.addons.control import ControlApi
from flakeproxy.addons.decoded import REWRITE_CAP
from flakeproxy.addons.fault_addon import FaultAddon
from flakeproxy.addons.forward import ForwardTls
from flakeproxy.addons.forward_guard import ForwardGuard, is_local
from flakeproxy.addons.master import AddonGroup, fault_proxy_master
from flakeproxy.addons.otlp_receiver import OtlpReceiver
from flakeproxy.addons.recorder import Recorder
from flakeproxy.addons.replay_routes import ReplayRoutes
from flakeproxy.addons.replayer import Replayer
from flakeproxy.addons.span_routes import SpanRoutes
from flakeproxy.addons.token_guard import TokenGuard
from flakeproxy.addons.upstream_timeouts import Timeouts
from flakeproxy.addons.websocket import WebSocketFaults
from flakeproxy.config import WireConfig, is_loopback_host
from flakeproxy.config.proxy import split_host_port
from flakeproxy.config.proxy import target_specs as specs_of
from flakeproxy.errors import ConfigError, InfrastructureError
from flakeproxy.proxycore.injector import Injector
from flakeproxy.proxycore.journal import Journal
from flakeproxy.proxycore.redact import Redactor
from flakeproxy.telemetry.store import SpanStore
from flakeproxy.wire.call import TargetSpec
from flakeproxy.wire.forward_policy import ForwardPolicy, Own


def target_specs(config: WireConfig) -> dict[str, TargetSpec]:
    return specs_of(config.targets)


def listener_modes(config: WireConfig) -> dict[str, str]:
    """mitmproxy mode spec -> listener name (the forward listener is named 'forward'), slots' copies included."""
    modes = {f"reverse:{lst.upstream}@{lst.listen}": lst.name for lst in config.proxy.listeners}
    if config.proxy.forward:
        modes[f"regular@{config.proxy.forward}"] = "forward"
    return {**modes, **{spec: name for spec, (name, _) in slot_modes(config).items()}}


def slot_modes(config: WireConfig) -> dict[str, tuple[str, int]]:
    """mitmproxy mode spec -> (listener name, slot) for every slot's copy of every listener (slot 0 of a listener
    placed by slot_port_step is the listener itself, so its requests belong to slot 0)."""
    upstreams = {lst.name: lst.upstream for lst in config.proxy.listeners}
    out = {}
    for k in range(config.proxy.slots):
        for name, address in config.proxy.slot_addresses(k).items():
            spec = f"regular@{address}" if name == "forward" else f"reverse:{upstreams[name]}@{address}"
            out[spec] = (name, k)
    return out


INSECURE_WARNING = (
    "warning: proxy.insecure_skip_upstream_verify is on: upstream TLS certificates are NOT verified; "
    "use it for test upstreams only, never where a real API key is sent"
)


def tls_options(config: WireConfig) -> dict[str, Any]:
    """mitmproxy's TLS options: the CA folder (made now if new), and how upstream certificates are verified."""
    files = ensure_ca(config.proxy)
    return {
        "confdir": str(files.folder),
        "ssl_insecure": config.proxy.insecure_skip_upstream_verify,
        "ssl_verify_upstream_trusted_ca": upstream_trust(config.proxy, files),
    }


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _check_free(name: str, address: str) -> None:
    host, port = split_host_port(address)
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        # as the real listeners do: a port in TIME_WAIT is free, one with a listener is not
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            raise InfrastructureError(
                f"cannot listen on {address} ({name}): {e.strerror}; stop what uses it or pick another port"
                f"{_ephemeral_hint(port)}"
            ) from e


def _ephemeral_hint(port: int) -> str:
    """Where the port is one the kernel hands out to outgoing connections: one may hold it with nothing listening
    (a trial looked for a listener that was not there)."""
    try:
        low, high = (int(n) for n in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        return ""
    if not low <= port <= high:
        return ""
    return (
        f" (it is in the range {low}-{high} the kernel gives outgoing connections, so one may hold it with nothing "
        f"listening: ports below {low} avoid that)"
    )


class _Lifecycle:
    """Starts the control API once mitmproxy's listeners are up; stops it at shutdown."""

    def __init__(self, api: ControlApi, admin: str, on_ready: Callable[[str], None]) -> None:
        self.api, self.admin, self.on_ready = api, admin, on_ready
        self.runner: web.AppRunner | None = None

    async def running(self) -> None:
        host, port = split_host_port(self.admin)
        self.runner = web.AppRunner(self.api.app, access_log=None)
        await self.runner.setup()
        await web.TCPSite(self.runner, host, port).start()
        listeners = ", ".join(f"{name} {addr}" for name, addr in self.api.listeners().items())
        self.on_ready(f"flakeproxy proxy ready: control API http://{self.admin}; listeners: {listeners or 'none'}")

    async def done(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    def bound(self) -> list[tuple[str, int]]:
        """Where the control API really listens (its port, when it was given as 0)."""
        return [(str(a[0]), int(a[1])) for a in self.runner.addresses] if self.runner is not None else []


class ProxyServer:
    """The proxy with its control API. `run()` until `shutdown()` (thread-safe) or a signal."""

    def __init__(
        self,
        config: WireConfig,
        *,
        admin: str | None = None,
        token: str | None = None,
        record: Path | None = None,
    ) -> None:
        self.config = config
        self.admin = admin or config.proxy.admin
        self.token = token if token is not None else config.proxy.token
        if not is_loopback_host(split_host_port(self.admin)[0]) and not self.token:
            raise ConfigError(
                f"control API on {self.admin} listens beyond loopback without a token; set --token or proxy.token"
            )
        self.modes = listener_modes(config)
        self.slots = {spec: k for spec, (_, k) in slot_modes(config).items()}
        self.injector, self.journal = Injector(target_specs(config)), Journal(redactor=Redactor(config.redact))
        # slot 0 of a listener placed by slot_port_step is the listener itself: one mode, both names
        self.addresses = {lst.name: lst.listen for lst in config.proxy.listeners}
        self.addresses.update({"forward": config.proxy.forward} if config.proxy.forward else {})
        self.addresses.update({f"{name}@{k}": spec.rsplit("@", 1)[1] for spec, (name, k) in slot_modes(config).items()})
        self.api = ControlApi(config, self.injector, self.journal, self.token, lambda: dict(self.addresses))
        self.recorder = Recorder(Redactor(config.redact), record)  # record and replay: whole exchanges per episode
        self.replayer = Replayer(self.injector.targets, Redactor(config.redact))
        ReplayRoutes(self.injector, self.replayer, self.recorder).add_to(self.api.app)
        self.api.on_episode_end.append(self.recorder.episode_ended)
        otlp = config.proxy.otlp  # the agent's own spans: received here, handed to the runner with GET /spans
        self.otlp = OtlpReceiver(otlp, SpanStore(), Redactor(config.redact)) if otlp else None
        if self.otlp is not None:
            self.api.on_reset.append(self.otlp.store.clear)  # POST /reset forgets the agent's spans too
        SpanRoutes(self.otlp.store if self.otlp else None, self.api.ended).add_to(self.api.app)
        self._master: Master | None = None
        self._lifecycle: _Lifecycle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def own_addresses(self) -> list[Own]:
        """Every address the proxy listens on (as configured, and as bound), for the forward listener's guard."""
        own = [Own(*split_host_port(address), f"listener {name!r}") for name, address in self.addresses.items()]
        own.append(Own(*split_host_port(self.admin), "control API"))
        own += [Own(*split_host_port(self.otlp.address), "OTLP receiver")] if self.otlp else []
        if self._lifecycle is not None:
            own += [Own(host, port, "control API") for host, port in self._lifecycle.bound()]
        if self._master is not None and (servers := self._master.addons.get("proxyserver")) is not None:
            own += [Own(str(a[0]), int(a[1]), "listener") for a in servers.listen_addrs()]
        return own

    def _guard(self) -> ForwardGuard:
        proxy = self.config.proxy
        policy = ForwardPolicy(self.injector.targets, proxy.forward_allow, proxy.resolve, is_local)
        return ForwardGuard(policy, self.modes, self.own_addresses, proxy.resolve)

    async def run(
        self,
        on_ready: Callable[[str], None] = print,
        handle_signals: bool = True,
        on_warning: Callable[[str], None] = _stderr,
    ) -> None:
        """Serve until shut down; raise InfrastructureError if a port is taken or mitmproxy cannot start."""
        for spec, name in self.modes.items():  # a slot's copy says which slot: its port is one no one wrote
            slot = f", slot {self.slots[spec]}" if self.slots.get(spec) else ""
            _check_free(f"listener {name}{slot}", spec.rsplit("@", 1)[1])
        _check_free("control API", self.admin)
        if self.otlp:
            _check_free("OTLP receiver", self.otlp.address)
        tls = tls_options(self.config)
        if self.config.proxy.insecure_skip_upstream_verify:
            on_warning(INSECURE_WARNING)
        self.api.say = on_warning  # an episode the proxy ended by itself (its lease ran out)
        self._loop = asyncio.get_running_loop()
        options = Options(mode=list(self.modes), **tls)
        master = self._master = fault_proxy_master(options)  # only the addons a fault proxy needs
        timeouts = {
            lst.name: Timeouts(lst.connect_timeout_ms, lst.read_timeout_ms) for lst in self.config.proxy.listeners
        }
        proxy = self.config.proxy
        self._lifecycle = _Lifecycle(self.api, self.admin, on_ready)
        ours = AddonGroup(
            "flakeproxy-addons",
            self._guard(),  # first: a request it refuses gets no fault, and it judges names before resolve maps them
            TokenGuard(self.token, self.admin),  # the control token never goes upstream
            ForwardTls(self.injector.targets, self.modes, proxy.intercept, proxy.resolve),
            faults := FaultAddon(self.injector, self.modes, self.journal, timeouts, self.slots),
            WebSocketFaults(faults),
            self.recorder,
            self.replayer,
            *([self.otlp] if self.otlp else []),
            self._lifecycle,
        )
        master.addons.add(ours)
        # lazy: a fault can answer when the upstream is down; bodies a rewrite would buffer stream past the cap
        master.options.update(connection_strategy="lazy", stream_large_bodies=REWRITE_CAP)
        signals = (signal.SIGTERM, signal.SIGINT) if handle_signals else ()
        for sig in signals:
            self._loop.add_signal_handler(sig, master.shutdown)
        try:
            await master.run()
        except SystemExit as e:
            raise InfrastructureError("mitmproxy failed to start (see the log above)") from e
        finally:
            for sig in signals:
                with contextlib.suppress(Exception):
                    self._loop.remove_signal_handler(sig)
            # mitmproxy leaves its listening sockets open at shutdown; close them, so that a proxy started
            # again in this process (a restart in a test) can listen on the same ports
            if (servers := master.addons.get("proxyserver")) is not None:
                await servers.servers.update([])

    def shutdown(self) -> None:
        """Stop serving; callable from any thread."""
        if self._master is not None:
            self._master.shutdown()
