"""`flakeproxy merge`: the shards of a contract run as one result, judged and scored as the unsharded run."""

from __future__ import annotations

from pathlib import Path

import click

from flakeproxy.cli.options import config_option, formats_option
from flakeproxy.cli.running import write_reports
from flakeproxy.cli.written import say_written
from flakeproxy.config import load_config
from flakeproxy.errors import ConfigError
from flakeproxy.reports import parse_formats


@click.command()
@config_option
@click.argument("shards", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "-o", "--output", type=click.Path(file_okay=False), help="Folder for the merged results (default run.output)."
)
@formats_option()
def merge(config_path: str, shards: tuple[str, ...], output: str | None, formats: str) -> None:
    """Combine the results.json of every shard (files, or folders holding one) of `contract run --shard I/N`
    into one results.json whose cells, score and exit code are those of the unsharded run. Refuses shards
    of another config or seed, an unfinished one, or a missing one (exit 2), writing then a record that says
    why (results.json incomplete, and the reports) where the merged results would have gone."""
    from flakeproxy.cli.report import load_result, results_file
    from flakeproxy.judging.scoring import exit_code
    from flakeproxy.planning.merge import merge as merge_shards
    from flakeproxy.reports.terminal import render
    from flakeproxy.runner.results_file import write

    wanted = parse_formats(formats)
    config = load_config(config_path)
    files = [results_file(Path(p)) for p in shards]
    results = [(str(f), load_result(f)) for f in files]
    out = Path(output or config.run.output)
    try:
        merged = merge_shards(config, config_path, results)
    except ConfigError as e:  # a CI's next step reads the merged summary: it says why there is none (a trial)
        from flakeproxy.runner.results_file import new_result

        record = new_result(config, config_path)
        record.complete, record.interrupted_by = False, f"merge refused: {e}"
        write(record, out)
        write_reports(out, wanted, record)
        say_written(out, wanted)
        raise
    write(merged, out)
    write_reports(out, wanted, merged)
    click.echo(render(merged))
    say_written(out, wanted)
    raise SystemExit(exit_code(merged.score.verdict if merged.score is not None else None))
