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
        (  # min_pass_rate is read by the adaptive rule only here: fixed replicas would leave it unread
            ADAPTIVE.replace("scoring:\n", "scoring:\n  min_pass_rate: 0.8\n"),
            "5",
            "--replicas 5: min_pass_rate is only read by replica_aggregation: rate or adaptive run.replicas",
        ),
    ],
)
def test_a_value_the_config_could_not_hold_is_one_line_naming_replicas(text: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        with_overrides(parse_config(text, "f.yaml"), replicas=value)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value), str(raised.value)


def test_parse_replicas() -> None:
    assert parse_replicas("7") == 7 and parse_replicas(" 2 : 40 ") == {"min": 2, "max": 40}
