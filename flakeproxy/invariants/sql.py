from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class Sql(Invariant):
    """The first column of the first row of query, run on a postgres or mysql service, equals equals."""

    type: Literal["sql"]
    service: str
    query: str = Field(min_length=1)
    equals: str | int | float | bool | None
