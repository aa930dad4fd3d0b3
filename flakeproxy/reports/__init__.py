"""Reports rendered from a RunResult: terminal text, JUnit XML, a self-contained HTML page, a Markdown summary.
Each format is one module with `render(result) -> str`; `write` puts the chosen ones next to results.json."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from flakeproxy.errors import ConfigError
from flakeproxy.results import RunResult
from flakeproxy.safe_text import escaped

__all__ = ["DEFAULT_FORMATS", "FILES", "FORMATS", "parse_formats", "render", "write"]

FORMATS = ("junit", "html", "md", "terminal")
FILES = {"junit": "junit.xml", "html": "report.html", "md": "summary.md", "terminal": "report.txt"}
DEFAULT_FORMATS = ("junit", "html", "md")


def _renderer(fmt: str) -> Callable[[RunResult], str]:
    if fmt == "junit":
        from flakeproxy.reports.junit import render as junit

        return junit
    if fmt == "html":
        from flakeproxy.reports.html import render as html

        return lambda result: html(result)
    if fmt == "md":
        from flakeproxy.reports.markdown import render as md

        return md
    if fmt == "terminal":
        from flakeproxy.reports.terminal import render as terminal

        return lambda result: terminal(result) + "\n"
    raise ConfigError(f"unknown report format {fmt!r}: choose from {', '.join(FORMATS)}")


def render(result: RunResult, fmt: str) -> str:
    return _renderer(fmt)(result)


def parse_formats(text: str) -> list[str]:
    """'junit,html' -> ['junit', 'html']; 'none' or '' -> []; an unknown name is a one-line ConfigError."""
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    if names == ["none"]:
        return []
    unknown = [n for n in names if n not in FORMATS]
    if unknown:
        raise ConfigError(
            f"--format {text!r}: unknown format {unknown[0]!r}; use a comma-separated list of "
            f"{', '.join(FORMATS)} (or none)"
        )
    return list(dict.fromkeys(names))


def write(result: RunResult, output: Path, formats: Iterable[str]) -> list[Path]:
    """Write each format's file into output (atomically, like results.json); return the paths written."""
    output.mkdir(parents=True, exist_ok=True)
    result, written = escaped(result), []  # whatever the agent answered: no lone surrogate reaches a file
    for fmt in formats:
        path = output / FILES[fmt]
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(render(result, fmt), encoding="utf-8")
        tmp.replace(path)
        written.append(path)
    return written
