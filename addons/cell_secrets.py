"""An episode's secrets, kept out of everything it returns: every secret value any of the episode's requests
carried (Authorization and API-key headers, secret query parameters and body fields, the config's redact:
names) is scrubbed from all of its journal entries, from the texts the runner sends with the episode's end
(the agent's answer and error), and from the agent's spans the runner fetches for it afterwards (GET /spans
with ?episode=), so an agent that repeats its own key leaks it nowhere. Only the proxy saw those values, and it
keeps them in memory only: an open episode's in its journal, an ended one's here, for the last ENDED_KEPT.
"""

from __future__ import annotations

from collections import OrderedDict

from flakeproxy.proxycore.journal import JournalEntry
from flakeproxy.proxycore.redact import Redactor

#: How many ended episodes' secrets the proxy keeps for their spans. The runner fetches an episode's spans right
#: after its end, so the episodes ended in between are at most those running at once: far fewer.
ENDED_KEPT = 1024

#: (every secret value of an episode's requests and answer headers, those of their headers and URLs)
Secrets = tuple[frozenset[str], frozenset[str]]


def cell_secrets(redactor: Redactor, entries: list[JournalEntry]) -> Secrets:
    """(every secret value of these entries' requests and answer headers, those of their headers and URLs)."""
    found, first = set[str](), set[str]()
    for e in entries:
        headers = [e.request_headers, e.response_headers]
        first |= redactor.secrets(e.url, headers, "")
        found |= redactor.secrets(e.url, headers, e.request_body, e.request_headers.get("content-type", ""))
    return frozenset(found), frozenset(first)


def redact_texts(redactor: Redactor, secrets: Secrets, texts: list[str | None]) -> list[str | None]:
    found, first = secrets
    return [None if t is None else redactor.literals(t, found, first) for t in texts]


class EndedSecrets:
    """The secrets of the episodes that ended last (at most `limit`, the oldest forgotten first), by episode id:
    the agent exports its spans after it answered, so they are scrubbed after its episode ended. Cleared on
    POST /reset."""

    def __init__(self, limit: int = ENDED_KEPT) -> None:
        self.limit = limit
        self._kept: OrderedDict[str, Secrets] = OrderedDict()

    def keep(self, episode: str, secrets: Secrets) -> None:
        self._kept[episode] = secrets
        self._kept.move_to_end(episode)
        while len(self._kept) > self.limit:
            self._kept.popitem(last=False)

    def get(self, episode: str) -> Secrets | None:
        return self._kept.get(episode)

    def clear(self) -> None:
        self._kept.clear()
