"""An output folder the run cannot write (a read-only volume, a PersistentVolumeClaim owned by root) is one
line and exit 2 before the agent is called, not a traceback after the run."""

from __future__ import annotations

from pathlib import Path

from tests.runner.world import cli, world


def test_an_output_folder_it_cannot_write_is_one_line_before_the_run(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the output folder should be\n")
    with world(tmp_path) as w:
        out = cli(w.config, "-o", str(blocked / "shard-0"))
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines() == [
        f"error: cannot write {blocked / 'shard-0' / 'results.json'} (Not a directory); point run.output or -o "
        "at a folder this user can write"
    ]
    assert "[1/" not in out.stderr  # no episode ran
