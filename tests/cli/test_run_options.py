"""`contract run` options beside --seed and --concurrency: --replicas N (or MIN:MAX) in place of run.replicas, in
a real run (a new user's trial asked for it to compare 3 against 7 replicas without editing the config)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

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


def test_replicas_whose_max_cannot_pass_at_min_pass_rate_are_warned_in_the_run(tmp_path: Path) -> None:
    """A trial's --replicas 2:5 at min_pass_rate 0.8: every passing cell stopped at 2 replicas, and only `plan`
    said that no rule can PASS on fewer than 17; the run now says it, and where the max came from."""
    with world(tmp_path, matrix=[{"name": "no-chaos"}], invariants=[{"id": "answers", "type": "completes"}]) as w:
        w.data["scoring"] = {"min_pass_rate": 0.8}
        w.config.write_text(yaml.safe_dump(w.data, sort_keys=False))
        out = cli(w.config, "--replicas", "2:5", "-q", "--format", "none")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (
        "warning: run.replicas max 5 (run.replicas {min: 2, max: 5} or --replicas 2:5): the adaptive rule at "
        "scoring.min_pass_rate 0.8 (confidence 0.95) needs 17 replicas, all passing, to PASS a cell, so it stops a "
        "passing cell early, judged by all on its few replicas; raise the max to 17 or more (--replicas 2:17), or "
        "lower scoring.min_pass_rate"
    ) in out.stderr.splitlines(), out.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [(c["replicas"], c["settled_at"]) for c in results["cells"]] == [(["pass", "pass"], 2)]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["contract", "run", "--shard", "abc"], "error: Invalid value for --shard: shard 'abc' is not I/N, e.g. 2/4; "
         "see 'flakeproxy contract run --help'"),
        (["contract", "run", "--sed", "3"], "error: No such option '--sed'. (Did you mean one of: '--seed', "
         "'--shard', '--shards'?); see 'flakeproxy contract run --help'"),
        (["nosuch"], "error: No such command 'nosuch'; see 'flakeproxy --help'"),
        (["replay", "run", "--speed", "x"], "error: Invalid value for '--speed': 'x' is not a valid float range; "
         "see 'flakeproxy replay run --help'"),
    ],
    ids=["bad-value", "unknown-option", "unknown-command", "bad-float"],
)  # fmt: skip
def test_a_usage_error_is_one_line_naming_the_help_to_read(argv: list[str], said: str) -> None:
    """Found by a new-user trial: click's own four lines (Usage, Try, a blank, Error) for a bad --shard or option,
    where every other error of the tool is one line. Exit 2 as before."""
    done = subprocess.run([sys.executable, "-m", "flakeproxy", *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [said], done.stderr
