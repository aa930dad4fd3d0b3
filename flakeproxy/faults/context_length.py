from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action, json_reply
from flakeproxy.wire.call import Call
from flakeproxy.wire.provider_errors import anthropic_error, openai_error
from flakeproxy.wire.providers import provider


class ContextLengthFault(Fault):
    """Refuse the prompt as too long: OpenAI 400 `context_length_exceeded`, Anthropic 400 `prompt is too long`.

    OpenAI's names `param: messages`; Anthropic's reads `prompt is too long: N tokens > M maximum`. The SDKs do
    not retry it; the agent must shorten its context.
    """

    mode: Literal["context_length_exceeded"]
    limit_tokens: int = Field(128000, ge=1, description="The model's context window the message names.")
    prompt_tokens: int = Field(130000, ge=1, description="The size the message says the prompt was.")

    def act(self, call: Call, rng: Random) -> Action:
        if call.api == "gemini":
            text = (
                f"The input token count ({self.prompt_tokens}) exceeds the maximum number of tokens allowed "
                f"({self.limit_tokens})."
            )
            return Action(reply=provider(call.api).error(400, text))
        if call.api == "anthropic":
            text = f"prompt is too long: {self.prompt_tokens} tokens > {self.limit_tokens} maximum"
            body, headers = anthropic_error(400, text, {})
            return Action(reply=json_reply(400, body, headers))
        text = (
            f"This model's maximum context length is {self.limit_tokens} tokens. However, your messages resulted in "
            f"{self.prompt_tokens} tokens. Please reduce the length of the messages."
        )
        body, headers = openai_error(400, text, {}, "gpt-4o")
        body["error"].update(param="messages", code="context_length_exceeded")
        return Action(reply=json_reply(400, body, headers))
