"""`flakeproxy compare BASE CANDIDATE`: did the candidate's pass rates drop against the baseline's?"""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("base", type=click.Path(exists=True, dir_okay=True))
@click.argument("candidate", type=click.Path(exists=True, dir_okay=True))
@click.option("--confidence", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True,
              help="Confidence of the change intervals; a regression BLOCKs at p <= (1 - confidence) / 2.")  # fmt: skip
@click.option("--margin", type=click.FloatRange(0.0, 1.0, min_open=True), default=0.10, show_default=True,
              help="PASS needs every cell's change interval above -margin (non-inferiority).")  # fmt: skip
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False),
              help="Also write the comparison as Markdown (a pull request's comment) to this file.")  # fmt: skip
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Also write the comparison as JSON.")
def compare(
    base: str, candidate: str, confidence: float, margin: float, markdown_path: str | None, json_path: str | None
) -> None:
    """Compare two runs' results.json (files, or folders holding one), cell by cell: the change in pass rate
    with Newcombe's interval and Fisher's exact test (Holm-adjusted across cells), and one verdict.

    \b
    PASS (exit 0)          no cell regressed and every cell is within --margin of the baseline
    BLOCK (exit 1)         some cell's pass rate dropped significantly
    INCONCLUSIVE (exit 4)  no regression shown, but too few replicas to rule one out
                           (or a baseline cell is missing from, or not judged in,
                           the candidate)
    Errors and not-applicable replicas do not count. Run both sides with run.replicas > 1: with one
    replica per cell nothing can be shown either way.

    PASS and INCONCLUSIVE say no regression was shown against the baseline, never that the candidate
    passes: a baseline that already fails lets the same failure through. When the candidate's own
    verdict is not PASS it leads the output ("PASS vs the baseline, but the candidate itself FAILs:
    ..."); the exit code stays the comparison's, so a CI gate takes the worse of it and the run's
    own exit code (the GitHub Action does).

    Cells come by concern: regressions, then drops (the most severe and the largest first), each
    with its severity. An inconclusive drop larger than --margin says what would decide it: the
    fewest replicas per side at which the same pass rates would BLOCK (e.g. 3/3 -> 0/3 among 58
    cells: 7), computed with the same test. The cells with no drop seen are counted in one line;
    --markdown and --json list every cell."""
    from flakeproxy.cli.report import load_result, results_file
    from flakeproxy.judging.compare_results import EXIT, compare_results, markdown, terminal

    files = [results_file(Path(p)) for p in (base, candidate)]
    sources = (str(files[0]), str(files[1]))
    comparison = compare_results(load_result(files[0]), load_result(files[1]), sources, confidence, margin)
    click.echo(terminal(comparison))
    written = []
    if markdown_path:
        Path(markdown_path).write_text(markdown(comparison, sources), encoding="utf-8")
        written.append(markdown_path)
    if json_path:
        Path(json_path).write_text(comparison.model_dump_json(indent=2) + "\n", encoding="utf-8")
        written.append(json_path)
    if written:
        click.echo("wrote " + ", ".join(written), err=True)
    raise SystemExit(EXIT[comparison.verdict])
