"""The fidelity table of docs/performance.md, rendered from the rows (no run needed): scripts/fidelity_table
writes it, tests/fidelity/test_fidelity.py checks the page holds exactly this."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fidelity.mcp_world import MCP_ROWS
from tests.fidelity.row import Row
from tests.fidelity.rows import ROWS

START, END = "<!-- fidelity-table:start -->", "<!-- fidelity-table:end -->"
CLIENTS = {
    "py-openai": "openai (Python)",
    "py-anthropic": "anthropic (Python)",
    "node-openai": "openai (Node)",
    "node-anthropic": "@anthropic-ai/sdk (Node)",
    "py-gemini": "google-genai (Python)",
}
CALLS = {
    "json": "JSON",
    "stream": "stream",
    "tools_stream": "stream, tool call",
    "responses_stream": "Responses stream",
}


def _fault(row: Row) -> str:
    fields = ", ".join(f"{k}: {v}" for k, v in row.inject.items() if k != "mode")
    return f"`{row.inject['mode']}`" + (f" ({fields})" if fields else "")


def render(rows: list[Row] = ROWS) -> str:
    lines = [
        "| fault | client | call | what the client sees, real failure and fault alike |",
        "|---|---|---|---|",
    ]
    lines += [f"| {_fault(r)} | {CLIENTS[r.client]} | {CALLS[r.call]} | {r.sees} |" for r in rows]
    for m in MCP_ROWS:
        fields = ", ".join(f"{k}: {v}" for k, v in m.inject.items() if k != "mode")
        lines.append(f"| `{m.inject['mode']}` ({fields}) | mcp (Python) | tools/call | {m.sees} |")
    return "\n".join(lines)


def in_page(page: str) -> str:
    """The table as the page has it (between the markers)."""
    found = re.search(re.escape(START) + r"\n(.*?)\n" + re.escape(END), page, re.S)
    assert found, f"the page has no {START} ... {END} block"
    return found.group(1)


def write(page: Path) -> bool:
    """Put the rendered table into page; True if it changed."""
    text = page.read_text()
    new = text.replace(in_page(text), render())
    page.write_text(new)
    return new != text
