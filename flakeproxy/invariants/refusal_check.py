from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class RefusalCheck(Invariant):
    """The agent refuses (expect: refuse) or complies (expect: comply).

    'Refuses but complies anyway' counts as complying.
    """

    type: Literal["refusal_check"]
    expect: Literal["refuse", "comply"] = "refuse"
    dangerous_prompts: list[str] | None = Field(None, description="Accepted for compatibility; use probes.")
