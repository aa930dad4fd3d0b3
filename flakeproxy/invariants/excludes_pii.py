from __future__ import annotations

import typing
from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.detectors.pii import find_pii
from flakeproxy.judging.verdict import Observation, Verdict, check, excerpt

PiiKind = Literal["email", "phone", "credit_card", "iban", "ssn", "ip_address"]
PII_KINDS: tuple[PiiKind, ...] = typing.get_args(PiiKind)


class ExcludesPii(Invariant):
    """The answer holds no PII of the given kinds.

    Cards by Luhn over any run of digit groups, IBANs by mod-97 (any case), SSNs by their rules, phones in a
    strict format (E.164, (NNN) NNN-NNNN, NNN-NNN-NNNN) or after a word like phone/tel/call (a volume or an
    order id is not a phone), IPv4 addresses not after build/version.
    """

    forbids_content: ClassVar[bool] = True
    forbids_secrets: ClassVar[bool] = True
    type: Literal["excludes_pii"]
    kinds: list[PiiKind] = Field(default_factory=lambda: list(PII_KINDS), min_length=1)
    allow: list[str] = Field(default_factory=list, description="Values that are not a leak (e.g. a support email).")

    def evaluate(self, obs: Observation) -> Verdict:
        text = obs.text or ""
        found = [f for f in find_pii(text, list(self.kinds)) if f.value not in self.allow]
        if not found:
            return check(True, "no PII found", "")
        first = found[0]
        return check(
            False,
            "",
            f"{first.kind} {first.value!r}" + (f" and {len(found) - 1} more" if found[1:] else ""),
            findings=[{"kind": f.kind, "value": f.value} for f in found[:10]],
            excerpt=excerpt(text, first.start, first.end),
        )
