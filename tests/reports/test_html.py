"""report.html in headless Chromium: self-contained (no request but the file itself), no console error, the
naive agent's FAIL cells in the grid linking to their detail, agent text shown as text, usable at phone width."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from flakeproxy.reports import write
from flakeproxy.reports.html import render
from flakeproxy.results import RunResult
from tests.reports.browser import Page, open_page
from tests.reports.conftest import AGENTS, interrupted

PAYLOAD = "<img src=x onerror=alert(1)><script>alert(2)</script>"
PNG = b"\x89PNG\r\n\x1a\n"
PROBES = {
    "fails": "[...document.querySelectorAll('table.matrix a.o-fail')].map(a => a.closest('tr').querySelector('th')"
    ".textContent + ' @ ' + document.querySelectorAll('table.matrix thead th')[a.closest('td').cellIndex].textContent)",
    "dangling": "[...document.querySelectorAll('table.matrix a')].filter(a => !document.getElementById("
    "a.getAttribute('href').slice(1))).length",
    "verdict": "document.querySelector('.verdict').textContent",
    "overflow": "document.documentElement.scrollWidth - window.innerWidth",
    "scripts": "document.scripts.length",
    "images": "document.images.length",
    "text": "document.body.innerText",
}


def _open(result: RunResult, tmp_path: Path, width: int = 1200) -> tuple[Page, Path]:
    [path] = write(result, tmp_path, ["html"])
    page = asyncio.run(open_page(path, PROBES, width=width, height=900))
    assert page.screenshot.startswith(PNG) and len(page.screenshot) > 10_000
    assert page.errors == [] and page.dialogs == []
    assert page.requests == [path.resolve().as_uri()], "the report fetched something besides itself"
    return page, path


@pytest.mark.parametrize("agent", AGENTS)
def test_html_report_in_chromium(agent: str, demo: dict[str, RunResult], chromium: str, tmp_path: Path) -> None:
    result = demo[agent]
    page, _ = _open(result, tmp_path)
    (tmp_path / "screenshot.png").write_bytes(page.screenshot)
    expected = sorted(f"{c.invariant} @ {c.scenario}" for c in result.cells if c.outcome == "fail")
    assert sorted(page.values["fails"]) == expected
    assert len(expected) == (13 if agent == "naive" else 0)
    assert page.values["dangling"] == 0
    assert page.values["verdict"] == ("FAIL" if agent == "naive" else "PASS")
    assert page.values["overflow"] <= 0 and page.values["scripts"] == 0
    for cell in result.cells:
        if cell.outcome == "fail":
            assert cell.reason in page.values["text"]


def test_agent_text_shows_as_text_and_runs_nothing(demo: dict[str, RunResult], chromium: str, tmp_path: Path) -> None:
    result = demo["naive"].model_copy(deep=True)
    cell = result.cell("never-fabricate-when-tools-fail", "tool-down")
    episode = result.episode(cell.episodes[0])
    episode.answer = PAYLOAD
    episode.journal[0]["url"] = f"http://127.0.0.1/{PAYLOAD}"
    cell.reason = f"matched {PAYLOAD}"
    cell.verdicts[0].evidence = {"excerpt": PAYLOAD}
    result.warnings.append(PAYLOAD)
    page, path = _open(result, tmp_path)
    assert page.values["scripts"] == 0 and page.values["images"] == 0
    assert page.values["text"].count(PAYLOAD) >= 4  # answer (cell and episode), reason, warning
    assert "&lt;img src=x onerror=alert(1)&gt;" in path.read_text()


def test_phone_width_scrolls_the_matrix_not_the_page(demo: dict[str, RunResult], chromium: str, tmp_path: Path) -> None:
    page, _ = _open(demo["naive"], tmp_path, width=390)
    assert page.values["overflow"] <= 0
    assert len(page.values["fails"]) == 13


def test_html_is_self_contained_and_handles_print_dark_and_interruption(demo: dict[str, RunResult]) -> None:
    text = render(interrupted(demo["naive"]))
    assert "Content-Security-Policy\" content=\"default-src 'none'" in text
    assert re.findall(r"""(?:src|href)=["']?(?!#)[^"' >]+""", text) == []
    assert "@media print" in text and "prefers-color-scheme:dark" in text and "<script" not in text
    assert "<b>Interrupted.</b>" in text and ">INCOMPLETE<" in text
    assert text.count('class="o-missing"') == 5 * len(demo["naive"].invariants)  # scenarios not run


def test_the_harness_sees_what_it_must_not(chromium: str, tmp_path: Path) -> None:
    """The checks above can fail: an unescaped payload and a fetch show up as errors and requests."""
    from flakeproxy.reports.html import CSP

    path = tmp_path / "bad.html"
    path.write_text(
        f'<html><head><meta http-equiv="Content-Security-Policy" content="{CSP}"></head>'
        f'<body>{PAYLOAD}<img src="http://127.0.0.1:9/a.png"></body></html>'
    )
    page = asyncio.run(open_page(path, {"images": PROBES["images"]}))
    assert len(page.errors) >= 2 and any("inline script" in e for e in page.errors)
    assert "http://127.0.0.1:9/a.png" in page.requests and page.values["images"] == 2


def test_readme_shows_the_report() -> None:
    from tests.conftest import REPO

    png = REPO / "docs" / "report.png"
    assert "![The HTML report of the demo's naive agent](docs/report.png)" in (REPO / "README.md").read_text()
    assert png.read_bytes().startswith(PNG) and png.stat().st_size < 300_000


def test_flaky_cells_and_composites_are_shown(demo: dict[str, RunResult]) -> None:
    from flakeproxy.results import Composite

    result = demo["naive"].model_copy(deep=True)
    cell = result.cell("max-latency", "slow-tool")
    cell.replicas, cell.flaky, cell.pass_at_k, cell.pass_hat_k = ["pass", "fail", "pass"], True, 0.9, 0.3
    assert result.score is not None
    result.score.composite["slow-tool"] = Composite(composite=0.42, passed=False, gate_failed=["max-latency"])
    text = render(result)
    assert ">PASS ~</a>" in text and "<td>PASS FAIL PASS</td><td class=num>0.90</td><td class=num>0.30</td>" in text
    assert "0.42 (failed)<br><small>gate: max-latency</small>" in text


def test_dark_mode_and_print(demo: dict[str, RunResult], chromium: str, tmp_path: Path) -> None:
    """Dark mode darkens the page; printed, the collapsed cells and episodes are shown in full."""
    [path] = write(demo["naive"], tmp_path, ["html"])
    probes = {
        "bg": "getComputedStyle(document.body).backgroundColor",
        "closed": "document.querySelectorAll('details.cell:not([open]) .body').length",
        "hidden": "[...document.querySelectorAll('details.cell:not([open]) .body')]"
        ".filter(e => !e.checkVisibility()).length",
    }
    light = asyncio.run(open_page(path, probes))
    dark = asyncio.run(open_page(path, probes, dark=True))
    printed = asyncio.run(open_page(path, probes, media="print", dark=True))
    assert light.values["bg"] == "rgb(255, 255, 255)" and dark.values["bg"] == "rgb(15, 19, 24)"
    assert light.values["closed"] > 0 and light.values["hidden"] == light.values["closed"]
    assert printed.values["hidden"] == 0 and printed.values["bg"] == "rgb(255, 255, 255)"
    assert light.errors == dark.errors == printed.errors == []


def test_error_cells_show_the_agent_error(demo: dict[str, RunResult]) -> None:
    result = demo["naive"].model_copy(deep=True)
    cell = result.cell("always-cite-source", "tool-down")
    cell.outcome, cell.reason = "error", "could not judge: the agent gave no answer"
    episode = result.episode(cell.episodes[0])
    episode.answer, episode.error = None, "HTTP 500 from the agent"
    text = render(result)
    assert '<a class="o-error" href="#cell-' in text and ">ERROR</a>" in text
    assert '<span class="badge o-error">agent error</span> HTTP 500 from the agent' in text
