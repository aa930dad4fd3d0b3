"""The control API's route that keeps an episode's secrets out of its answer.

POST /cells/{id}/redact   {"texts": [str | null, ...]} -> {"texts": [...]}: each text with every secret value
                          the cell's requests carried (Authorization and API-key headers, secret query
                          parameters and body fields, the config's redact: names) replaced by [redacted]

Only the proxy saw those values, and it keeps them in memory only: the runner sends the agent's answer and
error here before writing them anywhere, so an agent that repeats its own key leaks it nowhere. Works after the
cell ended (its journal entries are still there).
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from flakeproxy.addons.control_input import Problem, cell_id, json_object
from flakeproxy.journal import Journal, JournalEntry
from flakeproxy.redact import Redactor

ROUTES = ["POST /cells/{id}/redact"]


def _secrets(redactor: Redactor, entries: list[JournalEntry]) -> tuple[set[str], set[str]]:
    """(every secret value of these entries' requests and answer headers, those of their headers and URLs)."""
    found, first = set(), set()
    for e in entries:
        headers = [e.request_headers, e.response_headers]
        first |= redactor.secrets(e.url, headers, "")
        found |= redactor.secrets(e.url, headers, e.request_body, e.request_headers.get("content-type", ""))
    return found, first


def redact_texts(redactor: Redactor, entries: list[JournalEntry], texts: list[str | None]) -> list[str | None]:
    found, first = _secrets(redactor, entries)
    return [None if t is None else redactor.literals(t, found, first) for t in texts]


class SecretRoutes:
    def __init__(self, journal: Journal, redactor: Redactor) -> None:
        self.journal, self.redactor = journal, redactor

    def add_to(self, app: web.Application) -> None:
        app.add_routes([web.post("/cells/{id}/redact", self.redact)])

    async def redact(self, request: web.Request) -> web.Response:
        cell = cell_id(request.match_info["id"])
        texts = (await json_object(request)).get("texts")
        if not isinstance(texts, list) or not all(t is None or isinstance(t, str) for t in texts):
            raise Problem(400, 'send {"texts": [...]}: a list of strings or nulls')
        entries = self.journal.for_cell(cell)
        out = await asyncio.to_thread(redact_texts, self.redactor, entries, texts)
        return web.json_response({"id": cell, "texts": out})
