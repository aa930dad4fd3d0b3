"""Writes docs/reference/*.md from the code's own models and tables, so the reference cannot drift from the code.

`python scripts/docs_ref.py` rewrites the pages; `--check` only compares (exit 1 when one is stale).
tests/docs/test_reference.py regenerates them in memory and fails on any difference. Every page is built from
what the code declares: the config's pydantic models, the fault and invariant unions, the mutation rules and
weights, the chaos profiles, the control API's router and the click command tree. Edit those, then rerun this.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file: the repository's own tests/ and scripts/ import as packages
    sys.path.insert(0, str(REPO))

from scripts.docs_ref_pages import (  # noqa: E402
    cli_page,
    config_page,
    control_api_page,
    faults_page,
    invariants_page,
    mutations_page,
    profiles_page,
)

OUT = REPO / "docs" / "reference"
PAGES: dict[str, Callable[[], str]] = {
    "config.md": config_page,
    "faults.md": faults_page,
    "invariants.md": invariants_page,
    "mutations.md": mutations_page,
    "profiles.md": profiles_page,
    "control-api.md": control_api_page,
    "cli.md": cli_page,
}


def render_all() -> dict[str, str]:
    """Every reference page's text, by file name, built fresh from the code."""
    return {name: page() for name, page in PAGES.items()}


def stale(out: Path = OUT) -> list[str]:
    """The pages whose file differs from what the code gives now (missing ones included)."""
    fresh = render_all()
    return [name for name, text in fresh.items() if not (out / name).exists() or (out / name).read_text() != text]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        bad = stale()
        print("docs/reference: in sync" if not bad else f"docs/reference: out of date: {', '.join(bad)}; run it again")
        return 1 if bad else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in render_all().items():
        (OUT / name).write_text(text)
    print(f"docs/reference: wrote {len(PAGES)} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
