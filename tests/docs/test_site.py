"""The documentation site builds with `mkdocs build --strict` (every nav entry, link and anchor resolves), asks
no outside host for anything, and its getting-started page renders in headless Chromium with no request
beyond its own files. The README stays a first visit's page and points at the site."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

pytest.importorskip("mkdocs", reason="mkdocs-material is a dev dependency: bash scripts/bootstrap --dev")

#: a resource a page would load from another host: an attribute, a CSS url() or an @import of http(s):// or //
OUTSIDE = re.compile(r"""(?:(?:src|href)\s*=\s*["']|url\(\s*["']?|@import\s+["']?)(?:https?:)?//""")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    args = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(REPO / "mkdocs.yml"), "-d", str(out)]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # material's notice about its successor: not our concern
    built = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    assert built.returncode == 0, built.stderr[-3000:]
    return out


def test_every_nav_page_is_built(site: Path) -> None:
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text())["nav"]
    pages: list[str] = []

    def walk(items: list[object]) -> None:
        for item in items:
            for value in item.values() if isinstance(item, dict) else [item]:
                walk(value) if isinstance(value, list) else pages.append(str(value))

    walk(nav)
    assert len(pages) >= 25
    built = [site / ("index.html" if p == "index.md" else p.removesuffix(".md") + "/index.html") for p in pages]
    assert [str(b) for b in built if not b.is_file()] == []


def test_the_built_site_asks_no_outside_host(site: Path) -> None:
    offenders = [
        f"{path.relative_to(site)}: {m.group(0)}"
        for path in site.rglob("*")
        if path.suffix in (".html", ".css", ".js")
        for m in OUTSIDE.finditer(path.read_text(errors="replace"))
    ]
    assert offenders == []
    assert "fonts.googleapis" not in "".join(p.read_text(errors="replace") for p in site.rglob("*.html"))


def test_a_page_with_an_outside_font_would_be_caught() -> None:
    assert OUTSIDE.search('<link href="https://fonts.googleapis.com/css?family=Roboto" rel="stylesheet">')
    assert OUTSIDE.search("@import url(//fonts.gstatic.com/x.css);")
    assert not OUTSIDE.search('<a href="../reference/faults/">faults</a>')


def test_the_getting_started_page_in_chromium(site: Path, tmp_path: Path) -> None:
    from tests.reports.browser import chromium, open_page

    if chromium() is None:  # scripts/test installs Debian's chromium package where it can (root, apt-get)
        pytest.skip("headless Chromium is missing: apt-get install -y chromium (scripts/test does it as root)")
    title = "document.querySelector('h1').textContent"
    page = asyncio.run(open_page(site / "getting-started" / "index.html", {"title": title}, width=1280, height=900))
    assert page.values["title"].startswith("Getting started")
    assert [r for r in page.requests if not r.startswith(("file:", "data:"))] == []
    assert page.errors == []
    assert page.screenshot.startswith(b"\x89PNG") and len(page.screenshot) > 20_000


def test_the_readme_is_a_first_visit() -> None:
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) < 150
    assert "mkdocs serve" in readme
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert len(links) >= 5 and [link for link in links if not (REPO / link).is_file()] == []
