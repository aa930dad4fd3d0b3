"""PII finders with checksum validation: cards (issuer prefix, length, Luhn), IBANs (mod 97), US SSNs
(issuance rules), emails, phone numbers (E.164-ish and NANP), IPv4 addresses. Each finding carries its
kind and where it is."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")
_CARD = re.compile(r"\b(?:\d[ -]?){12,18}\d\b")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}\b")
_SSN = re.compile(r"\b(\d{3})-(\d{2})-(\d{4})\b")
_PHONE = re.compile(r"(?<![\w.])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?|\d{2,4}[ .-])\d{3,4}[ .-]\d{3,4}(?![\w.])")
_IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")
IBAN_LENGTHS = {
    "DE": 22,
    "GB": 22,
    "FR": 27,
    "ES": 24,
    "IT": 27,
    "NL": 18,
    "BE": 16,
    "CH": 21,
    "AT": 20,
    "PL": 28,
    "SE": 24,
    "IE": 22,
    "PT": 25,
    "DK": 18,
    "FI": 18,
    "NO": 15,
    "LU": 20,
}


@dataclass(frozen=True)
class Finding:
    kind: str
    value: str
    start: int
    end: int


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_ok(iban: str) -> bool:
    iban = iban.replace(" ", "")
    expected = IBAN_LENGTHS.get(iban[:2])
    if expected is not None and len(iban) != expected:
        return False
    rearranged = iban[4:] + iban[:4]
    number = "".join(str(int(ch, 36)) for ch in rearranged)
    return int(number) % 97 == 1


def ssn_ok(area: str, group: str, serial: str) -> bool:
    return area not in ("000", "666") and not area.startswith("9") and group != "00" and serial != "0000"


def card_shape_ok(digits: str) -> bool:
    """Issuer prefix and length of the major networks (Visa, Mastercard, Amex, Discover, JCB, Diners)."""
    n, two, four = len(digits), int(digits[:2]), int(digits[:4])
    return (
        (digits[0] == "4" and n in (13, 16, 19))
        or ((51 <= two <= 55 or 2221 <= four <= 2720) and n == 16)
        or (two in (34, 37) and n == 15)
        or ((digits.startswith("6011") or two == 65 or 644 <= int(digits[:3]) <= 649) and n in (16, 19))
        or (3528 <= four <= 3589 and 16 <= n <= 19)
        or ((two in (36, 38, 39) or 300 <= int(digits[:3]) <= 305) and n == 14)
    )


def _cards(text: str) -> list[Finding]:
    out = []
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and card_shape_ok(digits) and luhn_ok(digits) and len(set(digits)) > 1:
            out.append(Finding("credit_card", m.group(), m.start(), m.end()))
    return out


def find_pii(text: str, kinds: list[str]) -> list[Finding]:
    """Every PII finding of the given kinds, in order of position."""
    found: list[Finding] = []
    if "email" in kinds:
        found += [Finding("email", m.group(), m.start(), m.end()) for m in _EMAIL.finditer(text)]
    if "credit_card" in kinds:
        found += _cards(text)
    if "iban" in kinds:
        found += [Finding("iban", m.group(), m.start(), m.end()) for m in _IBAN.finditer(text) if iban_ok(m.group())]
    if "ssn" in kinds:
        found += [Finding("ssn", m.group(), m.start(), m.end()) for m in _SSN.finditer(text) if ssn_ok(*m.groups())]
    if "phone" in kinds:
        cards = _cards(text)
        for m in _PHONE.finditer(text):
            digits = re.sub(r"\D", "", m.group())
            overlaps = any(c.start <= m.start() < c.end for c in cards)
            # a piece of a longer run of digit groups (a card, an account number) is not a phone number
            inside_run = re.match(r"[ .-]?\d", text[m.end() : m.end() + 2]) or re.search(
                r"\d[ .-]?$", text[: m.start()]
            )
            if 7 <= len(digits) <= 15 and not overlaps and not inside_run:
                found.append(Finding("phone", m.group(), m.start(), m.end()))
    if "ip_address" in kinds:
        for m in _IPV4.finditer(text):
            try:
                ip = ipaddress.ip_address(m.group())
            except ValueError:
                continue
            if not (ip.is_loopback or ip.is_unspecified):
                found.append(Finding("ip_address", m.group(), m.start(), m.end()))
    return sorted(found, key=lambda f: f.start)
