"""`flakeproxy demo`: the bundled example world, offline, two agents through the finance contract."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.option(
    "-o",
    "--output",
    default="flakeproxy-demo",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Folder for each agent's generated config and results.json.",
)
@click.option("-q", "--quiet", is_flag=True, help="No per-episode progress.")
def demo(output: str, quiet: bool) -> None:
    """Run the demo: a fake LLM, a market-data API and an MCP news server on loopback, a careful and a
    naive agent calling them through flakeproxy, and `flakeproxy ci` on each: the finance contract across
    7 scenarios (tool down, rate-limited LLM, cut stream, truncated answer, slow tool, indirect injection,
    no chaos), the api_outage chaos profile, rule-based mutations of the prompt (offline: the
    LLM-written mutation types are listed as skipped), and the replay of a recorded incident (the quote
    feed answering 503).

    Exits 0 when the careful agent passes and the naive one fails, as they should.
    """
    from flakeproxy.cli.written import say_written
    from flakeproxy.reports import DEFAULT_FORMATS
    from flakeproxy.runner.demo.world import run_demo_sync

    results = run_demo_sync(Path(output), click.echo, lambda line: None if quiet else click.echo(line, err=True))
    careful, naive = results["careful"], results["naive"]
    assert careful.ci is not None and naive.ci is not None and careful.score is not None and naive.score is not None
    click.echo(
        f"\ncareful agent: ci overall {careful.ci.overall:.1f}% {careful.ci.verdict} (contract "
        f"{careful.score.resilience:.1f}%); naive agent: ci overall {naive.ci.overall:.1f}% {naive.ci.verdict} "
        f"(contract {naive.score.resilience:.1f}%)"
    )
    for name in results:  # each agent's folder: its generated config, results, reports and mutations
        folder = Path(output) / name
        say_written(folder, DEFAULT_FORMATS, [folder / "flakeproxy.yaml", folder / "mutations.json"])
    raise SystemExit(0 if careful.ci.passed and not naive.ci.passed else 1)
