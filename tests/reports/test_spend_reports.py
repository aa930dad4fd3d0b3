"""Issue 25 in the reports, from the demo's results: each scenario's tokens, cost and amplification over calm in
the terminal, Markdown and JUnit (parsed by junitparser), and in the HTML as a table and an inline SVG bar chart
checked in Chromium; a results.json without spend (an older one) renders without them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import junitparser
import pytest
import xmlschema

from flakeproxy.reports import write
from flakeproxy.reports.markdown import render as markdown
from flakeproxy.reports.terminal import render as terminal
from flakeproxy.results import RunResult
from tests.reports.browser import open_page

SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))
PROBES = {
    "bars": "[...document.querySelectorAll('svg.amplification rect.bar')].map(r => [r.dataset.scenario, "
    "r.dataset.measure, Number(r.dataset.factor), r.getBoundingClientRect().width])",
    "calm_x": "document.querySelector('svg.amplification line.calm').getBoundingClientRect().x",
    "left_x": "document.querySelector('svg.amplification rect.bar').getBoundingClientRect().x",
    "chart_w": "document.querySelector('svg.amplification').getBoundingClientRect().width",
    "rows": "[...document.querySelectorAll('table.spend tbody tr')].map(tr => tr.querySelector('th').textContent)",
    "overflow": "document.documentElement.scrollWidth - window.innerWidth",
}


def test_the_naive_agents_loop_is_what_the_spend_shows(demo: dict[str, RunResult]) -> None:
    by = {s.scenario: s for s in demo["naive"].spend}
    calm, down = by["no-chaos"], by["tool-down"]
    assert calm.calm and down.total.tool_calls["market_data_api"] == 6 == 6 * calm.total.tool_calls["market_data_api"]
    tokens = down.amplification["tokens"]
    assert tokens is not None and tokens > 2  # what bounded-spend (max 2x) fails it for
    assert tokens == round(down.total.total_tokens / calm.total.total_tokens, 3)
    assert by["llm-stream-cut"].amplification["tokens"] is None  # its cut call's usage is unknown, never 0
    careful = {s.scenario: s for s in demo["careful"].spend}
    assert all((s.amplification["tokens"] or 0) <= 2 for s in careful.values())


def test_terminal_and_markdown_show_each_scenarios_spend(demo: dict[str, RunResult]) -> None:
    result = demo["naive"]
    text, md = terminal(result), markdown(result)
    assert "tokens in  tokens out  cached  cost" in text and "prices as of 2026-11-24" in text
    for row in result.spend:
        total, amp = row.total, row.amplification
        line = next(line for line in text.splitlines() if line.startswith(row.scenario + " "))
        assert f" {total.llm_calls} " in line and f"${total.cost_usd:.4f}" in line
        assert ("calm" if row.calm else f"tokens {amp['tokens']:g}x" if amp["tokens"] else "tokens -") in line
        assert f"| {row.scenario} | {row.episodes} | {total.llm_calls} |" in md
    assert "<details><summary>Spend per scenario</summary>" in md and "| 14+ | 27+ |" in md  # lower bounds
    assert "LLM call(s) of unknown usage: sums marked + are lower bounds" in text  # a cut stream's call
    # a model without a price is named where its cost is shown, not only in results.json (a new user's finding)
    first = result.spend[0]
    unpriced = [first.model_copy(update={"total": first.total.model_copy(update={"unpriced_models": ["gpt-rt"]})})]
    priced_not = result.model_copy(update={"spend": unpriced + result.spend[1:]})
    assert "no price for gpt-rt: costs marked + leave them out (add them under pricing:)" in terminal(priced_not)
    assert "No price for gpt-rt" in markdown(priced_not)
    old = result.model_copy(update={"spend": []})  # a results.json from before issue 25
    assert "tokens in" not in terminal(old) and "Spend per scenario" not in markdown(old)


def test_junit_carries_the_spend_as_properties(demo: dict[str, RunResult], tmp_path: Path) -> None:
    result = demo["naive"]
    [path] = write(result, tmp_path, ["junit"])
    SCHEMA.validate(path)
    suites = {s.name: {p.name: p.value for p in s.properties()} for s in junitparser.JUnitXml.fromfile(str(path))}
    for row in result.spend:
        props = suites[row.scenario]
        assert props["spend.llm_calls"] == str(row.total.llm_calls)
        assert props["spend.input_tokens"] == str(row.total.input_tokens)
        assert float(props["spend.cost_usd"]) == round(row.total.cost_usd, 6)
        assert props["spend.tool_calls.market_data_api"] == str(row.total.tool_calls["market_data_api"])
        tokens = row.amplification["tokens"]
        assert props["amplification.tokens"] == ("unknown" if tokens is None else f"{tokens:g}")
    assert suites["tool-down"]["spend.unknown_usage_calls"] == "0"
    assert suites["llm-stream-cut"]["spend.unknown_usage_calls"] == "1"


def test_html_bar_chart_of_amplification_in_chromium(demo: dict[str, RunResult], chromium: str, tmp_path: Path) -> None:
    result = demo["naive"]
    [path] = write(result, tmp_path, ["html"])
    page = asyncio.run(open_page(path, PROBES, width=1200, height=900))
    assert page.errors == [] and page.requests == [path.resolve().as_uri()]
    bars = {(s, m): (f, w) for s, m, f, w in page.values["bars"]}
    expected = {
        (r.scenario, m): v for r in result.spend if not r.calm for m, v in r.amplification.items() if v is not None
    }
    assert {k: f for k, (f, _) in bars.items()} == {k: v for k, v in expected.items() if k[1] != "tool_calls"}
    # widths follow the factors: tool-down's tokens bar is over 4x the calm line's distance from the axis
    one = page.values["calm_x"] - page.values["left_x"]
    down = bars[("tool-down", "tokens")]
    assert down[1] == pytest.approx(one * down[0], rel=0.02) and down[1] < page.values["chart_w"]
    assert page.values["rows"] == [*(r.scenario for r in result.spend), "whole run"]  # and what the run spent in all
    assert page.values["overflow"] <= 0
    old = result.model_copy(update={"spend": []})
    [path] = write(old, tmp_path / "old", ["html"])
    assert "svg" not in path.read_text() and 'id="spend"' not in path.read_text()


def test_the_unknown_usage_note_counts_what_the_whole_run_row_counts(demo: dict[str, RunResult]) -> None:
    """A trial's note said 18 calls of unknown usage under a whole-run row whose calls were 20 of unknown usage:
    the stateful check's two were in the row, not in the note."""
    result = demo["naive"]
    assert result.spend_total is not None
    more = result.spend_total.unknown_calls + 2  # two calls outside every scenario's row
    wider = result.model_copy(update={"spend_total": result.spend_total.model_copy(update={"unknown_calls": more})})
    assert f"{more} LLM call(s) of unknown usage: sums marked + are lower bounds" in terminal(wider)
