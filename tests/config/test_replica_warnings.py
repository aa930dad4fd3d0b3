"""Replicas too few for the rate rule to PASS a cell (a new user's --replicas 2:5 at min_pass_rate 0.8: every
passing cell stopped INCONCLUSIVE, and only `flakeproxy plan` said why): one warning naming run.replicas and
--replicas, min_pass_rate and the replicas a PASS needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from flakeproxy.cli.main import main
from flakeproxy.config import parse_config
from flakeproxy.config.overrides import with_overrides
from flakeproxy.config.replica_warnings import too_few_replicas_to_pass
from flakeproxy.config.warnings import config_warnings
from tests.config.base_config import BASE

RATE_2_5 = (
    "run.replicas max 5 (run.replicas {min: 2, max: 5} or --replicas 2:5): the adaptive rule at scoring.min_pass_rate "
    "0.8 (confidence 0.95) needs 17 replicas, all passing, to PASS a cell, so it ends every passing cell INCONCLUSIVE; "
    "raise the max to 17 or more (--replicas 2:17), or lower scoring.min_pass_rate"
)


def config(replicas: str, scoring: str) -> str:
    return BASE.replace("scoring:\n", f"scoring:\n{scoring}") + f"run: {{replicas: {replicas}}}\n"


@pytest.mark.parametrize(
    ("replicas", "scoring", "warning"),
    [
        ("{min: 2, max: 5}", "  replica_aggregation: rate\n  min_pass_rate: 0.8\n", RATE_2_5),
        (
            "{min: 2, max: 5}",
            "  min_pass_rate: 0.8\n",  # replica_aggregation: all (the default)
            "run.replicas max 5 (run.replicas {min: 2, max: 5} or --replicas 2:5): the adaptive rule at "
            "scoring.min_pass_rate 0.8 (confidence 0.95) needs 17 replicas, all passing, to PASS a cell, so it stops "
            "a passing cell early, judged by all on its few replicas; raise the max to 17 or more (--replicas 2:17), "
            "or lower scoring.min_pass_rate",
        ),
        (
            "{min: 3, max: 10}",
            "  replica_aggregation: rate\n  min_pass_rate: 0.8\n  confidence: 0.9\n",
            "run.replicas max 10 (run.replicas {min: 3, max: 10} or --replicas 3:10): the adaptive rule at "
            "scoring.min_pass_rate 0.8 (confidence 0.9) needs 14 replicas, all passing, to PASS a cell, so it ends "
            "every passing cell INCONCLUSIVE; raise the max to 14 or more (--replicas 3:14), or lower "
            "scoring.min_pass_rate",
        ),
        (
            "5",
            "  replica_aggregation: rate\n  min_pass_rate: 0.8\n",
            "run.replicas 5 (or --replicas 5): replica_aggregation: rate at scoring.min_pass_rate 0.8 (confidence "
            "0.95) needs 17 replicas, all passing, to PASS a cell, so every cell ends FAIL or INCONCLUSIVE at best; "
            "raise run.replicas to 17 or more (--replicas N), or lower scoring.min_pass_rate",
        ),
        ("{min: 2, max: 17}", "  replica_aggregation: rate\n  min_pass_rate: 0.8\n", None),  # 17/17 can PASS
        ("{min: 2, max: 6}", "  replica_aggregation: rate\n  min_pass_rate: 0.5\n", None),  # 0.5 needs 6
        ("17", "  replica_aggregation: rate\n  min_pass_rate: 0.8\n", None),
        ("5", "  min_pass_rate: 0.8\n", None),  # fixed, all: min_pass_rate unread (its own warning)
    ],
)
def test_too_few_replicas_to_pass(replicas: str, scoring: str, warning: str | None) -> None:
    parsed = parse_config(config(replicas, scoring), "f.yaml")
    assert too_few_replicas_to_pass(parsed.run, parsed.scoring) == ([warning] if warning else [])


def test_replicas_from_the_command_line_are_warned_as_the_run_prints_them() -> None:
    """The run prints config_warnings of the config with --replicas in place (the trial's path)."""
    fixed = parse_config(BASE.replace("scoring:\n", "scoring:\n  min_pass_rate: 0.8\n"), "f.yaml")
    assert not [w for w in config_warnings(fixed) if "PASS a cell" in w]
    [line] = [w for w in config_warnings(with_overrides(fixed, replicas="2:5")) if "PASS a cell" in w]
    assert line.startswith("run.replicas max 5 (run.replicas {min: 2, max: 5} or --replicas 2:5): ") and (
        "needs 17 replicas" in line and "judged by all on its few replicas" in line
    ), line
    assert not [w for w in config_warnings(with_overrides(fixed, replicas="2:30")) if "PASS a cell" in w]


def test_contract_validate_prints_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "flakeproxy.yaml"
    path.write_text(config("{min: 2, max: 5}", "  replica_aggregation: rate\n  min_pass_rate: 0.8\n"))
    with pytest.raises(SystemExit) as info:
        main(["contract", "validate", "-c", str(path)])
    out, err = capsys.readouterr()
    assert info.value.code == 0 and "valid" in out
    assert f"warning: {RATE_2_5}" in err.splitlines(), err
