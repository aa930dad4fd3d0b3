"""The Kubernetes Indexed Job and the GitHub Actions workflow that shard a contract run: what they run
agrees with itself (shard counts, indexes, the merge of every shard) and with the CLI's options."""

from __future__ import annotations

import re
import shlex

import yaml

from flakeproxy.cli.contract import run_contract_command
from flakeproxy.cli.merge import merge
from tests.conftest import REPO


def _options(command: object) -> set[str]:
    return {opt for p in command.params for opt in p.opts}  # type: ignore[attr-defined]


def test_indexed_job_runs_every_shard_and_merges_them_all() -> None:
    job, merge_job = yaml.safe_load_all((REPO / "docker" / "kubernetes-indexed-job.yaml").read_text())
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"] == 4
    pod = spec["template"]["spec"]
    assert {c["name"]: c.get("restartPolicy") for c in pod["initContainers"]} == {
        "agent": "Always",
        "flakeproxy": "Always",
    }  # native sidecars: the Job completes when the runner does
    [runner] = pod["containers"]
    args = shlex.split(runner["args"][0])
    assert args[:3] == ["flakeproxy", "contract", "run"] and args[args.index("--shards") + 1] == "4"
    assert {"--shards", "-c", "-o"} <= _options(run_contract_command)
    out = args[args.index("-o") + 1]
    assert out == "/results/shard-$JOB_COMPLETION_INDEX"
    merge_args = shlex.split(merge_job["spec"]["template"]["spec"]["containers"][0]["args"][0])
    assert merge_args[:2] == ["flakeproxy", "merge"] and "-c" in _options(merge)
    shards = [a for a in merge_args if a.startswith("/results/shard-")]
    assert shards == [f"/results/shard-{i}" for i in range(4)]


def test_github_workflow_shards_and_merges_if_always() -> None:
    flow = yaml.safe_load((REPO / "examples" / "github-actions" / "shards.yml").read_text())
    jobs = flow["jobs"]
    shards = jobs["shard"]["strategy"]["matrix"]["shard"]
    runs = [s["run"] for s in jobs["shard"]["steps"] if "run" in s]
    [command] = [r for r in runs if r.startswith("flakeproxy contract run")]
    count = int(re.search(r"--shard \$\{\{ matrix.shard \}\}/(\d+)", command).group(1))  # type: ignore[union-attr]
    assert shards == list(range(1, count + 1)) and jobs["shard"]["strategy"]["fail-fast"] is False
    assert jobs["merge"]["needs"] == "shard" and jobs["merge"]["if"] == "always()"
    [merge_run] = [s["run"] for s in jobs["merge"]["steps"] if s.get("run", "").startswith("flakeproxy merge")]
    assert re.findall(r"shard-(\d+)", merge_run) == [str(i) for i in shards]
