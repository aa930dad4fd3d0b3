"""The agent's answer and error as an episode keeps them: any text, and (once its ports scrubbed them) no secret.

Lone surrogates are escaped here (results.json, the reports and session files must hold whatever the agent said).
The secrets are scrubbed by the ports, each of those it saw, when the episode ends (runner/ports.py): the proxy
of every value its requests carried, a python agent's wrapped tools and the mock services of theirs.
"""

from __future__ import annotations

from flakeproxy.runner.agents.base import Reply
from flakeproxy.safe_text import escape_surrogates

#: The most of an answer an episode keeps.
MAX_ANSWER_CHARS = 20000


def reply_texts(reply: Reply) -> list[str | None]:
    """[answer, error] of a reply, escaped, before any redaction."""
    texts = [reply.text[:MAX_ANSWER_CHARS] if reply.text is not None else None, reply.error]
    return [None if t is None else escape_surrogates(t) for t in texts]
