"""The agent's answer and error as an episode keeps them: any text, no secret of the episode in it.

Lone surrogates are escaped (results.json, the reports and session files must hold whatever the agent said), and
every secret value the episode's requests carried is replaced: the proxy's (it scrubs the texts the runner sends
with the cell's end: only the proxy saw them) and those of the journal entries the runner redacts itself (a python
agent's, a mock's).
"""

from __future__ import annotations

from flakeproxy.proxycore.redact import Redactor
from flakeproxy.runner.agents.base import Reply
from flakeproxy.safe_text import escape_surrogates

#: The most of an answer an episode keeps.
MAX_ANSWER_CHARS = 20000


def reply_texts(reply: Reply) -> list[str | None]:
    """[answer, error] of a reply, escaped, before any redaction."""
    texts = [reply.text[:MAX_ANSWER_CHARS] if reply.text is not None else None, reply.error]
    return [None if t is None else escape_surrogates(t) for t in texts]


def scrubbed(texts: list[str | None], redactor: Redactor, found: set[str]) -> tuple[str | None, str | None]:
    """(answer, error) with `found` (the secrets the runner redacted in the journal) scrubbed too."""
    answer, error = (None if t is None else redactor.literals(t, found) for t in texts)
    return answer, error
