"""sql checks against the real PostgreSQL and MariaDB of these machines (tables made and dropped here)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pymysql
import pytest
from pydantic import TypeAdapter

from flakeproxy.config.settings import Service, SqlService
from flakeproxy.invariants import AnyInvariant
from flakeproxy.judging.verdict import Observation

PG = "postgresql://postgres@127.0.0.1:5432/test"
MY = "mysql://root@127.0.0.1:3306/test"
INV: TypeAdapter[Any] = TypeAdapter(AnyInvariant)


@pytest.fixture
def table() -> Iterator[str]:
    name = f"fp_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG) as conn:
        conn.execute(f"create table {name} (id int, email text)")
        conn.execute(f"insert into {name} values (1, 'a@x'), (2, 'b@x')")
    mysql = pymysql.connect(host="127.0.0.1", user="root", password="", database="test", autocommit=True)
    with mysql.cursor() as cursor:
        cursor.execute(f"create table {name} (id int, email text)")
        cursor.execute(f"insert into {name} values (1, 'a@x'), (2, 'b@x')")
    try:
        yield name
    finally:
        with psycopg.connect(PG) as conn:
            conn.execute(f"drop table {name}")
        with mysql.cursor() as cursor:
            cursor.execute(f"drop table {name}")
        mysql.close()


def judge(kind: str, dsn: str, query: str, equals: Any) -> tuple[str, str]:
    service: Service = TypeAdapter(Service).validate_python({"type": kind, "dsn": dsn})
    invariant = INV.validate_python({"id": "q", "type": "sql", "service": "db", "query": query, "equals": equals})
    verdict = invariant.evaluate(Observation("p", "a", 1.0, services={"db": service}))
    return verdict.outcome, verdict.reason


@pytest.mark.parametrize(("kind", "dsn"), [("postgres", PG), ("mysql", MY)], ids=["postgresql", "mariadb"])
def test_sql_equals(table: str, kind: str, dsn: str) -> None:
    assert judge(kind, dsn, f"select count(*) from {table}", 2)[0] == "pass"
    assert judge(kind, dsn, f"select count(*) from {table} where email = 'zz'", 0)[0] == "pass"
    outcome, reason = judge(kind, dsn, f"select count(*) from {table}", 3)
    assert (outcome, reason) == ("fail", "first column is 2, expected 3")
    assert judge(kind, dsn, f"select email from {table} where id = 2", "b@x")[0] == "pass"
    assert judge(kind, dsn, f"select email from {table} where id = 9", "b@x") == ("fail", "the query returned no rows")


@pytest.mark.parametrize(("kind", "dsn"), [("postgres", PG), ("mysql", MY)], ids=["postgresql", "mariadb"])
def test_query_error_is_an_error_outcome(table: str, kind: str, dsn: str) -> None:
    outcome, reason = judge(kind, dsn, "select nope from nowhere_at_all", 0)
    assert outcome == "error" and "on service db" in reason


@pytest.mark.parametrize(
    ("kind", "dsn"),
    [("postgres", "postgresql://postgres:s3cret@127.0.0.1:1/test"), ("mysql", "mysql://root:s3cret@127.0.0.1:1/test")],
    ids=["postgresql", "mariadb"],
)
def test_wrong_dsn_is_a_clear_error_without_the_password(kind: str, dsn: str) -> None:
    outcome, reason = judge(kind, dsn, "select 1", 1)
    assert outcome == "error" and "127.0.0.1:1" in reason and "s3cret" not in reason


def test_services_validate() -> None:
    assert SqlService.model_validate({"type": "mysql", "dsn": MY}).type == "mysql"
