"""The last line of every command that writes results: the files it wrote, so nobody has to guess where."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from flakeproxy.console import echo
from flakeproxy.reports import FILES


def written_files(out: Path, formats: Iterable[str], extra: Iterable[Path] = ()) -> list[Path]:
    """results.json, each chosen report, then any extra file (mutations.json, a config), as far as they exist."""
    files = [out / "results.json", *(out / FILES[fmt] for fmt in formats), *extra]
    return [f for f in dict.fromkeys(files) if f.exists()]


def written_line(files: Iterable[Path]) -> str:
    """`wrote a/results.json, a/report.html`, or a line saying nothing was written."""
    names = [str(f) for f in files]
    return "wrote " + ", ".join(names) if names else "wrote nothing"


def say_written(out: Path, formats: Iterable[str], extra: Iterable[Path] = ()) -> None:
    """Print, on stderr (stdout may be a score or a report someone parses), the files a run wrote into out."""
    echo(written_line(written_files(out, formats, extra)), err=True)
