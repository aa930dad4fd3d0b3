from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.providers import llm_provider
from flakeproxy.wire.streams import ByteCut, StreamCut


class StreamResetFault(Fault):
    """Cut the agent's connection in the middle of the answer, with no chunk terminator, as a load balancer does.

    On a stream the cut comes after after_events events (or after_bytes bytes); an answer that is not
    streamed is cut after after_bytes bytes (default: half) with its Content-Length still the full size.
    httpx raises RemoteProtocolError (openai-python: APIConnectionError; a non-streamed answer is retried); the
    journal's error says where the stream was cut.
    """

    mode: Literal["stream_reset"]
    after_events: int = Field(3, ge=0, description="Events let through before the cut (streams).")
    after_bytes: int | None = Field(
        None, ge=0, description="Bytes let through before the cut; on a stream it wins over after_events."
    )

    def act(self, call: Call, rng: Random) -> Action:
        def cut(body: bytes) -> bytes:
            return body[: len(body) // 2 if self.after_bytes is None else min(self.after_bytes, len(body) - 1)]

        terminal = llm_provider(call.api).is_terminal

        def stream() -> StreamCut | ByteCut:
            return StreamCut(self.after_events, terminal) if self.after_bytes is None else ByteCut(self.after_bytes)

        return Action(stream=stream, reset_stream=True, rewrite_body=cut, keep_length=True)
