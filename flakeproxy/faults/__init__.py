"""The fault catalogue: one small model per mode; the discriminated unions are the registry."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from flakeproxy.faults.base import Delay, Fault
from flakeproxy.faults.connection_cap import ConnectionCapFault
from flakeproxy.faults.context_length import ContextLengthFault
from flakeproxy.faults.empty import EmptyFault
from flakeproxy.faults.error import ErrorFault
from flakeproxy.faults.garbage import GarbageFault
from flakeproxy.faults.indirect_injection import IndirectInjectionAttack
from flakeproxy.faults.malformed import MalformedFault
from flakeproxy.faults.malicious_response import MaliciousResponseFault
from flakeproxy.faults.mcp_is_error import McpIsErrorFault
from flakeproxy.faults.mcp_jsonrpc_error import McpJsonRpcErrorFault
from flakeproxy.faults.memory_poisoning import MemoryPoisoningAttack
from flakeproxy.faults.mid_stream_error import MidStreamErrorFault
from flakeproxy.faults.overflow import OverflowAttack
from flakeproxy.faults.overloaded import OverloadedFault
from flakeproxy.faults.rate_limit import RateLimitFault
from flakeproxy.faults.request_too_large import RequestTooLargeFault
from flakeproxy.faults.reset import ResetFault
from flakeproxy.faults.response_drift import ResponseDriftFault
from flakeproxy.faults.schema_drift import SchemaDriftFault
from flakeproxy.faults.slow import SlowFault
from flakeproxy.faults.stream_cut import StreamCutFault
from flakeproxy.faults.stream_reset import StreamResetFault
from flakeproxy.faults.timeout import TimeoutFault
from flakeproxy.faults.tool_call_corruption import ToolCallCorruptionFault
from flakeproxy.faults.truncated import TruncatedFault
from flakeproxy.faults.truncated_response import TruncatedResponseFault
from flakeproxy.faults.ws_close import WsCloseFault
from flakeproxy.faults.ws_corrupt import WsCorruptFault
from flakeproxy.faults.ws_delay import WsDelayFault
from flakeproxy.faults.ws_drop import WsDropFault
from flakeproxy.faults.ws_error_event import WsErrorEventFault
from flakeproxy.faults.ws_rate_limit import WsRateLimitFault
from flakeproxy.faults.ws_stall import WsStallFault

#: The WebSocket faults: on a tool's socket (an MCP server behind a gateway) or an LLM's (Realtime, Responses) alike
WsFaults = (
    ConnectionCapFault
    | WsCloseFault
    | WsCorruptFault
    | WsDelayFault
    | WsDropFault
    | WsErrorEventFault
    | WsRateLimitFault
    | WsStallFault
)

ToolFault = Annotated[
    ErrorFault
    | RateLimitFault
    | TimeoutFault
    | SlowFault
    | ResetFault
    | EmptyFault
    | MalformedFault
    | TruncatedFault
    | SchemaDriftFault
    | MaliciousResponseFault
    | McpIsErrorFault
    | McpJsonRpcErrorFault
    | WsFaults,
    Field(discriminator="mode"),
]

LlmFault = Annotated[
    ErrorFault
    | RateLimitFault
    | OverloadedFault
    | TimeoutFault
    | SlowFault
    | TruncatedResponseFault
    | StreamCutFault
    | MidStreamErrorFault
    | EmptyFault
    | GarbageFault
    | ResponseDriftFault
    | ToolCallCorruptionFault
    | ContextLengthFault
    | RequestTooLargeFault
    | StreamResetFault
    | WsFaults,
    Field(discriminator="mode"),
]

ContextAttack = Annotated[
    IndirectInjectionAttack | MemoryPoisoningAttack | OverflowAttack,
    Field(discriminator="type"),
]

#: Faults that only make sense on an MCP target (one tool of an MCP server).
MCP_ONLY = (McpIsErrorFault, McpJsonRpcErrorFault)
#: Attacks aimed at what the agent sends its LLM rather than at a tool's answer.
LLM_ATTACKS = (MemoryPoisoningAttack,)
#: Faults on a WebSocket connection's messages (flakeproxy.wire.websocket).
WS_FAULTS = (
    ConnectionCapFault,
    WsCloseFault,
    WsCorruptFault,
    WsDelayFault,
    WsDropFault,
    WsErrorEventFault,
    WsRateLimitFault,
    WsStallFault,
)

__all__ = [
    "LLM_ATTACKS",
    "MCP_ONLY",
    "WS_FAULTS",
    "ConnectionCapFault",
    "ContextAttack",
    "ContextLengthFault",
    "Delay",
    "EmptyFault",
    "ErrorFault",
    "Fault",
    "GarbageFault",
    "IndirectInjectionAttack",
    "LlmFault",
    "MalformedFault",
    "MaliciousResponseFault",
    "McpIsErrorFault",
    "McpJsonRpcErrorFault",
    "MemoryPoisoningAttack",
    "MidStreamErrorFault",
    "OverflowAttack",
    "OverloadedFault",
    "RateLimitFault",
    "RequestTooLargeFault",
    "ResetFault",
    "ResponseDriftFault",
    "SchemaDriftFault",
    "SlowFault",
    "StreamCutFault",
    "StreamResetFault",
    "TimeoutFault",
    "ToolCallCorruptionFault",
    "ToolFault",
    "TruncatedFault",
    "TruncatedResponseFault",
    "WsCloseFault",
    "WsCorruptFault",
    "WsDelayFault",
    "WsDropFault",
    "WsErrorEventFault",
    "WsRateLimitFault",
    "WsStallFault",
]
