"""Helpers for the framework tests: run the LangGraph example with a config of the test's own, and read
results.json by (invariant, scenario)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "frameworks"


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    results: dict[str, Any]
    config: Path

    def cell(self, invariant: str, scenario: str) -> dict[str, Any]:
        return next(c for c in self.results["cells"] if c["invariant"] == invariant and c["scenario"] == scenario)

    def episodes(self, scenario: str) -> list[dict[str, Any]]:
        return [e for e in self.results["episodes"] if e["scenario"] == scenario]

    def coverage(self, scenario: str) -> dict[str, Any]:
        return next(c for c in self.results["coverage"] if c["scenario"] == scenario)


def example_config() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((EXAMPLE / "flakeproxy.yaml").read_text())
    return data


def read_results(out: subprocess.CompletedProcess[str], output: Path, config: Path) -> Run:
    results = output / "results.json"
    assert results.exists(), f"no results.json (exit {out.returncode}): {out.stderr[-2000:]}"
    return Run(out.returncode, out.stdout, out.stderr, json.loads(results.read_text()), config)


def run_langgraph_example(tmp_path: Path, config: dict[str, Any], *extra: str) -> Run:
    """examples/frameworks/run.py with this config: the world and the LangGraph agent on free ports, then
    `flakeproxy contract run` (the real proxy) on the config it wrote into tmp_path/out."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    source, output = tmp_path / "config.yaml", tmp_path / "out"
    source.write_text(yaml.safe_dump(config, sort_keys=False))
    out = subprocess.run(
        [sys.executable, str(EXAMPLE / "run.py"), "-c", str(source), "-o", str(output), *extra],
        capture_output=True,
        text=True,
        timeout=100,
    )
    return read_results(out, output, output / "flakeproxy.yaml")


def flakeproxy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flakeproxy", *args], capture_output=True, text=True, timeout=60)
