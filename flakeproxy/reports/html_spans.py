"""The HTML report's span tree: an episode's own spans as the agent exported them (proxy.otlp), shown beside
its journal; each span with its offset, duration and error, and a mark on the spans that made a faulted call.
Every string from the run is escaped here."""

from __future__ import annotations

from html import escape
from typing import Any

from flakeproxy.results import Episode
from flakeproxy.telemetry.detect import call_context
from flakeproxy.telemetry.spans import AgentSpan, children
from flakeproxy.wire.record import read_fault


def esc(value: Any) -> str:
    return escape(str(value), quote=True)


#: spans drawn at most per episode (results.json keeps them all), and how deep
MAX_SPANS = 400
MAX_DEPTH = 40


def _calls(episode: Episode) -> dict[str, list[str]]:
    """Agent span id -> the calls it made ('#5'), '!' marking a call whose fault applied."""
    out: dict[str, list[str]] = {}
    for entry in episode.journal:
        context = call_context(entry)
        if context is not None:
            record = read_fault(entry.get("fault"))
            mark = "!" if record is not None and record.applied else ""
            out.setdefault(context[1], []).append(f"#{entry.get('seq', '?')}{mark}")
    return out


class _Tree:
    def __init__(self, episode: Episode) -> None:
        self.kids = children(episode.agent_spans)
        self.calls = _calls(episode)
        self.start = min(s.start for s in episode.agent_spans)
        self.drawn = 0

    def item(self, span: AgentSpan, depth: int) -> str:
        self.drawn += 1
        error = span.error_mark
        badge = f' <span class="badge o-fail" title="{esc(error)}">error</span>' if error else ""
        calls = self.calls.get(span.span_id, [])
        faulted = any(c.endswith("!") for c in calls)
        made = f' <span class="badge {"f-applied" if faulted else "f-not"}">calls {esc(" ".join(calls))}</span>'
        head = (
            f"<code>{esc(span.name)}</code> <small class=muted>+{(span.start - self.start) * 1000:.0f} ms · "
            f"{span.duration_ms:.0f} ms</small>{badge}{made if calls else ''}"
        )
        return f"<li>{head}{self.level(span.span_id, depth + 1)}</li>"

    def level(self, parent: str | None, depth: int) -> str:
        if depth > MAX_DEPTH or parent not in self.kids:
            return ""
        items = []
        for span in self.kids[parent]:
            if self.drawn >= MAX_SPANS:
                items.append(f'<li class="muted">{esc(MAX_SPANS)} spans shown; the rest are in results.json</li>')
                break
            items.append(self.item(span, depth))
        return f'<ul class="spans">{"".join(items)}</ul>'


def span_tree(episode: Episode) -> str:
    """The episode's span tree, or "" when the agent's spans were not collected."""
    if not episode.agent_spans:
        return ""
    services = sorted({s.service for s in episode.agent_spans if s.service})
    title = f"The agent's spans{' (' + esc(', '.join(services)) + ')' if services else ''}"
    legend = (
        '<p class="muted"><small>Offsets from the agent\'s first span, by its clock. "calls #N": the requests in '
        "the journal this span made; red: faulted.</small></p>"
    )
    return f'<div class="spantree"><h4>{title}</h4>{legend}{_Tree(episode).level(None, 0)}</div>'
