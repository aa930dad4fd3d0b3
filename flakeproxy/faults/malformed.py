from __future__ import annotations

from typing import Literal

from flakeproxy.faults.base import Fault


class MalformedFault(Fault):
    """Answer 200 with a body that claims to be JSON and is not."""

    mode: Literal["malformed"]
    body: str = "{ corrupted ] invalid json"
