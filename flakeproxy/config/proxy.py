"""The proxy's listeners and control API, and the targets faults name."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from flakeproxy.config.base import HostPort, HttpUrl, StrictModel
from flakeproxy.wire.call import TargetSpec


def is_loopback_host(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_host_port(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    return host.strip("[]"), int(port)


def shifted(address: str, by: int) -> str:
    """HOST:PORT with the port moved by `by` (a slot's copy of a listener)."""
    host, _, port = address.rpartition(":")
    return f"{host}:{int(port) + by}"


_ALLOW = re.compile(r"[A-Za-z0-9*?_.-]{1,253}|\[?[0-9A-Fa-f:.]{2,45}\]?(/[0-9]{1,3})?")


class Listener(StrictModel):
    """A reverse-proxy listener: the agent's base URL points here, and it forwards to `upstream`."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="'forward' is taken by the forward listener.")
    listen: HostPort
    upstream: HttpUrl
    connect_timeout_ms: int = Field(
        10_000, ge=1, description="No TCP connection to the upstream by then: the agent gets 502, journaled."
    )
    read_timeout_ms: int = Field(
        120_000,
        ge=1,
        description="No response headers by then (504), or no body bytes for that long (502, or a closed stream). "
        "Shorter than the official LLM SDKs' own 600 s, so a hung upstream ends here, journaled, before the "
        "agent's client gives up; raise it for non-streamed answers of slow reasoning models.",
    )
    slot_listen: list[HostPort] | None = Field(
        None,
        description="With proxy.slots: where slot 0, 1, ... of this listener listens (one address per slot); "
        "unset: listen's port + slot x proxy.slot_port_step.",
    )


class ProxyConfig(StrictModel):
    admin: HostPort = Field("127.0.0.1:8790", description="Where the control API listens.")
    admin_url: HttpUrl | None = Field(
        None,
        description="The control API of a proxy someone else started (a sidecar); the runner starts none.",
    )
    token: str | None = Field(None, description="Required on every control API call when set.")
    ready_timeout_ms: int = Field(
        60_000,
        ge=1,
        description="How long the runner waits for the control API to answer /healthz before it gives up (exit 3): "
        "a sidecar may become ready after the runner starts.",
    )
    listeners: list[Listener] = Field(default_factory=list)
    forward: HostPort | None = Field(None, description="Optional explicit-proxy listener (HTTP(S)_PROXY).")
    otlp: HostPort | None = Field(
        None,
        description="An OTLP/HTTP receiver (protobuf and JSON, POST /v1/traces) for the agent's own spans: point its "
        "OTEL_EXPORTER_OTLP_ENDPOINT here; they are kept per episode by trace id and judged by telemetry checks.",
    )
    forward_allow: list[str] = Field(
        default_factory=list,
        description="Hosts the forward listener may relay to although they are loopback or private addresses: "
        "host names or globs (e.g. tools.internal, *.svc.cluster.local), IP addresses or networks (10.0.0.0/8). "
        "Hosts a forward target names are allowed already. Never the proxy's own control API or listeners.",
    )
    ca_dir: str = Field(
        "~/.mitmproxy",
        description="The folder of the CA the forward listener signs intercepted HTTPS with (mitmproxy-ca.pem, "
        "key and certificate, mode 0600; mitmproxy-ca-cert.pem, the certificate agents trust); created on first "
        "start, reused after. `flakeproxy ca` prints it.",
    )
    intercept: Literal["targets", "all"] = Field(
        "targets",
        description="targets: the forward listener decrypts HTTPS only to hosts a forward target names (host:) and "
        "tunnels every other host untouched, with its own certificate; all: it decrypts every host.",
    )
    upstream_ca: str | None = Field(
        None,
        description="A PEM file of CA certificates trusted for upstream HTTPS besides the public ones "
        "(a private CA in staging).",
    )
    insecure_skip_upstream_verify: bool = Field(
        False,
        description="Do not verify upstream TLS certificates at all. For test upstreams only; "
        "the proxy prints a warning at start.",
    )
    slots: int = Field(
        0,
        ge=0,
        le=64,
        description="K listener sets, one per agent instance (run.attribution: slots): a request on slot k's "
        "listeners belongs to the episode slot k runs. 0: no slots.",
    )
    slot_port_step: int = Field(
        100,
        ge=1,
        le=10000,
        description="Slot k of a listener listens on its port + k x this (unless slot_listen): slot 0 is the "
        "listener itself.",
    )
    resolve: dict[str, HostPort] = Field(
        default_factory=dict,
        description="For tests: connect to these loopback HOST:PORT addresses instead of resolving these host "
        "names (the requests still name the hosts, TLS still checks them).",
    )

    @field_validator("forward_allow")
    @classmethod
    def _allow_entries(cls, entries: list[str]) -> list[str]:
        for entry in entries:
            if not _ALLOW.fullmatch(entry):
                raise ValueError(
                    f"{entry[:80]!r} is not a host name or glob, an IP address or a network (e.g. tools.internal, "
                    "*.svc.cluster.local, 10.0.0.5, 10.0.0.0/8); no scheme, no port"
                )
        return entries

    @model_validator(mode="after")
    def _checks(self) -> ProxyConfig:
        names = [listener.name for listener in self.listeners]
        if "forward" in names:
            raise ValueError("'forward' names the forward listener (proxy.forward); call this listener otherwise")
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f"listener name {name!r} is used twice; give each listener its own name")
        self._check_slots()
        where = [(lst.listen, f"listener {lst.name!r}") for lst in self.listeners] + [(self.admin, "admin")]
        where += [(self.forward, "the forward listener")] if self.forward else []
        own = {lst.name: lst.listen for lst in self.listeners} | {"forward": self.forward}
        for k in range(self.slots):  # slot 0 placed by slot_port_step is the listener itself, not a second one
            where += [(a, f"slot {k} of {name!r}") for name, a in self.slot_addresses(k).items() if a != own[name]]
        seen: dict[str, str] = {}
        for address, what in where:
            if address in seen and not address.endswith(":0"):
                fix = "; raise proxy.slot_port_step or give slot_listen" if "slot" in what + seen[address] else ""
                raise ValueError(
                    f"address {address} is used twice ({seen[address]} and {what}); each listener needs its own "
                    f"port{fix}"
                )
            seen[address] = what
        for name, address in self.resolve.items():
            if not is_loopback_host(split_host_port(address)[0]):
                raise ValueError(
                    f"resolve: {name} -> {address}: only loopback addresses are allowed (this map is for tests); "
                    "use 127.0.0.1:PORT"
                )
        host, _ = split_host_port(self.admin)
        if not is_loopback_host(host) and not self.token:
            raise ValueError(
                f"admin {self.admin} listens beyond loopback without a token; "
                "set proxy.token (e.g. token: ${FLAKEPROXY_TOKEN}) or bind to 127.0.0.1"
            )
        return self

    def _check_slots(self) -> None:
        for listener in self.listeners:
            if listener.slot_listen is not None and len(listener.slot_listen) != self.slots:
                raise ValueError(
                    f"listener {listener.name!r}: slot_listen has {len(listener.slot_listen)} address(es) and "
                    f"proxy.slots is {self.slots}; give one address per slot"
                )
            if self.slots and listener.slot_listen is None and listener.listen.endswith(":0"):
                raise ValueError(
                    f"listener {listener.name!r} listens on port 0, so its slots cannot be placed at port + "
                    "k x slot_port_step; give it a port or slot_listen"
                )
        if self.slots and self.forward and self.forward.endswith(":0"):
            raise ValueError("the forward listener listens on port 0, so its slots cannot be placed; give it a port")
        for k in range(self.slots):
            for name, address in self.slot_addresses(k).items():
                if int(address.rpartition(":")[2]) > 65535:
                    raise ValueError(
                        f"slot {k} of listener {name!r} would listen on {address}, past port 65535; lower "
                        "slot_port_step or the listener's port"
                    )

    def slot_addresses(self, k: int) -> dict[str, str]:
        """Where slot k's copy of each listener (and of the forward listener) listens: listener name -> address."""
        out = {
            lst.name: lst.slot_listen[k] if lst.slot_listen else shifted(lst.listen, k * self.slot_port_step)
            for lst in self.listeners
        }
        if self.forward:
            out["forward"] = shifted(self.forward, k * self.slot_port_step)
        return out


#: The providers' real API hosts, so a target naming one needs no `api:` (an explicit `api: null` keeps none).
PROVIDER_HOSTS = {"api.openai.com": "openai", "api.anthropic.com": "anthropic"}


class Target(StrictModel):
    """A name faults use in `tool:`: requests on a listener, narrowed by host, path, method, MCP tool or LLM API."""

    listener: str
    host: str | None = Field(
        None,
        description="A glob on the request's host name, e.g. api.openai.com or *.example.com (no port); "
        "with listener: forward, how a staging config names the real upstreams.",
    )
    path: str | None = Field(None, description="A glob on the request path, e.g. /v1/quotes*.")
    method: str | None = Field(None, pattern=r"^[A-Z]+$")
    mcp_tool: str | None = Field(None, description="One MCP tool by name (tools/call params.name).")
    api: Literal["openai", "openai-responses", "anthropic", "gemini"] | None = Field(
        None,
        description="Marks an LLM endpoint; LLM faults are shaped like this provider, and its usage read. openai and "
        "openai-responses are OpenAI's two APIs: a call to a path ending in /chat/completions or /responses (else "
        "with a body of `messages` or `input`) is taken as that one, whichever the target says.",
    )
    stream: bool | None = Field(
        None,
        description="Whether the agent asks this LLM target for streamed (SSE) answers; "
        "used only to warn about stream-only faults.",
    )
    ws: bool | None = Field(
        None,
        description="Whether the agent talks to this target over a WebSocket (the OpenAI Realtime API, Responses "
        "over WebSocket); the proxy also knows a WebSocket from its upgrade. ws_* faults and connection_cap act on "
        "its server messages.",
    )

    @field_validator("host")
    @classmethod
    def _bare_host(cls, value: str | None) -> str | None:
        if value is not None and ("/" in value or ":" in value):
            raise ValueError(
                "must be a bare host name or glob, e.g. api.openai.com or *.example.com (no scheme, no port)"
            )
        return value.lower() if value is not None else None

    @model_validator(mode="before")
    @classmethod
    def _provider_api(cls, data: Any) -> Any:
        """A target on a provider's real host is that provider's LLM API unless it says otherwise."""
        if isinstance(data, dict) and "api" not in data and "mcp_tool" not in data:
            host = data.get("host")
            api = PROVIDER_HOSTS.get(host.lower()) if isinstance(host, str) else None
            if api == "openai" and str(data.get("path") or "").startswith("/v1/responses"):
                api = "openai-responses"
            if api is not None:
                return {**data, "api": api}
        return data

    @model_validator(mode="after")
    def _one_kind(self) -> Target:
        if self.api and self.mcp_tool:
            raise ValueError("a target is an LLM (api) or an MCP tool (mcp_tool), not both")
        return self


def target_specs(targets: Mapping[str, Target]) -> dict[str, TargetSpec]:
    """What matching needs of each target: the proxy matches requests by it, and reports it on /healthz so that a
    runner can check that a sidecar's targets are its own."""
    return {name: TargetSpec(t.listener, t.path, t.method, t.mcp_tool, t.api, t.host) for name, t in targets.items()}
