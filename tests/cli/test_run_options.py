"""`contract run` options beside --seed and --concurrency: --replicas N (or MIN:MAX) in place of run.replicas, in
a real run (a new user's trial asked for it to compare 3 against 7 replicas without editing the config)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.runner.world import cli, world


def test_replicas_overrides_run_replicas(tmp_path: Path) -> None:
    with world(tmp_path, matrix=[{"name": "no-chaos"}], invariants=[{"id": "answers", "type": "completes"}]) as w:
        out = cli(w.config, "--replicas", "3", "-q", "--format", "none")
        refused = cli(w.config, "--replicas", "2:30", "-q")
    assert out.returncode == 0, out.stdout + out.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert sorted(e["replica"] for e in results["episodes"]) == [0, 1, 2]  # the config says 1
    assert [c["replicas"] for c in results["cells"]] == [["pass", "pass", "pass"]]
    assert refused.returncode == 2 and refused.stderr == (
        "error: --replicas 2:30: adaptive run.replicas {min, max} needs scoring.min_pass_rate: the pass rate its "
        "stopping rule tells cells apart from (e.g. min_pass_rate: 0.8)\n"
    )
