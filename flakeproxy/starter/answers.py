"""What `flakeproxy init` asks: the agent, how to reach it, the LLM APIs and tool APIs it calls."""

from __future__ import annotations

import re
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from flakeproxy.config.base import HttpUrl, ImportPath

Provider = Literal["openai", "anthropic", "gemini", "openai-responses"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic", "gemini", "openai-responses")
AgentType = Literal["http", "command", "python"]
DEFAULT_PROMPT = "What can you help me with?"
DEFAULT_PROVIDERS: tuple[Provider, ...] = ("openai",)
#: The starter's ports: the forward listener on the base port, the listeners on the ports after it, the control
#: API at the base + ADMIN_OFFSET (8700, 8701..., 8790 by default).
DEFAULT_BASE_PORT = 8700
ADMIN_OFFSET = 90


#: What an LLM upstream looks like, for its errors (not an agent's chat endpoint).
LLM_ORIGIN_EXAMPLE = "e.g. https://api.openai.com, or http://127.0.0.1:11434 for a local model server"


def _origin(url: str) -> str:
    if not re.match(r"^https?://[^/\s]+", url):
        raise ValueError(f"must be an http:// or https:// URL of the LLM API's host, {LLM_ORIGIN_EXAMPLE}")
    parts = urlsplit(url)
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"give scheme://HOST[:PORT], without a path (the agent keeps its own), {LLM_ORIGIN_EXAMPLE}")
    return url.rstrip("/")


#: Where a listener forwards: scheme://HOST[:PORT] (a path would be dropped: the agent's requests keep theirs).
Origin = Annotated[str, AfterValidator(_origin)]


class ProviderWiring(BaseModel):
    """Where a provider's API lives and how its SDKs are pointed elsewhere."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    upstream: str
    host: str
    listener: str = Field(description="openai and openai-responses share one listener (one OPENAI_BASE_URL).")
    target: str
    variable: str = Field(description="The base URL variable the provider's official SDKs read.")
    suffix: str = Field("", description="What the SDK expects after the host in that variable.")
    path: str = Field(description="Its requests' paths, to tell two APIs on one listener apart.")


WIRING: dict[str, ProviderWiring] = {
    "openai": ProviderWiring(
        upstream="https://api.openai.com",
        host="api.openai.com",
        listener="openai",
        target="openai",
        variable="OPENAI_BASE_URL",
        suffix="/v1",
        path="/v1/chat/completions*",
    ),
    "openai-responses": ProviderWiring(
        upstream="https://api.openai.com",
        host="api.openai.com",
        listener="openai",
        target="openai_responses",
        variable="OPENAI_BASE_URL",
        suffix="/v1",
        path="/v1/responses*",
    ),
    "anthropic": ProviderWiring(
        upstream="https://api.anthropic.com",
        host="api.anthropic.com",
        listener="anthropic",
        target="anthropic",
        variable="ANTHROPIC_BASE_URL",
        path="/v1/messages*",
    ),
    "gemini": ProviderWiring(
        upstream="https://generativelanguage.googleapis.com",
        host="generativelanguage.googleapis.com",
        listener="gemini",
        target="gemini",
        variable="GOOGLE_GEMINI_BASE_URL",  # google-genai's client reads it
        path="/*",
    ),
}


class ToolApi(BaseModel):
    """A tool API the agent calls, from its base URL."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    url: str
    name: str
    upstream: str = Field(description="scheme://host[:port]: where the listener forwards.")
    host: str
    path: str = Field(description="The base path ('' or '/v1'), kept by the agent after the listener's address.")
    mcp: bool = Field(False, description="An MCP server (streamable HTTP) at this URL, not a tool API.")


class Answers(BaseModel):
    """Everything `flakeproxy init` needs; each field is a flag of the command and a question on a terminal."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    agent_type: AgentType = "http"
    endpoint: HttpUrl = "http://127.0.0.1:8000/chat"
    command: list[str] = Field(default_factory=lambda: ["python", "agent.py"], min_length=1)
    callable: ImportPath = "agent:run"
    tool_callables: list[ImportPath] = Field(default_factory=list, description="python agents: tools to wrap.")
    providers: list[Provider] = Field(default_factory=lambda: list(DEFAULT_PROVIDERS), min_length=1)
    tools: list[str] = Field(default_factory=list, description="Base URLs of the tool APIs the agent calls.")
    mcp: list[str] = Field(
        default_factory=list, description="URLs of the MCP servers (streamable HTTP) the agent calls, e.g. .../mcp."
    )
    mcp_tools: list[str] = Field(
        default_factory=list, description="The MCP tools to break by name (each a target with mcp_tool)."
    )
    forward: bool = Field(False, description="The agent's base URLs cannot change: HTTPS_PROXY and the CA.")
    stream: bool = Field(
        False, description="It asks its LLM APIs for streamed (SSE) answers: the matrix also cuts a stream."
    )
    prompts: list[str] = Field(default_factory=lambda: [DEFAULT_PROMPT], min_length=1)
    base_port: int = Field(
        DEFAULT_BASE_PORT,
        description="The ports the config listens on, from it: the forward listener on it, the listeners on the "
        f"ports after it, the control API on it + {ADMIN_OFFSET}; not asked on a terminal.",
    )
    llm_upstreams: dict[Provider, Origin] = Field(
        default_factory=dict,
        description="Where an LLM API really is when not at its provider (a gateway, a local fake): "
        "scheme://HOST[:PORT]; not asked on a terminal, the provider's own is right for nearly everyone.",
    )

    @field_validator("base_port")
    @classmethod
    def _a_port_with_room_above(cls, port: int) -> int:
        if not 1 <= port <= 65535 - ADMIN_OFFSET:
            raise ValueError(
                f"a port from 1 to {65535 - ADMIN_OFFSET} (the control API listens {ADMIN_OFFSET} above it)"
            )
        return port

    @model_validator(mode="after")
    def _upstreams_of_its_providers(self) -> Answers:
        stray = [p for p in self.llm_upstreams if p not in self.providers]
        if stray:
            raise ValueError(f"an upstream for {stray[0]}, not one of its LLM APIs ({', '.join(self.providers)})")
        return self

    def upstream(self, provider: Provider) -> str:
        """Where the provider's listener forwards: the one given, else the provider's own API."""
        return self.llm_upstreams.get(provider) or WIRING[provider].upstream

    def tool_apis(self) -> list[ToolApi]:
        """Each tool base URL as a named API (names from the host, unique)."""
        out: list[ToolApi] = []
        for url, mcp in [*((u, False) for u in self.tools), *((u, True) for u in self.mcp)]:
            api = parse_tool_url(url)
            if mcp:
                api = api.model_copy(update={"name": f"mcp_{api.name.removeprefix('tool_')}", "mcp": True})
            name, n = api.name, 1
            while name in {t.name for t in out} or name in {w.target for w in WIRING.values()}:
                n += 1
                name = f"{api.name}_{n}"
            out.append(api.model_copy(update={"name": name}))
        return out


def parse_tool_url(url: str) -> ToolApi:
    """A tool API's base URL (http(s)://HOST[:PORT][/PATH]); ValueError saying what is wrong."""
    parts = urlsplit(url.strip())
    bad = parts.query or parts.fragment or parts.username is not None
    if parts.scheme not in ("http", "https") or not parts.hostname or bad:
        raise ValueError(
            f"{url!r} is not a base URL; give http(s)://HOST[:PORT][/PATH], e.g. https://tools.example.com/v1"
        )
    name = re.sub(r"[^a-z0-9]+", "_", parts.hostname.lower()).strip("_") or "tool"
    return ToolApi(
        url=url.strip(),
        name=name if name[0].isalpha() else f"tool_{name}",
        upstream=f"{parts.scheme}://{parts.netloc}",
        host=parts.hostname.lower(),
        path=parts.path.rstrip("/"),
    )
