"""The agent's answer and error as an episode keeps them: any text, no secret of the episode in it.

Lone surrogates are escaped (results.json, the reports and session files must hold whatever the agent said), and
every secret value the episode's requests carried is replaced: the proxy's (POST /cells/{id}/redact: only the
proxy saw them) and those of the journal entries the runner redacts itself (a python agent's, a mock's).
"""

from __future__ import annotations

from flakeproxy.redact import Redactor
from flakeproxy.runner.agents.base import Reply
from flakeproxy.runner.control import ControlClient
from flakeproxy.safe_text import escape_surrogates

#: The most of an answer an episode keeps.
MAX_ANSWER_CHARS = 20000


async def answer_and_error(
    reply: Reply, redactor: Redactor, found: set[str], control: ControlClient | None, cell: str
) -> tuple[str | None, str | None]:
    """(answer, error) of the reply, escaped and redacted; `found`: secrets the runner redacted in the journal."""
    texts = [reply.text[:MAX_ANSWER_CHARS] if reply.text is not None else None, reply.error]
    texts = [None if t is None else redactor.literals(escape_surrogates(t), found) for t in texts]
    if control is not None:
        texts = await control.redact(cell, texts)
    return texts[0], texts[1]
