"""--seed, --concurrency and --replicas in place of run.seed, run.concurrency and run.replicas: --replicas N (fixed)
or MIN:MAX (adaptive), refused in one line naming --replicas where the config could not hold the value."""

from __future__ import annotations

import pytest

from flakeproxy import ConfigError, parse_config
from flakeproxy.config.overrides import parse_replicas, with_overrides
from flakeproxy.config.settings import AdaptiveReplicas
from tests.config.base_config import BASE

ADAPTIVE = BASE + "run: {replicas: {min: 2, max: 30}}\n"
RATE = "scoring:\n  replica_aggregation: rate\n  min_pass_rate: 0.8\n"


def test_replicas_fixed_or_adaptive_replace_the_configs() -> None:
    config = parse_config(BASE, "f.yaml")
    assert config.run.replicas == 1
    assert with_overrides(config, seed=3, replicas="5").run.replicas == 5
    assert with_overrides(config, seed=3).run.seed == 3 and with_overrides(config).run.replicas == 1
    adaptive = parse_config(ADAPTIVE.replace("scoring:\n", RATE), "f.yaml")
    fixed = with_overrides(adaptive, replicas="20")  # fixed in place of {min, max}: the rate rule judges 20
    assert fixed.run.replicas == 20 and fixed.run.adaptive is None
    wider = with_overrides(adaptive, replicas="2:60")
    assert wider.run.adaptive == AdaptiveReplicas(min=2, max=60)


@pytest.mark.parametrize(
    ("text", "value", "message"),
    [
        (BASE, "many", "--replicas 'many': give a number (e.g. 5) or MIN:MAX for adaptive replicas (e.g. 2:30)"),
        (BASE, "0", "--replicas 0: Input should be greater than or equal to 1"),
        (BASE, "9:3", "--replicas 9:3: replicas min (9) is more than max (3); e.g. {min: 2, max: 30}"),
        (BASE, "2:30", "--replicas 2:30: adaptive run.replicas {min, max} needs scoring.min_pass_rate"),
        (
            BASE.replace("scoring:\n", "scoring:\n  replica_aggregation: at_least_k\n  k: 3\n")
            + "run: {replicas: 3}\n",
            "2",
            "--replicas 2: k (3) is more than run.replicas (2): at_least_k could never pass",
        ),
    ],
)
def test_a_value_the_config_could_not_hold_is_one_line_naming_replicas(text: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        with_overrides(parse_config(text, "f.yaml"), replicas=value)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value), str(raised.value)


def test_parse_replicas() -> None:
    assert parse_replicas("7") == 7 and parse_replicas(" 2 : 40 ") == {"min": 2, "max": 40}


def test_fixed_replicas_over_an_adaptive_config_leave_its_min_pass_rate_unread_with_a_warning() -> None:
    """min_pass_rate is read by the adaptive rule only here: --replicas 5 runs (a trial was refused once it had set
    min_pass_rate as the --replicas MIN:MAX error asked), and the run's warnings say that it judges without it."""
    from flakeproxy.config.warnings import config_warnings

    adaptive = parse_config(ADAPTIVE.replace("scoring:\n", "scoring:\n  min_pass_rate: 0.8\n"), "f.yaml")
    assert not [w for w in config_warnings(adaptive) if "min_pass_rate" in w]
    fixed = with_overrides(adaptive, replicas="5")
    assert fixed.run.replicas == 5 and fixed.run.adaptive is None
    [warning] = [w for w in config_warnings(fixed) if "min_pass_rate" in w]
    assert warning.startswith("scoring.min_pass_rate 0.8 is read only by replica_aggregation: rate or adaptive")
    assert "not by all with 5 fixed replica(s)" in warning


def test_a_config_set_up_for_replicas_min_max_runs_fixed_too() -> None:
    """The trial's path: `--replicas 2:5` asked for scoring.min_pass_rate; with it in a fixed-replica config, the
    config loads (a warning) and the option makes the run adaptive."""
    config = parse_config(BASE.replace("scoring:\n", "scoring:\n  min_pass_rate: 0.8\n"), "f.yaml")
    assert with_overrides(config, replicas="2:5").run.adaptive == AdaptiveReplicas(min=2, max=5)
