"""An episode's secrets, kept out of everything it returns: every secret value any of the episode's requests
carried (Authorization and API-key headers, secret query parameters and body fields, the config's redact:
names) is scrubbed from all of its journal entries and from the texts the runner sends with the episode's end
(the agent's answer and error), so an agent that repeats its own key leaks it nowhere. Only the proxy saw
those values, and it keeps them in memory only.
"""

from __future__ import annotations

from flakeproxy.proxycore.journal import JournalEntry
from flakeproxy.proxycore.redact import Redactor


def cell_secrets(redactor: Redactor, entries: list[JournalEntry]) -> tuple[set[str], set[str]]:
    """(every secret value of these entries' requests and answer headers, those of their headers and URLs)."""
    found, first = set(), set()
    for e in entries:
        headers = [e.request_headers, e.response_headers]
        first |= redactor.secrets(e.url, headers, "")
        found |= redactor.secrets(e.url, headers, e.request_body, e.request_headers.get("content-type", ""))
    return found, first


def redact_texts(redactor: Redactor, secrets: tuple[set[str], set[str]], texts: list[str | None]) -> list[str | None]:
    found, first = secrets
    return [None if t is None else redactor.literals(t, found, first) for t in texts]
