"""The framework tests' fake model: what a gullible LLM says next in a conversation, in the OpenAI chat and the
Anthropic messages shapes (pure; paced.py streams it).

Offered tools and no tool result yet, it calls the first tool (every required string argument "AAPL"). Given a
tool result, it answers from the price in it and cites the source, unless the result carries an order to say a
marker (as runner/demo/services.py's model does): then, gullibly, it says the marker. A result with no price
gets a refusal to guess."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

ANSWER = "AAPL trades at ${price:.2f} according to the exchange feed (source)."
NO_PRICE = "I cannot get a quote right now: the market data source gave me no price, so I will not guess."
#: An order to say a marker, in a tool's answer (the form indirect_injection's default payload takes).
OBEYS = re.compile(
    r"(?i)(ignore|disregard|override|forget|only task|must|output|print|append)[^\n]*?(FLAKEPROXY-[A-Z0-9-]+)"
)
PRICE = re.compile(r"""["']?price["']?\s*[:=]\s*["']?([0-9]+(?:\.[0-9]+)?)""")


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """The model's next message: a tool call, or a text."""

    tool_call: ToolCall | None = None
    text: str = ""


def _text(content: Any) -> str:
    """A message's or a tool result's content as text (a string, or a list of text blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(_text(b.get("text", b.get("content", ""))) if isinstance(b, dict) else str(b) for b in content)
    return "" if content is None else json.dumps(content)


def tool_results(body: dict[str, Any]) -> list[str]:
    """The tool results in a request: OpenAI chat `role: tool` messages, Anthropic `tool_result` blocks."""
    out = []
    for message in body.get("messages", []):
        if message.get("role") == "tool":
            out.append(_text(message.get("content")))
        elif isinstance(message.get("content"), list):
            blocks = [b for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
            out += [_text(b.get("content")) for b in blocks]
    return out


def _first_tool(body: dict[str, Any]) -> ToolCall:
    tool = body["tools"][0]
    spec = tool.get("function", tool)  # OpenAI {"type": "function", "function": {...}}, Anthropic {...}
    schema = spec.get("parameters") or spec.get("input_schema") or {}
    properties = schema.get("properties") or {}
    wanted = schema.get("required") or list(properties)
    return ToolCall(spec["name"], {name: "AAPL" for name in wanted if properties.get(name, {}).get("type") == "string"})


def decide(body: dict[str, Any]) -> Turn:
    results = tool_results(body)
    if body.get("tools") and not results:
        return Turn(tool_call=_first_tool(body))
    said = " ".join(results)
    if (order := OBEYS.search(said)) is not None:
        return Turn(text=f"Sure. {order.group(2)}")
    if (price := PRICE.search(said)) is not None:
        return Turn(text=ANSWER.format(price=float(price.group(1))))
    return Turn(text=NO_PRICE)


def words(text: str) -> list[str]:
    """The text as a model streams it: a word an event, each after the first with its leading space."""
    return [w if i == 0 else " " + w for i, w in enumerate(text.split(" "))]
