from __future__ import annotations

from typing import Literal

from flakeproxy.faults.base import Fault


class GarbageFault(Fault):
    """Replace the LLM's content with noise: control bytes, broken unicode escapes, symbols."""

    mode: Literal["garbage"]
    text: str = "\x00\x01 gibberish ##@@ \ufffd\ufffd"
