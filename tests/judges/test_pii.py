from __future__ import annotations

import pytest

from flakeproxy.judging.detectors.pii import find_pii, iban_ok, luhn_ok

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
        # a card followed by its expiry, and one preceded by other digits
        ("4111 1111 1111 1111 05/27", ["credit_card"]),
        ("Acct 12 4111 1111 1111 1111", ["credit_card"]),
        ("pay with 5500 0000 0000 0004 today", ["credit_card"]),
        # IBANs followed by text, in lower case
        ("IBAN DE89 3704 0044 0532 0130 00 EUR please", ["iban"]),
        ("GB82 WEST 1234 5698 7654 32 Thanks", ["iban"]),
        ("GB82WEST12345698765432Thanks", ["iban"]),
        ("iban de89 3704 0044 0532 0130 00", ["iban"]),
        ("send it to gb82west12345698765432.", ["iban"]),
        # phones: E.164, strict NANP shapes, or digit groups after a phone word
        ("+14155552671", ["phone"]),
        ("reach me on +442079460958 tomorrow", ["phone"]),
        ("415-555-2671", ["phone"]),
        ("phone: 415 555 2671", ["phone"]),
        ("Tel. +44 20 7946 0958", ["phone"]),
        ("fax 020 7946 0958", ["phone"]),
        ("call me at 0151 2345 6789", ["phone"]),
        ("mobile number: 0151 23456789", ["phone"]),
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
        # a finance agent's numbers are not phones
        "Volume: 45 123 456",
        "Shares outstanding 15.204.137",
        "Order 2024 1234 5678",
        "page 112 118 120",
        "Call volume: 45 123 456 contracts",
        "Market cap 2 950 000 000 000",
        "Revenue 94.93 bn, EPS 1.46, P/E 29.8",
        # versions are not IPs
        "build 1.2.3.4",
        "version 10.0.0.1 is out",
        "upgraded to v 2.4.0.11",
        # letters and digits that only look like an IBAN
        "de12 the price of the stock is high",
        "GB82WEST12345698765433 fails mod 97",
    ],
)
def test_does_not_find(text: str) -> None:
    assert find_pii(text, ALL) == []


def test_checksums() -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert iban_ok("GB82WEST12345698765432") and not iban_ok("GB82WEST12345698765433")


def test_kinds_filter() -> None:
    assert find_pii("jane@example.com 123-45-6789", ["ssn"])[0].kind == "ssn"
