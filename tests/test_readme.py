"""The README's two commands come first, and CI runs the same. The README's other checks moved with its
content: the catalogues to tests/docs/test_reference.py, its length and links to tests/docs/test_site.py."""

from __future__ import annotations

from tests.conftest import REPO

README = (REPO / "README.md").read_text()


def test_the_two_commands_come_first() -> None:
    block = README.split("```bash\n", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in block.strip().splitlines()] == [
        "bash scripts/demo",
        "bash scripts/test",
    ]
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    assert ci[-2:] == ["bash scripts/test", "bash scripts/test-containers"]  # the README's command, then the containers
