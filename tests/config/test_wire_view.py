"""config/wire_config.handed: what `contract run` hands its proxy child (runner/forked.py), wire_view pickled,
instead of the child validating the file again (issue 23). Through the pickle, it is the config the proxy would
have read from the file, section by section: every example's, and one that sets the sections examples leave out."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
import yaml

from flakeproxy.config import FlakeproxyConfig, WireConfig, load_config
from flakeproxy.config.wire_config import handed
from tests.conftest import EXAMPLES

#: Sections no example sets, on top of an example: pricing (with its private fallback), telemetry, redaction,
#: run settings; the test moves the chaos matrix under the contract.
PRICE = {"input_usd_per_mtok": 1.0, "output_usd_per_mtok": 2.0}
MORE: dict[str, Any] = {
    "pricing": {"as_of": "2026-11-01", "models": {"my-model*": PRICE}},
    "telemetry": {"otlp_endpoint": "http://127.0.0.1:4318", "headers": {"authorization": "Bearer ${OTEL_TOKEN}"}},
    "redact": ["x-internal-key"],
    "run": {"seed": 7, "replicas": 3, "concurrency": 2},
}


def _through_the_pipe(config: FlakeproxyConfig) -> WireConfig:
    config_handed = pickle.loads(handed(config))
    assert type(config_handed) is WireConfig
    return config_handed


def _same_as_the_file(path: Path) -> None:
    handed, read = _through_the_pipe(load_config(path)), load_config(path, model=WireConfig)
    skip = {"contract", "invariants", "chaos_matrix"}  # the proxy's matrix is compared whole below
    assert handed.model_dump(exclude=skip) == read.model_dump(exclude=skip)
    assert [s.model_dump() for s in handed.matrix] == [s.model_dump() for s in read.matrix]
    assert handed.contract is None and handed.invariants is None, "the proxy imports no invariant types"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.relative_to(p.parents[1]).as_posix())
def test_every_example_reaches_the_proxy_as_its_file_says(path: Path) -> None:
    _same_as_the_file(path)


def test_the_sections_the_examples_leave_out_reach_it_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_TOKEN", "t0ken")
    data = yaml.safe_load((EXAMPLES[0]).read_text()) | MORE
    matrix = data.pop("chaos_matrix", None) or data.get("contract", {}).pop("chaos_matrix", None)
    assert matrix, "the example has a chaos matrix to move under its contract"
    data.setdefault("contract", {"name": "c", "invariants": [{"id": "a", "type": "regex", "pattern": "x"}]})
    data["contract"]["chaos_matrix"] = matrix
    (path := tmp_path / "c.yaml").write_text(yaml.safe_dump(data))
    _same_as_the_file(path)
    assert _through_the_pipe(load_config(path)).telemetry is not None
