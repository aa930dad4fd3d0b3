"""Reports rendered from a RunResult: terminal text, JUnit XML, a self-contained HTML page, a Markdown summary.
Each format is one module with `render(result) -> str`; `write` puts the chosen ones next to results.json."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from flakeproxy.errors import ConfigError
from flakeproxy.safe_text import escaped

if TYPE_CHECKING:  # the registry is read by the CLI's options before any run: no models imported for it
    from flakeproxy.results import RunResult

__all__ = [
    "DEFAULT_FORMATS",
    "FILES",
    "FORMATS",
    "REGISTRY",
    "ReportFormat",
    "described",
    "parse_formats",
    "render",
    "write",
]


@dataclass(frozen=True)
class ReportFormat:
    """One report format: its --format name, the file it is written to, and the module whose `render(result)`
    makes it (imported only when that format is asked for, so the proxy and `--help` never load the reports)."""

    name: str
    file: str
    module: str
    trailing_newline: bool = False

    def renderer(self) -> Callable[[RunResult], str]:
        render: Callable[[RunResult], str] = import_module(self.module).render
        return (lambda result: render(result) + "\n") if self.trailing_newline else render


#: Every format, in the order `--format` lists them; the CLI's help, FILES and parse_formats read it.
REGISTRY: dict[str, ReportFormat] = {
    f.name: f
    for f in (
        ReportFormat("junit", "junit.xml", "flakeproxy.reports.junit"),
        ReportFormat("html", "report.html", "flakeproxy.reports.html"),
        ReportFormat("md", "summary.md", "flakeproxy.reports.markdown"),
        ReportFormat("terminal", "report.txt", "flakeproxy.reports.terminal", trailing_newline=True),
    )
}
FORMATS = tuple(REGISTRY)
FILES = {name: f.file for name, f in REGISTRY.items()}
DEFAULT_FORMATS = ("junit", "html", "md")


def _renderer(fmt: str) -> Callable[[RunResult], str]:
    if fmt not in REGISTRY:
        raise ConfigError(f"unknown report format {fmt!r}: choose from {', '.join(FORMATS)}")
    return REGISTRY[fmt].renderer()


def described() -> str:
    """'junit (junit.xml), html (report.html), ...' for help texts."""
    return ", ".join(f"{name} ({f.file})" for name, f in REGISTRY.items())


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
