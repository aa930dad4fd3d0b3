"""The GitHub Actions files: the example workflow and action.yml valid against GitHub's schemas
(check-jsonschema's vendored `github-workflows` and `github-actions`, offline), and action.yml's steps run as
a script (tests/containers/actions.py) on its contract: the inputs reach the command line, the outputs
(exit-code, results) are set, the job summary is written whatever happened, the reports are uploaded, and
the action fails exactly when flakeproxy did. The agent and its world are the demo's, on loopback."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO
from tests.containers.actions import ActionRun, base_env
from tests.support.loops import free_port

pytestmark = [pytest.mark.containers, pytest.mark.timeout(600)]
BIN = Path(sys.executable).parent
WORKFLOW = REPO / "examples" / "github-actions" / "shards.yml"
ACTION = REPO / "action.yml"


def check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", f"vendor.{schema}", str(path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("path", "schema"), [(WORKFLOW, "github-workflows"), (ACTION, "github-actions")])
def test_the_workflow_and_the_action_are_valid(path: Path, schema: str) -> None:
    out = check_jsonschema(schema, path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_schema_check_can_fail(tmp_path: Path) -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    workflow["jobs"]["merge"]["runs_on"] = workflow["jobs"]["merge"].pop("runs-on")  # a typo
    broken = tmp_path / "broken.yml"
    broken.write_text(yaml.safe_dump(workflow))
    assert check_jsonschema("github-workflows", broken).returncode != 0


def _serve(*args: str) -> subprocess.Popen[bytes]:
    port = int(args[args.index("--port") + 1])
    child = subprocess.Popen([str(BIN / "flakeproxy-demo-serve"), *args, "--host", "127.0.0.1"])
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return child
        except OSError:
            assert child.poll() is None and time.monotonic() < deadline, f"{args} did not start"
            time.sleep(0.05)


@pytest.fixture(scope="module")
def configs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The demo's upstream and its careful and naive agents on loopback, and a config for each agent."""
    folder = tmp_path_factory.mktemp("world")
    upstream, llm, tools, mcp = (free_port() for _ in range(4))
    base = yaml.safe_load((REPO / "docker" / "flakeproxy.yaml").read_text())
    listeners = {"llm": llm, "tools": tools, "mcp": mcp}
    base["proxy"] = {
        "admin": f"127.0.0.1:{free_port()}",
        "listeners": [
            {"name": name, "listen": f"127.0.0.1:{port}", "upstream": f"http://127.0.0.1:{upstream}"}
            for name, port in listeners.items()
        ],
    }
    del base["run"]["output"]  # the action's `output` input says where
    children = [_serve("upstream", "--port", str(upstream))]
    paths = {}
    try:
        for kind in ("careful", "naive"):
            port = free_port()
            urls = [arg for name, p in listeners.items() for arg in (f"--{name}", f"http://127.0.0.1:{p}")]
            children.append(_serve("agent", "--kind", kind, "--port", str(port), *urls))
            base["agent"]["endpoint"] = f"http://127.0.0.1:{port}/chat"
            base["agent"]["reset_endpoint"] = f"http://127.0.0.1:{port}/reset"
            paths[kind] = folder / f"{kind}.yaml"
            paths[kind].write_text(yaml.safe_dump(base, sort_keys=False))
        yield paths
    finally:
        for child in children:
            child.terminate()
            child.wait(10)


@pytest.fixture(scope="module")
def python_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What actions/setup-python leaves: a Python of the asked version first on PATH (a fresh venv here)."""
    venv = tmp_path_factory.mktemp("setup-python") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    return venv / "bin"


def _run(workspace: Path, checkout: Path, python_bin: Path, **given: str) -> tuple[ActionRun, dict[str, str]]:
    action = yaml.safe_load(ACTION.read_text())
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    assert set(given) <= set(inputs), f"inputs action.yml does not declare: {set(given) - set(inputs)}"
    inputs |= given
    uploaded: dict[str, Any] = {}

    def setup_python(given: dict[str, str]) -> bool:
        return given["python-version"] == f"{sys.version_info.major}.{sys.version_info.minor}"

    def upload(given: dict[str, str]) -> bool:  # if-no-files-found: warn, so it succeeds either way
        uploaded.update(given, files=sorted(p.name for p in (workspace / given["path"]).glob("*")))
        return True

    summary = workspace / "step-summary.md"
    summary.write_text("")
    env = base_env([python_bin], GITHUB_STEP_SUMMARY=str(summary), GITHUB_ACTION_PATH=str(checkout))
    stand_ins = {"actions/setup-python": setup_python, "actions/upload-artifact": upload}
    run = ActionRun(action, inputs, stand_ins, env, workspace)
    outputs = run.run()
    return run, {**outputs, "summary": summary.read_text(), "uploaded": json.dumps(uploaded)}


def test_the_action_passes_with_the_careful_agent(
    tmp_path: Path, checkout: Path, python_bin: Path, configs: dict[str, Path]
) -> None:
    run, out = _run(tmp_path, checkout, python_bin, config=str(configs["careful"]))
    assert run.failed == [], "\n".join(run.logs)[-6000:]
    assert len(run.ran) == len(run.action["runs"]["steps"])
    assert (out["exit-code"], out["results"]) == ("0", "flakeproxy-results/results.json")
    assert json.loads((tmp_path / out["results"]).read_text())["score"]["passed"] is True
    assert "Finance Agent Contract" in out["summary"]  # summary.md, written to the job summary
    uploaded = json.loads(out["uploaded"])
    assert uploaded["name"] == "flakeproxy-reports" and uploaded["path"] == "flakeproxy-results"
    assert {"results.json", "junit.xml", "report.html", "summary.md"} <= set(uploaded["files"])


def test_the_action_fails_with_the_naive_agent_after_writing_the_summary(
    tmp_path: Path, checkout: Path, python_bin: Path, configs: dict[str, Path]
) -> None:
    run, out = _run(tmp_path, checkout, python_bin, config=str(configs["naive"]), output="out")
    assert run.failed == ["Fail when flakeproxy failed"], "\n".join(run.logs)[-6000:]
    assert (out["exit-code"], out["results"]) == ("1", "out/results.json")
    assert "FAIL" in out["summary"] and json.loads(out["uploaded"])["path"] == "out"


def test_the_action_with_a_missing_config_says_so_in_the_summary(
    tmp_path: Path, checkout: Path, python_bin: Path
) -> None:
    run, out = _run(tmp_path, checkout, python_bin, config="missing.yaml", shard="1/2")
    assert run.failed == ["Fail when flakeproxy failed"]
    assert out["exit-code"] == "2"
    assert "flakeproxy wrote no results.json in flakeproxy-results" in out["summary"]
    assert "flakeproxy contract run -c missing.yaml -o flakeproxy-results --shard 1/2" in "\n".join(run.logs)


def test_the_action_in_compare_mode_gates_on_the_comparison(
    tmp_path: Path, checkout: Path, python_bin: Path, configs: dict[str, Path]
) -> None:
    (tmp_path / "base").mkdir()
    base, _ = _run(tmp_path / "base", checkout, python_bin, config=str(configs["careful"]))
    baseline = str(tmp_path / "base" / "flakeproxy-results")
    run, out = _run(tmp_path, checkout, python_bin, config=str(configs["careful"]), baseline=baseline)
    # the run PASSes, but one replica per cell can show neither a regression nor its absence: INCONCLUSIVE
    assert base.failed == [] and run.failed == ["Fail when flakeproxy failed"], "\n".join(run.logs)[-6000:]
    assert out["exit-code"] == "4" and "## flakeproxy compare: INCONCLUSIVE" in out["summary"]
    assert "compare.md" in json.loads(out["uploaded"])["files"]
    assert f"flakeproxy compare {baseline} flakeproxy-results/results.json" in "\n".join(run.logs)


def test_the_action_in_compare_mode_fails_a_run_that_fails_like_its_baseline(
    tmp_path: Path, checkout: Path, python_bin: Path, configs: dict[str, Path]
) -> None:
    """A baseline that already fails must not let a run that fails the same way through: nothing regressed (compare
    is INCONCLUSIVE at one replica, PASS with more), but the run FAILs, and the action exits with the worse, 1."""
    (tmp_path / "base").mkdir()
    base, _ = _run(tmp_path / "base", checkout, python_bin, config=str(configs["naive"]))
    baseline = str(tmp_path / "base" / "flakeproxy-results")
    run, out = _run(tmp_path, checkout, python_bin, config=str(configs["naive"]), baseline=baseline)
    log = "\n".join(run.logs)
    assert base.failed == run.failed == ["Fail when flakeproxy failed"], log[-6000:]
    assert out["exit-code"] == "1", log[-6000:]
    assert "the run exited 1, the comparison 4: the action exits 1 (the worse of the two)" in log
    assert "## flakeproxy compare: INCONCLUSIVE vs the baseline, but the candidate itself FAILs" in out["summary"]
