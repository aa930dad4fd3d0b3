"""The token usage an LLM call reports on the wire, read as the provider sends it: never guessed, never 0 for
"not reported".

One meaning across providers: `input_tokens` counts every input token (cached ones included), `output_tokens`
every output token (reasoning included); `cached_tokens` and `cache_write_tokens` are the parts of the input
read from and written to the provider's prompt cache, `reasoning_tokens` the part of the output spent on
reasoning. Where the providers' fields come from (the official SDKs' types, which are generated from the APIs'
specifications, and the providers' docs):

- OpenAI chat completions (openai-python `types/completion_usage.py`; platform.openai.com/docs/api-reference/
  chat/object): `usage.prompt_tokens` (cached included), `completion_tokens` (reasoning included),
  `prompt_tokens_details.cached_tokens` / `.cache_write_tokens`, `completion_tokens_details.reasoning_tokens`.
  Streamed, only with `stream_options.include_usage`: "an additional chunk ... before the data: [DONE] message
  ... the choices field will always be an empty array ... If the stream is interrupted, you may not receive the
  final usage chunk" (`types/chat/chat_completion_stream_options_param.py`).
- OpenAI Responses (`types/responses/response_usage.py`): `usage.input_tokens`, `output_tokens`,
  `input_tokens_details.cached_tokens` / `.cache_write_tokens`, `output_tokens_details.reasoning_tokens`;
  streamed, in the `response` of `response.completed` (or `response.incomplete` / `response.failed`).
- Anthropic messages (anthropic-sdk-python `types/usage.py`, `types/message_delta_usage.py`;
  docs.anthropic.com/en/docs/build-with-claude/prompt-caching): `usage.input_tokens` counts only the tokens
  after the last cache breakpoint, so the input is `input_tokens + cache_read_input_tokens +
  cache_creation_input_tokens`; `output_tokens`; `output_tokens_details.thinking_tokens`. Streamed:
  `message_start`'s `message.usage` (input and cache counts, a provisional output count), then `message_delta`'s
  `usage`, whose counts are cumulative totals that overwrite (the SDK's `accumulate_event`).
- Gemini (google-genai `types.GenerateContentResponseUsageMetadata`; ai.google.dev/api/generate-content):
  `usageMetadata.promptTokenCount` ("also includes the number of tokens in the cached content"),
  `toolUsePromptTokenCount` (input too), `candidatesTokenCount`, `thoughtsTokenCount` (output, outside
  candidatesTokenCount: totalTokenCount is the sum of all four), `cachedContentTokenCount`. The API's JSON
  omits counts that are 0, so a missing count next to others is 0. Streamed, every chunk may carry it; the
  one at or after the chunk with `finishReason` is the final count.

A call whose usage was not reported (a cut stream, include_usage off, a server that omits it) is `unknown`, with
the reason and whatever counts were seen. An HTTP error reply reports none and is not billed: zero, known.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Api = Literal["openai", "openai-responses", "anthropic", "gemini"]


class Usage(BaseModel):
    """The usage of one LLM call (see the module's docstring for what each count means)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    input_tokens: int | None = Field(None, ge=0)
    output_tokens: int | None = Field(None, ge=0)
    cached_tokens: int | None = Field(None, ge=0)
    cache_write_tokens: int | None = Field(None, ge=0)
    reasoning_tokens: int | None = Field(None, ge=0)
    model: str | None = None  # the model the answer names (it may be more exact than the request's)
    unknown: bool = False
    reason: str | None = None  # why it is unknown, or a note on a known one (an error reply is not billed)

    @model_validator(mode="after")
    def _consistent(self) -> Usage:
        if self.unknown and not self.reason:
            raise ValueError("unknown usage needs a reason")
        if not self.unknown and (self.input_tokens is None or self.output_tokens is None):
            raise ValueError("known usage needs input_tokens and output_tokens")
        return self

    @property
    def total_tokens(self) -> int | None:
        if self.input_tokens is None or self.output_tokens is None:
            return None
        return self.input_tokens + self.output_tokens

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def unknown(reason: str, **seen: Any) -> Usage:
    """Usage that was not (fully) reported: the reason, and the counts that were."""
    return Usage(unknown=True, reason=reason, **seen)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _known(input_tokens: int | None, output_tokens: int | None, missing: str, **rest: Any) -> Usage:
    if input_tokens is None or output_tokens is None:
        return unknown(missing, input_tokens=input_tokens, output_tokens=output_tokens, **rest)
    return Usage(input_tokens=input_tokens, output_tokens=output_tokens, **rest)


def openai_chat(usage: Any, model: str | None = None) -> Usage:
    """A chat completion's `usage` object."""
    u = _dict(usage)
    prompt, completion = _dict(u.get("prompt_tokens_details")), _dict(u.get("completion_tokens_details"))
    return _known(
        _int(u.get("prompt_tokens")),
        _int(u.get("completion_tokens")),
        "usage without prompt_tokens and completion_tokens",
        cached_tokens=_int(prompt.get("cached_tokens")),
        cache_write_tokens=_int(prompt.get("cache_write_tokens")),
        reasoning_tokens=_int(completion.get("reasoning_tokens")),
        model=model,
    )


def openai_responses(usage: Any, model: str | None = None) -> Usage:
    """A response's `usage` object (Responses API)."""
    u = _dict(usage)
    given, made = _dict(u.get("input_tokens_details")), _dict(u.get("output_tokens_details"))
    return _known(
        _int(u.get("input_tokens")),
        _int(u.get("output_tokens")),
        "usage without input_tokens and output_tokens",
        cached_tokens=_int(given.get("cached_tokens")),
        cache_write_tokens=_int(given.get("cache_write_tokens")),
        reasoning_tokens=_int(made.get("reasoning_tokens")),
        model=model,
    )


def anthropic(usage: Any, model: str | None = None) -> Usage:
    """A message's `usage` object: input is input_tokens plus the cache reads and writes."""
    u = _dict(usage)
    fresh, read, wrote = (
        _int(u.get(k)) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
    return _known(
        None if fresh is None else fresh + (read or 0) + (wrote or 0),
        _int(u.get("output_tokens")),
        "usage without input_tokens and output_tokens",
        cached_tokens=read,
        cache_write_tokens=wrote,
        reasoning_tokens=_int(_dict(u.get("output_tokens_details")).get("thinking_tokens")),
        model=model,
    )


def gemini(usage: Any, model: str | None = None) -> Usage:
    """A GenerateContentResponse's `usageMetadata` (counts the API leaves out are 0)."""
    u = _dict(usage)
    count = {k: _int(u.get(k)) or 0 for k in ("promptTokenCount", "toolUsePromptTokenCount", "candidatesTokenCount")}
    thoughts, cached = _int(u.get("thoughtsTokenCount")) or 0, _int(u.get("cachedContentTokenCount")) or 0
    return Usage(
        input_tokens=count["promptTokenCount"] + count["toolUsePromptTokenCount"],
        output_tokens=count["candidatesTokenCount"] + thoughts,
        cached_tokens=cached,
        reasoning_tokens=thoughts,
        model=model,
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def gemini_finished(chunk: dict[str, Any]) -> bool:
    """A Gemini chunk that ends its answer (a candidate with a finishReason)."""
    return any(isinstance(c, dict) and c.get("finishReason") for c in chunk.get("candidates") or [])


def _gemini_chunks(chunks: list[Any]) -> Usage:
    """A streamGenerateContent answer without alt=sse (a JSON array of chunks): the final count is the one at
    or after the chunk that ends the answer."""
    final, finished = None, False
    for chunk in (c for c in chunks if isinstance(c, dict)):
        finished = finished or gemini_finished(chunk)
        final = chunk if finished and chunk.get("usageMetadata") else final
    if final is None:
        return unknown("no usageMetadata at the end of the answer")
    return gemini(final["usageMetadata"], _str(final.get("modelVersion")))


def from_answer(api: Api, body: Any) -> Usage:
    """The usage in one parsed JSON answer (a chat completion, a response, a message, a GenerateContentResponse
    or, for Gemini, a JSON array of them)."""
    if api == "gemini" and isinstance(body, list):
        return _gemini_chunks(body)
    if not isinstance(body, dict):
        return unknown("the answer is not a JSON object")
    if api == "gemini":
        meta = body.get("usageMetadata")
        return gemini(meta, _str(body.get("modelVersion"))) if meta else unknown("the answer has no usageMetadata")
    usage, model = body.get("usage"), _str(body.get("model"))
    if not usage:
        return unknown("the answer reports no usage")
    readers = {"openai": openai_chat, "openai-responses": openai_responses, "anthropic": anthropic}
    return readers[api](usage, model)


def read_body(api: Api, body: bytes | str, status: int = 200) -> Usage:
    """The usage of a whole (not streamed) answer. An HTTP error reply is not billed: zero, with that note."""
    if status >= 400:
        return Usage(input_tokens=0, output_tokens=0, reason=f"HTTP {status}: an error reply is not billed")
    try:
        data = json.loads(body)
    except ValueError:
        return unknown("the answer is not JSON (cut or garbled)")
    return from_answer(api, data)
