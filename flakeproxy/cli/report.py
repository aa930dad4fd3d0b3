"""`flakeproxy report RESULTS.json`: re-render a results.json in any report format without running anything."""

from __future__ import annotations

import json
from pathlib import Path

import click
from pydantic import ValidationError

from flakeproxy.errors import ConfigError
from flakeproxy.results import RunResult


def results_file(path: Path) -> Path:
    """A results.json, or the folder a run wrote it into (its output folder): the results.json in it."""
    if not path.is_dir():
        return path
    if not (path / "results.json").is_file():
        raise ConfigError(
            f"{path}: a folder with no results.json in it; pass a run's output folder or its results.json"
        )
    return path / "results.json"


def load_result(path: Path) -> RunResult:
    """A results.json as a RunResult; a missing, unreadable or foreign file is a one-line ConfigError."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{path}: cannot read it ({e.strerror}); pass the results.json a run wrote") from e
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}: not JSON (line {e.lineno}: {e.msg}); pass the results.json a run wrote") from e
    try:
        return RunResult.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        raise ConfigError(
            f"{path}: not a flakeproxy results.json of schema {RunResult.model_fields['schema_version'].default} "
            f"({where}: {first['msg']}); re-run the contract with this flakeproxy to get one"
        ) from e


@click.command()
@click.argument("results", type=click.Path(path_type=Path))
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["junit", "html", "md", "terminal"]),
    default="terminal",
    show_default=True,
    help="junit: JUnit XML for CI; html: a self-contained page; md: a short summary; terminal: the matrix as text.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write here (default stdout).")
def report(results: Path, fmt: str, output: Path | None) -> None:
    """Render a results.json (from `contract run`, even an interrupted one) as a report; runs nothing. RESULTS is
    the results.json, or the output folder holding it.

    Exit 0 once the report is rendered, whatever the run's verdict (a FAIL too): report is not a gate. Gate on
    the exit code of the run that wrote it (`contract run`, `contract score`, `ci`), or on a candidate against a
    baseline with `flakeproxy compare`. Exit 2 when RESULTS cannot be read."""
    from flakeproxy.reports import render

    results = results_file(results)
    text = render(load_result(results), fmt)
    if output is None:
        click.echo(text, nl=False)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    click.echo(f"wrote {output} ({fmt} report of {results})", err=True)
