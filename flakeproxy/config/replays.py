"""Replay sessions and the `replays:` section: what was recorded on the wire, and how it is served back.

A session file holds one Session (or a list of them). The anchor's fields (`id`, `input`, `tool_responses`,
`contract`, `expected_failure`) keep their meaning; `exchanges` are ours: every request and response of one
episode, in order, as the proxy recorded it (secrets redacted).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from flakeproxy.config.base import StrictModel


class ToolResponse(StrictModel):
    """One answer of a tool, anchor-style: the n-th one listed for a tool is served to its n-th call."""

    tool: str = Field(min_length=1, description="A target name of the config (targets:).")
    response: str | dict[str, Any] | list[Any] | None = Field(None, description="The body: JSON, or text.")
    status: int = Field(200, ge=100, le=599)
    latency_ms: float = Field(0, ge=0, description="How long the tool took; replayed scaled by replays.speed.")


class SseEvent(StrictModel):
    """One server-sent event as it went to the agent, with its blank line."""

    data: str
    at_ms: float | None = Field(None, description="When it was sent, from the request's arrival; None: unknown.")


class WsMessage(StrictModel):
    """One WebSocket message as the agent sent or received it, with when it went."""

    sender: Literal["client", "server"] = Field(description="client: the agent sent it; server: the agent got it.")
    at_ms: float | None = Field(None, description="When it went, from the upgrade request's arrival.")
    text: str | None = Field(None, description="A text message.")
    binary: str | None = Field(None, description="A binary message, as hex.")


class Exchange(StrictModel):
    """One request the agent made and the response it got, as recorded by the proxy (secrets redacted)."""

    target: str | None = Field(None, description="The first config target the request matched.")
    listener: str
    method: str
    url: str
    request_digest: str = Field(description="sha256 of the redacted request body (strict matching).")
    request_headers: dict[str, str] = Field(default_factory=dict)
    request_body: str = ""
    status: int | None = Field(None, description="None: the exchange failed without a response.")
    response_headers: dict[str, str] = Field(default_factory=dict)
    response_body: str = Field("", description="The whole body, decoded; for SSE the events hold it.")
    events: list[SseEvent] | None = Field(None, description="SSE: the events, their boundaries and timing.")
    first_byte_ms: float | None = None
    latency_ms: float | None = Field(None, description="From the request's arrival to the response's end.")
    error: str | None = None
    closed_mid_body: bool = Field(
        False,
        description="The connection closed before the body ended: a replay sends the recorded bytes (or events), "
        "then closes the same way (no chunk terminator; declared_bytes as the Content-Length when it had one).",
    )
    declared_bytes: int | None = Field(None, ge=0, description="The Content-Length a body cut short had promised.")
    inexact: str | None = Field(
        None, description="Why this exchange cannot be replayed exactly as the agent got it (a body capped, say)."
    )
    messages: list[WsMessage] | None = Field(
        None, description="A WebSocket (status 101): its messages in order, as the agent exchanged them."
    )
    close_code: int | None = Field(None, description="A WebSocket: the code it closed with.")
    close_reason: str | None = None
    closed_by_client: bool = Field(False, description="A WebSocket: the agent closed it (a replay waits for that).")
    fault: dict[str, Any] | None = Field(
        None,
        description="The fault that changed this response when it was recorded (scenario, section, index, kind, "
        "effect): the recording holds its effect, and a replay serves it again as a replayed fault.",
    )


class Session(StrictModel):
    """One recorded episode: the prompt, and what the agent's LLM and tools answered on the wire."""

    id: str = Field(min_length=1)
    input: str = Field(description="The prompt sent to the agent.")
    name: str | None = None
    source: str | None = Field(None, description="Where it came from: flakeproxy-record, results.json, manual.")
    captured_at: str | None = None
    tool_responses: list[ToolResponse] = Field(default_factory=list)
    contract: str | None = Field(None, description="The contract that judges it (default the config's).")
    scenario: str | None = Field(
        None,
        description="The chaos_matrix scenario it was recorded under: its faults are in the recorded responses, so "
        "the invariants that apply to that scenario judge the replay (unless replays.scenario layers another).",
    )
    expected_failure: bool = Field(
        False, description="A known failure: the session passes while the contract fails, and fails once it holds."
    )
    answer: str | None = Field(None, description="The agent's answer when it was recorded.")
    turns: list[str] | None = Field(
        None, min_length=1, description="A conversation: its user turns, replayed one by one (input names it)."
    )
    answers: list[str | None] | None = Field(
        None, description="A conversation: the agent's answer to each turn when it was recorded (answer: the last)."
    )
    exchanges: list[Exchange] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="What the recording could not keep.")


class ReplayOptions(StrictModel):
    """How sessions are served back."""

    match: Literal["strict", "args", "order"] = Field(
        "strict",
        description="strict: method, URL (path and query), body digest; args: method, URL, JSON body without "
        "ignore_fields; order: the n-th call to a target gets the n-th recorded one.",
    )
    ignore_fields: list[str] = Field(default_factory=list, description="args: JSON fields left out (any depth).")
    unmatched: Literal["error", "forward", "404"] = Field(
        "error", description="A request no recording matches: error (the session is ERROR), forward, or 404."
    )
    llm: Literal["replay", "live"] = Field("replay", description="live: LLM calls go to the real LLM.")
    speed: float = Field(1.0, ge=0, description="1: recorded timing; 2: twice as fast; 0: no delays.")


class ReplaysConfig(ReplayOptions):
    """The `replays:` section: sessions inline and files, folders or globs of session files."""

    sessions: list[Session] = Field(default_factory=list)
    sources: list[str] = Field(
        default_factory=list, description="Session files, folders or globs, relative to the config file."
    )
    scenario: str | None = Field(None, description="A chaos_matrix scenario whose faults are layered on top.")

    @model_validator(mode="after")
    def _something(self) -> ReplaysConfig:
        if not self.sessions and not self.sources:
            raise ValueError("replays needs sessions or sources (files, folders, globs of session files)")
        return self


class ReplayPlan(StrictModel):
    """What the control API gets for one cell: the session and how to serve it."""

    session: Session
    options: ReplayOptions = Field(default_factory=ReplayOptions)
