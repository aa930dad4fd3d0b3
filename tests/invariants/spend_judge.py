"""Judge one spend check on one journal: (invariant spec, journal) -> verdict."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from flakeproxy.invariants import AnyInvariant
from flakeproxy.judging.verdict import Verdict
from tests.invariants.journals import observe

INV: TypeAdapter[Any] = TypeAdapter(AnyInvariant)


def judge(spec: dict[str, Any], journal: list[dict[str, Any]], **obs: Any) -> Verdict:
    invariant = INV.validate_python({"id": "spend", **spec})
    verdict: Verdict = invariant.evaluate(observe(journal, **obs))
    return verdict
