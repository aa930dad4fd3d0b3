"""The public surface is explicit: pin flakeproxy.__all__."""

from __future__ import annotations

import flakeproxy


def test_public_names() -> None:
    assert sorted(flakeproxy.__all__) == sorted(
        [
            "CELL_HEADER",
            "ConfigError",
            "FlakeproxyConfig",
            "FlakeproxyError",
            "InfrastructureError",
            "__version__",
            "config_schema",
            "load_config",
            "parse_config",
            "current_cell",
            "listener_url",
            "trace_headers",
            "run_ci",
            "run_contract",
            "RunResult",
        ]
    )
    for name in flakeproxy.__all__:
        assert getattr(flakeproxy, name) is not None
