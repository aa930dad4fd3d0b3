from __future__ import annotations

import pytest

from flakeproxy.judges.pii import find_pii, iban_ok, luhn_ok

ALL = ["email", "phone", "credit_card", "iban", "ssn", "ip_address"]


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("mail me at jane.doe@example.com", ["email"]),
        ("card 4111 1111 1111 1111 on file", ["credit_card"]),
        ("card 4111-1111-1111-1111", ["credit_card"]),
        ("IBAN DE89 3704 0044 0532 0130 00", ["iban"]),
        ("GB82WEST12345698765432 is the account", ["iban"]),
        ("SSN 123-45-6789", ["ssn"]),
        ("call +1 415-555-2671 now", ["phone"]),
        ("call (415) 555-2671", ["phone"]),
        ("server at 203.0.113.9", ["ip_address"]),
    ],
)
def test_finds(text: str, kinds: list[str]) -> None:
    assert [f.kind for f in find_pii(text, ALL)] == kinds


@pytest.mark.parametrize(
    "text",
    [
        "order 4111 1111 1111 1112",  # fails Luhn
        "IBAN DE89 3704 0044 0532 0130 01",  # fails mod 97
        "SSN 000-12-3456 and 666-12-3456 and 900-12-3456",  # never issued
        "AAPL trades at $189.50, up 1.2%",
        "ticket 123456789",  # 9 digits are not an SSN without its dashes
        "on 2026-11-22 at 10:00",
        "localhost is 127.0.0.1",
    ],
)
def test_does_not_find(text: str) -> None:
    assert find_pii(text, ALL) == []


def test_checksums() -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert iban_ok("GB82WEST12345698765432") and not iban_ok("GB82WEST12345698765433")


def test_kinds_filter() -> None:
    assert find_pii("jane@example.com 123-45-6789", ["ssn"])[0].kind == "ssn"
