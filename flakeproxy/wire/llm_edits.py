"""Actions that rewrite an LLM's answer, buffered (JSON) or streamed (SSE), in the provider's shape."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from flakeproxy.wire.action import Action
from flakeproxy.wire.json_edit import edit_json_or_text, map_strings
from flakeproxy.wire.providers import TextFn, ToolFn, llm_provider
from flakeproxy.wire.streams import MapEvents, TruncateStream
from flakeproxy.wire.text import cut_words


def loads(body: bytes) -> Any:
    """The body as JSON (ValueError if it is not); bytes that are not UTF-8 read as U+FFFD, so an answer with one
    bad byte is still rewritten as the answer it is, not cut as text into something no client can parse."""
    try:
        return json.loads(body)
    except UnicodeDecodeError:
        return json.loads(body.decode("utf-8", "replace"))


def llm_text_action(
    api: str | None,
    text: TextFn | None = None,
    tool: ToolFn | None = None,
    per_stream: Callable[[], TextFn] | None = None,
    tool_per_stream: Callable[[], ToolFn] | None = None,
) -> Action:
    """Rewrite the answer's text (and/or tool calls) wherever the provider puts them.

    per_stream / tool_per_stream make a fresh function for each stream (for transforms that keep state).
    """
    if api is None:  # not an LLM target (e.g. aimed by match_url): every JSON string is text
        fn = text or (lambda t: t)
        return Action(rewrite_body=lambda body: edit_json_or_text(body, lambda d: map_strings(d, fn), fn))
    shape = llm_provider(api)

    def rewrite(body: bytes) -> bytes:
        try:
            data = loads(body)
        except ValueError:
            return body
        return json.dumps(shape.map_json(data, text, tool)).encode()

    return Action(
        rewrite_body=rewrite,
        stream=lambda: MapEvents(
            shape, per_stream() if per_stream else text, tool_per_stream() if tool_per_stream else tool
        ),
    )


def truncate_action(api: str | None, max_words: int) -> Action:
    """Cut the answer to max_words words and mark it as cut by the token limit."""
    shape = llm_provider(api)

    def rewrite(body: bytes) -> bytes:
        try:
            data = loads(body)
        except ValueError:
            return cut_words(body.decode("utf-8", "replace"), max_words).encode()
        budget_text = lambda t: cut_words(t, max_words)  # noqa: E731
        return json.dumps(shape.map_json(data, budget_text, None, finish="length")).encode()

    return Action(rewrite_body=rewrite, stream=lambda: TruncateStream(shape, max_words))
