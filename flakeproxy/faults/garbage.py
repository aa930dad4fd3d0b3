from __future__ import annotations

from random import Random
from typing import Literal

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.llm_edits import llm_text_action


class GarbageFault(Fault):
    """Replace the LLM's content with noise: control bytes, broken unicode escapes, symbols."""

    mode: Literal["garbage"]
    text: str = "\x00\x01 gibberish ##@@ \ufffd\ufffd"

    def act(self, call: Call, rng: Random) -> Action:
        first = [True]

        def garble(_: str) -> str:
            out, first[0] = (self.text if first[0] else ""), False
            return out

        return llm_text_action(call.api, text=garble, per_stream=lambda: garble)
