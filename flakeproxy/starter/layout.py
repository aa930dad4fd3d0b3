"""The proxy side of a starter config: listeners, targets, and what the agent must change to go through them.

Reverse mode (the default): one listener per upstream, on 127.0.0.1:8701 and up, and the agent's base URLs
point at them (plain HTTP to the proxy, no CA). Forward mode, for an agent whose URLs cannot change: one
explicit-proxy listener (HTTPS_PROXY) on 127.0.0.1:8700, targets by host, and the agent trusts the proxy's CA.
The control API is on 127.0.0.1:8790. `Answers.base_port` (init's --base-port) moves them all: the forward
listener on it, the listeners on the ports after it, the control API 90 above it.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from flakeproxy.starter.answers import ADMIN_OFFSET, WIRING, Answers, ToolApi

HOST = "127.0.0.1"
CA_BUNDLE = "flakeproxy-ca-bundle.pem"
CA_CERT = "flakeproxy-ca.pem"


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)


class Listener(Frozen):
    name: str
    listen: str
    upstream: str


class Target(Frozen):
    name: str
    fields: dict[str, str] = Field(description="listener, host, path, api, stream: in this order, as written.")
    llm: bool


class Route(Frozen):
    """One change in the agent: a variable to set, or a base URL to replace."""

    variable: str | None = Field(None, description="e.g. OPENAI_BASE_URL; None: a tool's own base URL.")
    value: str = Field(description="What to set it to (for a tool: its new base URL).")
    placeholder: str | None = Field(None, description="The same in a command agent's env: {url:NAME}...")
    was: str | None = Field(None, description="A tool's base URL before the change.")


class Layout(Frozen):
    admin: str = Field(description="The control API's address.")
    listeners: list[Listener] = Field(default_factory=list)
    forward: str | None = None
    forward_allow: list[str] = Field(default_factory=list)
    targets: list[Target] = Field(default_factory=list)
    routes: list[Route] = Field(default_factory=list)

    @property
    def llm_targets(self) -> list[str]:
        return [t.name for t in self.targets if t.llm]

    @property
    def tool_targets(self) -> list[str]:
        return [t.name for t in self.targets if not t.llm]


def _llm_targets(answers: Answers, listener_of: dict[str, str]) -> list[Target]:
    both_openai = {"openai", "openai-responses"} <= set(answers.providers)
    targets = []
    for provider in dict.fromkeys(answers.providers):
        w = WIRING[provider]
        fields = {"listener": listener_of[w.listener]}
        if answers.forward:
            fields["host"] = urlsplit(answers.upstream(provider)).hostname or w.host
        if both_openai and w.listener == "openai":  # one listener, two APIs: told apart by path
            fields["path"] = w.path
        fields["api"] = provider
        if answers.stream:
            fields["stream"] = "true"  # what validate reads to know a stream fault can act on it
        targets.append(Target(name=w.target, fields=fields, llm=True))
    return targets


def _private(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private


def reverse_layout(answers: Answers) -> Layout:
    listeners: list[Listener] = []
    routes: list[Route] = []
    for provider in dict.fromkeys(answers.providers):
        w = WIRING[provider]
        if w.listener not in [lst.name for lst in listeners]:
            listen = f"{HOST}:{answers.base_port + 1 + len(listeners)}"
            listeners.append(Listener(name=w.listener, listen=listen, upstream=answers.upstream(provider)))
            value, placeholder = f"http://{listen}{w.suffix}", f"{{url:{w.listener}}}{w.suffix}"
            routes.append(Route(variable=w.variable, value=value, placeholder=placeholder))
    targets = _llm_targets(answers, {lst.name: lst.name for lst in listeners})
    tools = answers.tool_apis()
    for tool in tools:
        listen = f"{HOST}:{answers.base_port + 1 + len(listeners)}"
        listeners.append(Listener(name=tool.name, listen=listen, upstream=tool.upstream))
        targets += _tool_targets(answers, tools, tool, {"listener": tool.name})
        routes.append(
            Route(value=f"http://{listen}{tool.path}", placeholder=f"{{url:{tool.name}}}{tool.path}", was=tool.url)
        )
    return Layout(admin=_admin(answers), listeners=listeners, targets=targets, routes=routes)


def forward_layout(answers: Answers) -> Layout:
    targets = _llm_targets(answers, {w.listener: "forward" for w in WIRING.values()})
    llm_hosts = [urlsplit(answers.upstream(p)).hostname or "" for p in answers.providers]
    allow = [host for host in llm_hosts if _private(host)]  # a local LLM upstream is relayed only when allowed
    tools = answers.tool_apis()
    for tool in tools:
        where = {"listener": "forward", "host": tool.host}
        if tool.path and not tool.mcp:
            where["path"] = f"{tool.path}/*"
        targets += _tool_targets(answers, tools, tool, where)
        if _private(tool.host):  # the forward listener relays to loopback or private hosts only when told
            allow.append(tool.host)
    forward = f"{HOST}:{answers.base_port}"
    proxy = f"http://{forward}"
    routes = [Route(variable="HTTPS_PROXY", value=proxy)]
    plain = [t.url for t in answers.tool_apis()] + [answers.upstream(p) for p in answers.providers]
    if any(url.startswith("http://") for url in plain):
        routes.append(Route(variable="HTTP_PROXY", value=proxy))
    routes += [
        Route(variable="SSL_CERT_FILE", value=CA_BUNDLE),  # Python: httpx, openai, anthropic
        Route(variable="REQUESTS_CA_BUNDLE", value=CA_BUNDLE),  # Python: requests
        Route(variable="NODE_EXTRA_CA_CERTS", value=CA_CERT),  # Node: added to its own roots
    ]
    allowed = list(dict.fromkeys(allow))
    return Layout(admin=_admin(answers), forward=forward, forward_allow=allowed, targets=targets, routes=routes)


def _tool_targets(answers: Answers, tools: list[ToolApi], tool: ToolApi, where: dict[str, str]) -> list[Target]:
    """A tool API's target; for an MCP server (its calls are initialize, the listings and tools/call), a target per
    tool to break (`--mcp-tool`), {listener, mcp_tool}, on the first MCP server."""
    if not tool.mcp:
        return [Target(name=tool.name, fields=where, llm=False)]
    if tool != next(t for t in tools if t.mcp):
        return []
    return [
        Target(
            name=re.sub(r"[^a-z0-9_]+", "_", tool.lower()).strip("_") or "mcp_tool",
            fields={**where, "mcp_tool": tool},
            llm=False,
        )
        for tool in answers.mcp_tools
    ]


def _admin(answers: Answers) -> str:
    return f"{HOST}:{answers.base_port + ADMIN_OFFSET}"


def layout(answers: Answers) -> Layout:
    """The listeners, targets and agent changes for these answers."""
    return forward_layout(answers) if answers.forward else reverse_layout(answers)
