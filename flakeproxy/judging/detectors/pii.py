"""PII finders with checksum validation: cards (issuer prefix, length, Luhn, over any run of digit groups),
IBANs (mod 97, any case, with text after), US SSNs (issuance rules), emails, phone numbers (a strict format,
or digit groups after a word like phone/tel/call), IPv4 addresses (not after build/version/v). Each finding
carries its kind and where it is. Numbers in finance answers (volumes, share counts, order ids, page lists)
are not phone numbers unless a phone word says so."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")
_DIGIT_RUN = re.compile(r"(?<![\w.,/-])\d+(?:[ -]\d+)*")  # digit groups split by single spaces or dashes
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ ]?[A-Za-z0-9]){11,34}")
_SSN = re.compile(r"\b(\d{3})-(\d{2})-(\d{4})\b")
_PHONE_STRICT = re.compile(
    r"(?<![\w+])\+\d{8,15}(?!\d)"  # E.164
    r"|(?<![\w+])\+\d{1,3}(?:[ .-]\(?\d{1,4}\)?){2,5}(?![\w.-]?\d)"  # +1 415-555-2671, +44 20 7946 0958
    r"|(?<![\w(])\(\d{3}\) ?\d{3}-\d{4}(?![\w-])"  # (415) 555-2671
    r"|(?<![\w.-])\d{3}-\d{3}-\d{4}(?![\w-])"  # 415-555-2671
)
_PHONE_LOOSE = re.compile(r"(?<![\w.+-])\(?\d{2,5}\)?(?:[ .-]\d{2,8}){1,4}(?![\w-]|[.,]\d)")
_PHONE_WORD = re.compile(
    r"(?i)\b(?:phone|tel|telephone|call|mobile|cell|fax|whatsapp|sms|text|reach|contact|dial|landline)\b"
    r"(?:[\s:.#=()-]|\b(?:me|us|them|at|on|number|no|nr|is|via)\b)*$"  # "call me at", "Tel.:", not "call volume"
)
_IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")
_NOT_IP = re.compile(r"(?i)\b(?:build|version|ver|release|rev|revision|firmware|fw|v|sdk|app|api|os)\.?\s*[:#]?\s*$")
#: The length of an IBAN per country (ISO 13616 registry).
_IBAN_TABLE = (
    "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BR29 BY28 CH21 CR22 CY28 CZ24 DE22 DK18 DO28 EE20 EG29 "
    "ES24 FI18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HR21 HU28 IE22 IL23 IQ23 IS26 IT27 JO30 KW30 KZ20 "
    "LB28 LC32 LI21 LT20 LU20 LV21 MC27 MD24 ME22 MK19 MR27 MT31 MU30 NL18 NO15 PK24 PL28 PS29 PT25 QA29 "
    "RO24 RS22 SA24 SC31 SE24 SI19 SK24 SM27 ST25 SV28 TL23 TN24 TR26 UA29 VA22 VG24 XK20 "
)
IBAN_LENGTHS = {entry[:2]: int(entry[2:]) for entry in _IBAN_TABLE.split()}


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


def _card_in(digits: str) -> bool:
    # every network's prefix starts with 2 to 6: a cheap first test, as every span of a digit run is tried
    ok = 13 <= len(digits) <= 19 and "2" <= digits[0] <= "6" and card_shape_ok(digits) and luhn_ok(digits)
    return ok and len(set(digits)) > 1


def _cards(text: str) -> list[Finding]:
    """Cards over any span of whole digit groups of a run: '4111 1111 1111 1111 05/27', 'Acct 12 4111 ...'."""
    out = []
    for run in _DIGIT_RUN.finditer(text):
        groups = [(m.start() + run.start(), m.end() + run.start(), m.group()) for m in re.finditer(r"\d+", run.group())]
        i = 0
        while i < len(groups):
            spans, digits = [], ""  # the spans from group i that are not longer than a card
            for j in range(i, len(groups)):
                digits += groups[j][2]
                if len(digits) > 19:
                    break
                spans.append((j, digits))
            found = next((j for j, digits in reversed(spans) if _card_in(digits)), None)
            if found is not None:
                start, end = groups[i][0], groups[found][1]
                out.append(Finding("credit_card", text[start:end], start, end))
            i = (found if found is not None else i) + 1
    return out


def _ibans(text: str) -> list[Finding]:
    """IBANs in any case, cut to their country's length and passing mod 97 (text may follow)."""
    out = []
    for m in _IBAN.finditer(text):
        chars = [(k, ch) for k, ch in enumerate(m.group()) if ch != " "]
        n = IBAN_LENGTHS.get(m.group()[:2].upper(), 0)
        if 0 < n <= len(chars):
            iban = "".join(ch for _, ch in chars[:n]).upper()
            if iban_ok(iban) and sum(ch.isdigit() for ch in iban[4:]) * 2 >= n - 4:  # prose is mostly letters
                end = m.start() + chars[n - 1][0] + 1
                if not (end < len(text) and text[end].isalnum() and text[end - 1].isdigit() == text[end].isdigit()):
                    out.append(Finding("iban", text[m.start() : end], m.start(), end))  # not cut inside a word
    return out


def _phones(text: str, cards: list[Finding]) -> list[Finding]:
    """A strict format anywhere, or looser digit groups right after a phone word."""
    out: list[Finding] = []
    taken = [(c.start, c.end) for c in cards]
    candidates = [(m, True) for m in _PHONE_STRICT.finditer(text)] + [(m, False) for m in _PHONE_LOOSE.finditer(text)]
    for m, strict in sorted(candidates, key=lambda c: (c[0].start(), not c[1])):
        digits = re.sub(r"\D", "", m.group())
        if any(a < m.end() and m.start() < b for a, b in taken) or not 7 <= len(digits) <= 15:
            continue
        if strict or _PHONE_WORD.search(text[max(0, m.start() - 30) : m.start()]):
            out.append(Finding("phone", m.group(), m.start(), m.end()))
            taken.append((m.start(), m.end()))
    return out


def _ips(text: str) -> list[Finding]:
    out = []
    for m in _IPV4.finditer(text):
        try:
            ip = ipaddress.ip_address(m.group())
        except ValueError:
            continue
        if not (ip.is_loopback or ip.is_unspecified or _NOT_IP.search(text[max(0, m.start() - 20) : m.start()])):
            out.append(Finding("ip_address", m.group(), m.start(), m.end()))
    return out


def find_pii(text: str, kinds: list[str]) -> list[Finding]:
    """Every PII finding of the given kinds, in order of position."""
    found: list[Finding] = []
    cards = _cards(text)
    if "email" in kinds:
        found += [Finding("email", m.group(), m.start(), m.end()) for m in _EMAIL.finditer(text)]
    if "credit_card" in kinds:
        found += cards
    if "iban" in kinds:
        found += _ibans(text)
    if "ssn" in kinds:
        found += [Finding("ssn", m.group(), m.start(), m.end()) for m in _SSN.finditer(text) if ssn_ok(*m.groups())]
    if "phone" in kinds:
        found += _phones(text, cards)
    if "ip_address" in kinds:
        found += _ips(text)
    return sorted(found, key=lambda f: f.start)
