"""Shards: `contract run --shard I/N` runs a share of the episodes; `flakeproxy merge` judges them all and
gives exactly the unsharded run's cells, score and exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from tests.runner.world import cli, world

INVARIANTS = [
    {"id": "cites", "type": "regex", "pattern": "(?i)(source|unavailable)", "severity": "critical"},
    {"id": "no-figures", "type": "regex", "pattern": r"\$\d", "negate": True, "when": "tool_faults_active"},
    {"id": "one-quote-call", "type": "call_count", "target": "market_data_api", "max": 1},
]
MATRIX = [
    {"name": "no-chaos"},
    {"name": "tool-down", "tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 503}]},
    {"name": "llm-cut", "llm_faults": [{"mode": "truncated_response", "max_tokens": 3}]},
]


def merge(config: Path, *dirs: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flakeproxy", "merge", "-c", str(config), *map(str, dirs), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def report(folder: Path, fmt: str) -> str:
    """`flakeproxy report FOLDER -f FMT` as text."""
    argv = [sys.executable, "-m", "flakeproxy", "report", str(folder), "-f", fmt]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def verdicts(data: dict[str, object]) -> list[tuple[object, ...]]:
    cells = data["cells"]
    assert isinstance(cells, list)
    return [(c["invariant"], c["scenario"], c["outcome"], c["reason"], tuple(c["episodes"])) for c in cells]


def test_three_shards_merge_into_the_unsharded_result(tmp_path: Path) -> None:
    with world(tmp_path, "naive", invariants=INVARIANTS, matrix=MATRIX) as w:
        w.data["golden_prompts"] = ["What is AAPL trading at?", "And MSFT?"]
        w.config.write_text(yaml.safe_dump(w.data))
        whole = cli(w.config, "-o", str(tmp_path / "whole"))
        parts = []
        for i in (1, 2):
            parts.append(cli(w.config, "--shard", f"{i}/3", "-o", str(tmp_path / f"s{i}")))
        env = {**os.environ, "JOB_COMPLETION_INDEX": "2"}  # a Kubernetes Indexed Job's third pod
        parts.append(
            subprocess.run(
                [sys.executable, "-m", "flakeproxy", "contract", "run", "-c", str(w.config), "--shards", "3",
                 "-o", str(tmp_path / "s3")],
                capture_output=True, text=True, timeout=120, env=env,
            )
        )  # fmt: skip
        merged = merge(w.config, *(tmp_path / f"s{i}" for i in (1, 2, 3)), out=tmp_path / "merged")
    assert whole.returncode == 1, whole.stderr
    assert [p.returncode for p in parts] == [0, 0, 0], [p.stderr for p in parts]
    assert "shard 3/3: ran 2 episodes" in parts[2].stdout
    shard_data = [json.loads((tmp_path / f"s{i}" / "results.json").read_text()) for i in (1, 2, 3)]
    assert [len(d["episodes"]) for d in shard_data] == [2, 2, 2] and all(d["cells"] == [] for d in shard_data)
    assert merged.returncode == whole.returncode, merged.stdout + merged.stderr
    a = json.loads((tmp_path / "whole" / "results.json").read_text())
    b = json.loads((tmp_path / "merged" / "results.json").read_text())
    assert verdicts(a) == verdicts(b) and a["score"] == b["score"]
    assert [e["id"] for e in a["episodes"]] == [e["id"] for e in b["episodes"]]
    assert (tmp_path / "merged" / "junit.xml").exists() and b["shard"] is None and b["complete"]
    # a shard's results rendered by `report` say they are not judged (junit.xml was tests=0 failures=0: green to a
    # CI that published it; a trial's)
    junit = ET.fromstring(report(tmp_path / "s1", "junit"))
    counts = tuple(junit.get(k) for k in ("tests", "failures", "errors", "skipped"))
    assert counts == ("1", "0", "0", "1"), counts
    skipped = junit.find("testsuite/testcase/skipped")
    assert skipped is not None and skipped.get("message", "").startswith("Shard 1 of 3: its 2 episode(s) ran unjudged")
    assert "> **Not judged.** Shard 1 of 3" in report(tmp_path / "s1", "md")
    assert "<b>Not judged.</b> Shard 1 of 3" in report(tmp_path / "s1", "html")
    assert "NOT JUDGED: Shard 1 of 3" in report(tmp_path / "s1", "terminal")
    assert "judged by merge" not in (tmp_path / "merged" / "junit.xml").read_text()
    assert "Not judged" not in (tmp_path / "merged" / "summary.md").read_text()
    # each scenario's spend and amplification over calm, calm being in another shard (issue 25)
    assert b["spend"] == a["spend"] and sum(s["total"]["llm_calls"] for s in b["spend"]) > 0


def test_merge_refuses_a_missing_shard_or_another_config(tmp_path: Path) -> None:
    with world(tmp_path, invariants=INVARIANTS, matrix=MATRIX) as w:
        for i in (1, 2):
            assert cli(w.config, "--shard", f"{i}/3", "-o", str(tmp_path / f"s{i}")).returncode == 0
        missing = merge(w.config, tmp_path / "s1", tmp_path / "s2", out=tmp_path / "m")
        refused = json.loads((tmp_path / "m" / "results.json").read_text())
        summary = (tmp_path / "m" / "summary.md").read_text()
        twice = merge(w.config, tmp_path / "s1", tmp_path / "s1", tmp_path / "s2", out=tmp_path / "m")
        # a shard whose run stopped before it began (a trial's port clash, exit 3) leaves a record, not a shard
        (tmp_path / "s3").mkdir()
        import socket

        with socket.socket() as taken:  # its listener's port is held by another program
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            w.data["proxy"]["listeners"][0]["listen"] = f"127.0.0.1:{taken.getsockname()[1]}"
            clash = w.config.with_name("clash.yaml")
            clash.write_text(yaml.safe_dump(w.data, sort_keys=False))
            began = cli(clash, "--shard", "3/3", "-o", str(tmp_path / "s3"))
        never = merge(w.config, tmp_path / "s1", tmp_path / "s2", tmp_path / "s3", out=tmp_path / "m")
        other = w.config.with_name("other.yaml")
        other.write_text(w.config.read_text().replace("seed: 7", "seed: 8"))
        foreign = merge(other, tmp_path / "s1", tmp_path / "s2", out=tmp_path / "m")
        bad = cli(w.config, "--shard", "4/3")
    said = "shard 3/3 is missing; merge needs all 3 shards"
    assert missing.returncode == 2 and missing.stderr.strip().splitlines()[-1] == f"error: {said}"
    # where the merged results would have gone, a record saying why there are none (a CI's next step reads it)
    assert not refused["complete"] and refused["interrupted_by"] == f"merge refused: {said}" and not refused["cells"]
    assert f"merge refused: {said}" in summary
    assert twice.returncode == 2 and twice.stderr.strip().splitlines()[-1] == (
        "error: a shard is given twice ([1, 1, 2]); give each of the 3 once"
    ), twice.stderr
    assert began.returncode == 3, began.stderr
    assert never.returncode == 2 and "results.json: a run that stopped before its first episode (" in never.stderr
    assert never.stderr.strip().splitlines()[-1].endswith("; run its shard again"), never.stderr
    assert foreign.returncode == 2 and "made from another config than" in foreign.stderr
    assert len(foreign.stderr.strip().splitlines()) == 2  # the record it wrote, then the one error line
    assert bad.returncode == 2 and "I must be between 1 and N" in bad.stderr


def test_a_shard_with_no_episode_of_a_step_runs(tmp_path: Path) -> None:
    """An agent with no reset gets the stateful check (two episodes first): some of 4 shards get none of that step's
    episodes, and one at a time an empty step crashed the run (exit 3, a zip of 0 and 1; the Kubernetes job's)."""
    with world(tmp_path, reset=False, invariants=INVARIANTS[:1], matrix=MATRIX[:2]) as w:
        parts = [cli(w.config, "--shard", f"{i}/4", "-o", str(tmp_path / f"s{i}")) for i in (1, 2, 3, 4)]
        merged = merge(w.config, *(tmp_path / f"s{i}" for i in (1, 2, 3, 4)), out=tmp_path / "merged")
    assert [p.returncode for p in parts] == [0, 0, 0, 0], [p.stderr[-600:] for p in parts]
    assert merged.returncode == 0, merged.stdout + merged.stderr
