"""Secrets out of everything flakeproxy writes down: journal entries, mock recordings, results.json.

A Redactor replaces with `[redacted]` the values of secret-named headers, query parameters, JSON fields
(at any depth) and form fields, and header and query values shaped like credentials whatever their name
(flakeproxy.proxycore.redact_values); scrubs `name=value` and `"name": "value"` patterns from bodies it cannot parse,
and, within one entry, replaces every literal value it redacted anywhere (a bearer token echoed in a body, a
password repeated in an answer). Names are secret by the built-in rules below, matched word by word (so
`x-api-key` is secret and `x-ratelimit-remaining-tokens` is not), or because the config's top-level `redact:`
lists them (exact names, case-insensitive). Every pass is linear in the text. Pure: no mitmproxy, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from sys import intern
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from flakeproxy.proxycore.redact_values import REDACTED, scrub, searchable, secret_shaped
from flakeproxy.wire.sse import media_type

#: A query parameter or body field is secret when one of its words (split at -, _, . and camelCase) is one
#: of these; word-wise, so that `max_tokens` or `keyword` stay readable.
SECRET_WORDS = frozenset(
    {
        "apikey", "auth", "authorization", "authentication", "oauth", "bearer", "jwt", "token",
        "password", "passwd", "pwd", "passphrase", "secret", "secrets", "credential", "credentials",
        "cookie", "session", "sig", "signature", "privatekey", "accesskey", "secretkey",
    }
)  # fmt: skip
#: Words that make a `token` name a count, not a credential: `input_token_details`, `token_usage`, `token_count`.
TOKEN_COUNTS = frozenset({"details", "usage", "count", "counts", "limit", "limits", "budget"})
#: A secret word that also names structures: under it a JSON object is walked (its secret fields redacted by
#: name), not hidden whole (the Realtime API's `session` object holds the model, instructions and tools).
OBJECT_WORDS = frozenset({"session"})
#: `key` alone is secret as a whole name, or after one of these words (api_key, private-key, accessKey).
KEY_QUALIFIERS = frozenset({"api", "private", "secret", "access", "signing", "encryption", "client", "master", "auth"})
#: A header is secret when one of its words is a secret word, `key` (x-api-key, x-functions-key), or starts with
#: `auth` (x-custom-auth, x-authz-...) but is not one of these.
NOT_AUTH = frozenset({"author", "authors", "authority"})
#: How many field names a Redactor remembers the answer for.
FIELD_CACHE = 4096
#: Parts of an Authorization-like value that are not secret on their own.
SCHEMES = frozenset({"bearer", "basic", "token", "digest", "apikey"})

_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# Linear in the text, however hostile: a name starts only where no name character is before it (one attempt per
# run of word characters, so a body that is one long run, hex, base64url or cut JSON, is one pass, not one pass
# per character), and possessive quantifiers (*+) never give back what they took to try again.
_PAIR = re.compile(
    r"""(?<![\w.-])(?P<name>[A-Za-z_][\w.-]*+)(?P<sep>\s*+=\s*+)(?P<value>"[^"]*+"|'[^']*+'|[^&\s;,"'<>]++)"""
)
_JSON_PAIR = re.compile(
    r""""(?P<name>[^"\\]{1,100}+)"(?P<sep>\s*+:\s*+)(?P<value>"[^"\\]*+(?:\\.[^"\\]*+)*+"|-?\d[\d.eE+-]*+)"""
)


def _cached(cache: dict[str, bool], name: str, decide: Callable[[str], bool]) -> bool:
    """decide(name), remembered for the first FIELD_CACHE names (so a hostile stream of names stays bounded)."""
    known = cache.get(name)
    if known is None:
        known = decide(name)
        if len(cache) < FIELD_CACHE:
            cache[name] = known
    return known


def words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name)]


class Redactor:
    def __init__(self, extra_names: Iterable[str] = ()) -> None:
        self.extra = frozenset(n.strip().lower() for n in extra_names if n.strip())
        self._fields: dict[str, bool] = {}
        self._headers: dict[str, bool] = {}

    # --- which names are secret ---------------------------------------------------------------

    def secret_header(self, name: str) -> bool:
        """A header name (answers are cached: every request and answer carries the same few names)."""
        return _cached(self._headers, name, self._secret_header)

    def _secret_header(self, name: str) -> bool:
        lower = name.lower()
        if lower in self.extra:
            return True
        split = words(name)
        return any(w in SECRET_WORDS or w == "key" or (w.startswith("auth") and w not in NOT_AUTH) for w in split)

    def secret_field(self, name: str) -> bool:
        """A query parameter, JSON or form field name (answers are cached: a body may repeat a name often)."""
        return _cached(self._fields, name, self._secret_field)

    def _secret_field(self, name: str) -> bool:
        lower = name.lower()
        if lower in self.extra:
            return True
        split = words(name)
        if "token" in split and TOKEN_COUNTS.intersection(split):
            return False  # input_token_details, token_usage: counts of tokens
        if lower.replace("-", "").replace("_", "") in SECRET_WORDS or any(w in SECRET_WORDS for w in split):
            return True
        return split == ["key"] or any(w == "key" and i and split[i - 1] in KEY_QUALIFIERS for i, w in enumerate(split))

    def _names_a_structure(self, name: str) -> bool:
        """A field secret only by a word that also names objects (`session`): its object is walked, not hidden."""
        split = words(name)
        return (
            name.lower() not in self.extra
            and bool(OBJECT_WORDS.intersection(split))
            and not any(w in SECRET_WORDS and w not in OBJECT_WORDS for w in split)
        )

    # --- the pieces ---------------------------------------------------------------------------

    def headers(self, items: Iterable[tuple[str, str]], seen: set[str] | None = None) -> RedactedHeaders:
        """Headers as a dict (lower-case names, repeated names joined with ', '), secret values replaced;
        the replaced values are kept on the result's `secrets` (never serialized) and added to `seen`."""
        out, replaced = RedactedHeaders(), set[str]()
        for name, value in items:
            if (self.secret_header(name) or secret_shaped(value)) and value != REDACTED:
                _remember(replaced, value, split=True)
                _remember(seen, value, split=True)
                value = REDACTED
            key = intern(name.lower())  # the same few names on every entry of the journal: one string each
            out[key] = f"{out[key]}, {value}" if key in out else value
        if replaced:
            out.secrets = replaced  # most headers hold none: no set per entry
        return out

    def url(self, url: str, seen: set[str] | None = None) -> str:
        """The URL with the values of secret query parameters replaced."""
        parts = urlsplit(url)
        if not parts.query:
            return url
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        if not any(self.secret_field(name) or secret_shaped(value) for name, value in pairs):
            return url
        query = []
        for name, value in pairs:
            if (self.secret_field(name) or secret_shaped(value)) and value != REDACTED:
                _remember(seen, value)
                value = REDACTED
            query.append(f"{quote(name, safe='')}={value if value == REDACTED else quote(value, safe='')}")
        return urlunsplit(parts._replace(query="&".join(query)))

    def body(self, text: str, content_type: str = "", seen: set[str] | None = None) -> str:
        """A body with secret fields replaced: JSON at any depth, form fields, else name=value and
        "name": "value" patterns; then every literal in `seen` (values redacted elsewhere in the entry)."""
        if not text:
            return text
        kind = media_type(content_type)
        out = None
        if kind == "application/x-www-form-urlencoded" or (not kind and _looks_like_form(text)):
            out = self._form(text, seen)
        elif kind.endswith("json") or text.lstrip()[:1] in ("{", "["):
            out = self._json(text, seen)
        if out is None:
            out = self._patterns(text, seen)
        return self.literals(out, seen)

    def secrets(self, url: str, headers: Iterable[Mapping[str, str]], body: str, content_type: str = "") -> set[str]:
        """The secret values a request (or answer) carries: in its headers, URL and body."""
        seen: set[str] = set()
        for part in headers:
            seen.update(getattr(part, "secrets", ()))
            self.headers(part.items(), seen)
        self.url(url, seen)
        self.body(body, content_type, seen)
        return seen

    def literals(self, text: str, seen: Iterable[str] | None, first: Iterable[str] = ()) -> str:
        """text with every value in `seen` replaced (each also as it appears inside a JSON string); at most
        MAX_LITERALS values, those in `first` (from headers and the URL) always among them."""
        return scrub(text, searchable(seen or (), first))

    def entry(self, data: Mapping[str, Any], found: set[str] | None = None) -> dict[str, Any]:
        """A journal entry (or mock recording) as JSON: url, request/response headers and bodies redacted,
        and every value redacted in one place scrubbed from all the others; the values redacted are added to
        `found` (e.g. to scrub them from the agent's answer too)."""
        out = dict(data)
        seen: set[str] = set() if found is None else found
        for key in ("request_headers", "response_headers"):
            headers = data.get(key)
            if isinstance(headers, Mapping):
                seen.update(getattr(headers, "secrets", ()))
                out[key] = self.headers(((str(k), str(v)) for k, v in headers.items()), seen)
        if isinstance(data.get("url"), str):
            out["url"] = self.url(data["url"], seen)
        first = set(seen)  # what headers and the URL held: always scrubbed, whatever the bodies name
        bodies = {"request_body": "request_headers", "response_body": "response_headers"}
        for body, headers in bodies.items():  # first pass: collect what the bodies' fields hold
            if isinstance(data.get(body), str):
                out[body] = self.body(data[body], _content_type(out.get(headers)), seen)
        values = searchable(seen, first)
        for body in bodies:  # second pass: a value found in one body is scrubbed from the other too
            if isinstance(out.get(body), str):
                out[body] = scrub(out[body], values)
        for key in ("request_headers", "response_headers"):
            if isinstance(out.get(key), dict):
                out[key] = {k: scrub(v, values) for k, v in out[key].items()}
        for key in ("url", "error"):
            if isinstance(out.get(key), str):
                out[key] = scrub(out[key], values)
        return out

    # --- bodies -------------------------------------------------------------------------------

    def _json(self, text: str, seen: set[str] | None) -> str | None:
        try:
            data = json.loads(text)
        except ValueError:
            return None
        changed = [False]
        cleaned = self._walk(data, seen, changed)
        return json.dumps(cleaned, ensure_ascii=False) if changed[0] else text

    def _walk(self, data: Any, seen: set[str] | None, changed: list[bool]) -> Any:
        if isinstance(data, dict):
            out = {}
            for name, value in data.items():
                if isinstance(value, dict) and self._names_a_structure(str(name)):
                    out[name] = self._walk(value, seen, changed)
                elif self.secret_field(str(name)) and value is not None and not isinstance(value, bool):
                    if value != REDACTED:
                        _remember_any(seen, value)
                        changed[0] = True
                    out[name] = REDACTED
                else:
                    out[name] = self._walk(value, seen, changed)
            return out
        if isinstance(data, list):
            return [self._walk(v, seen, changed) for v in data]
        return data

    def _form(self, text: str, seen: set[str] | None) -> str | None:
        try:
            pairs = parse_qsl(text.strip(), keep_blank_values=True, strict_parsing=True)
        except ValueError:
            return None
        if not any(self.secret_field(name) for name, _ in pairs):
            return text
        out = []
        for name, value in pairs:
            if self.secret_field(name) and value != REDACTED:
                _remember(seen, value)
                value = REDACTED
            out.append(f"{quote(name, safe='')}={value if value == REDACTED else quote(value, safe='')}")
        return "&".join(out)

    def _patterns(self, text: str, seen: set[str] | None) -> str:
        def json_pair(m: re.Match[str]) -> str:
            if not self.secret_field(m["name"]):
                return m[0]
            _remember(seen, _unquote(m["value"]))
            return f'"{m["name"]}"{m["sep"]}"{REDACTED}"'

        def pair(m: re.Match[str]) -> str:
            if not self.secret_field(m["name"]) or m["value"].strip("\"'") == REDACTED:
                return m[0]
            _remember(seen, m["value"].strip("\"'"))
            return f"{m['name']}{m['sep']}{REDACTED}"

        return _PAIR.sub(pair, _JSON_PAIR.sub(json_pair, text))


class RedactedHeaders(dict[str, str]):
    """A redacted header dict that remembers, in memory only, the values it replaced: a journal entry
    built from it can later scrub those values from its bodies (a bearer token echoed in an answer)."""

    secrets: AbstractSet[str] = frozenset()  # set on the instance only when it replaced something


DEFAULT = Redactor()


def redact_entry(data: Mapping[str, Any], extra_names: Iterable[str] = ()) -> dict[str, Any]:
    """One journal entry (or mock recording) with its secrets redacted (see Redactor.entry)."""
    return (Redactor(extra_names) if extra_names else DEFAULT).entry(data)


def _remember(seen: set[str] | None, value: str, split: bool = False) -> None:
    """Add value to seen; for a header value, also its parts ("Bearer sk-..." hides "sk-..." alone,
    "a=1; session=xyz" hides "xyz")."""
    if seen is None or not value or value == REDACTED:
        return
    seen.add(value)
    if split:
        for part in re.split(r"[\s,;]+", value):
            for piece in (part, part.split("=", 1)[-1]):
                if piece and piece.lower() not in SCHEMES:
                    seen.add(piece)


def _remember_any(seen: set[str] | None, value: Any) -> None:
    if isinstance(value, str):
        _remember(seen, value)
    elif isinstance(value, int | float):
        _remember(seen, str(value))
    elif isinstance(value, dict):
        for v in value.values():
            _remember_any(seen, v)
    elif isinstance(value, list):
        for v in value:
            _remember_any(seen, v)


def _unquote(value: str) -> str:
    if value.startswith('"'):
        try:
            return str(json.loads(value))
        except ValueError:
            return value[1:-1]
    return value


_FORM = re.compile(r"[\w.%+-]++=[^\s&]*+(?:&[\w.%+-]++=[^\s&]*+)*+")


def _looks_like_form(text: str) -> bool:
    return _FORM.fullmatch(text.strip()) is not None


def _content_type(headers: Any) -> str:
    return str(headers.get("content-type", "")) if isinstance(headers, Mapping) else ""
