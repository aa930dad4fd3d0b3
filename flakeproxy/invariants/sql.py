from __future__ import annotations

import contextlib
from typing import Any, ClassVar, Literal
from urllib.parse import unquote, urlsplit

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge, check


class Sql(Invariant):
    """The first column of the first row of query, run on a postgres or mysql service, equals equals."""

    type: Literal["sql"]
    calls_out: ClassVar[bool] = True
    needs_answer: ClassVar[bool] = False
    reads_state: ClassVar[bool] = True
    service: str
    query: str = Field(min_length=1)
    equals: str | int | float | bool | None

    def _rows(self, service: Any) -> Any:
        if service.type == "postgres":
            import psycopg

            with psycopg.connect(service.dsn, connect_timeout=5) as conn, conn.cursor() as cursor:
                cursor.execute(self.query)
                return cursor.fetchone()
        import pymysql

        url = urlsplit(service.dsn)
        mysql = pymysql.connect(
            host=url.hostname or "127.0.0.1",
            port=url.port or 3306,
            user=unquote(url.username or ""),
            password=unquote(url.password or ""),
            database=url.path.lstrip("/") or None,
            connect_timeout=5,
        )
        try:
            with mysql.cursor() as cursor:
                cursor.execute(self.query)
                return cursor.fetchone()
        finally:
            mysql.close()

    def evaluate(self, obs: Observation) -> Verdict:
        service = obs.services.get(self.service)
        if service is None:
            return cannot_judge(f"no service {self.service!r} in the config")
        driver = "psycopg" if service.type == "postgres" else "pymysql"
        try:
            row = self._rows(service)
        except ImportError:
            return cannot_judge(f"sql checks on {service.type} need {driver}: pip install 'flakeproxy[sql]'")
        except Exception as e:  # the driver's own connection and query errors: reported, never a pass
            where = (
                urlsplit(service.dsn)
                ._replace(
                    netloc=(urlsplit(service.dsn).hostname or "")
                    + (f":{urlsplit(service.dsn).port}" if urlsplit(service.dsn).port else "")
                )
                .geturl()
            )
            return cannot_judge(f"{type(e).__name__} on service {self.service} ({where}): {str(e).strip()[:300]}")
        if row is None:
            return check(False, "", "the query returned no rows")
        value = row[0]
        same = value == self.equals or str(value) == str(self.equals)
        with contextlib.suppress(TypeError, ValueError):
            same = same or float(value) == float(self.equals)  # type: ignore[arg-type]
        return check(
            same, f"first column is {value!r}", f"first column is {value!r}, expected {self.equals!r}", value=str(value)
        )
