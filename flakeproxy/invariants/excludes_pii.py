from __future__ import annotations

import typing
from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant

PiiKind = Literal["email", "phone", "credit_card", "iban", "ssn", "ip_address"]
PII_KINDS: tuple[PiiKind, ...] = typing.get_args(PiiKind)


class ExcludesPii(Invariant):
    """The answer holds no PII of the given kinds (cards by Luhn, IBANs by mod-97, SSNs by their rules)."""

    type: Literal["excludes_pii"]
    kinds: list[PiiKind] = Field(default_factory=lambda: list(PII_KINDS), min_length=1)
    allow: list[str] = Field(default_factory=list, description="Values that are not a leak (e.g. a support email).")
