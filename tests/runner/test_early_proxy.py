"""`contract run` starts its proxy child first, before it imports the config models and the runner (issue 23):
early_proxy reads the config as plain YAML and starts the child when it plainly asks for a local proxy; the run
adopts that child, or stops it when the validated config says otherwise or is wrong. No child is left behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from flakeproxy.cli.main import main
from flakeproxy.runner.local import LocalProxy, launch_local
from flakeproxy.runner.proxy_child import early_proxy, end_child
from tests.hardening.runs import contract_run, listening, run_world
from tests.support.children import proxy_children
from tests.support.loops import free_port

pytestmark = pytest.mark.proxy_child  # the child process itself, not the suite's in-process proxy


def _config(tmp: Path, proxy: dict[str, object], name: str = "c.yaml") -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump({"version": "2.0", "proxy": proxy, "golden_prompts": ["hi"]}))
    return path


def _local_proxy(admin: str) -> dict[str, object]:
    up = f"http://127.0.0.1:{free_port()}"
    return {"admin": admin, "listeners": [{"name": "tools", "listen": f"127.0.0.1:{free_port()}", "upstream": up}]}


async def test_the_early_child_is_adopted_and_serves(tmp_path: Path) -> None:
    admin = f"127.0.0.1:{free_port()}"
    path = _config(tmp_path, _local_proxy(admin))
    child = early_proxy(str(path))
    assert child is not None, "a config with listeners and no admin_url starts its proxy at once"
    local = LocalProxy(str(path), child)
    try:
        await local.start()
        assert local.process is child and listening(admin)
    finally:
        await local.stop()
    assert child.poll() is not None and not listening(admin)


@pytest.mark.parametrize(
    "proxy",
    [
        {"admin_url": "http://127.0.0.1:9", "listeners": [{"name": "t", "listen": "127.0.0.1:1", "upstream": "x"}]},
        {"admin_url": "${SIDECAR_URL}", "forward": "127.0.0.1:1"},
        {},
    ],
    ids=["sidecar", "sidecar-from-env", "nothing-to-break"],
)
def test_no_early_child_where_the_run_starts_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proxy: dict) -> None:
    monkeypatch.setenv("SIDECAR_URL", "http://127.0.0.1:9")
    assert early_proxy(str(_config(tmp_path, proxy))) is None


def test_no_early_child_for_a_config_it_cannot_read(tmp_path: Path) -> None:
    (bad := tmp_path / "bad.yaml").write_text("proxy: [unclosed\n")
    (unset := tmp_path / "unset.yaml").write_text("proxy:\n  admin: ${FLAKEPROXY_TEST_UNSET_VAR}\n  forward: x\n")
    assert early_proxy(str(bad)) is None and early_proxy(str(unset)) is None
    assert early_proxy(str(tmp_path / "missing.yaml")) is None


async def test_an_early_child_the_validated_config_does_not_want_is_stopped(tmp_path: Path) -> None:
    from flakeproxy.config import load_config

    admin = f"127.0.0.1:{free_port()}"
    child = early_proxy(str(_config(tmp_path, _local_proxy(admin))))
    assert child is not None
    try:
        sidecar = _config(tmp_path, {"admin_url": "http://127.0.0.1:9"}, "sidecar.yaml")
        assert await launch_local(load_config(sidecar), str(sidecar), child) is None
        assert child.poll() is not None, "stopped, not left running beside the sidecar's run"
    finally:
        end_child(child)


def test_a_config_error_after_the_early_start_leaves_no_proxy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In this process, so that the child's end is the runner's doing, not the parent-death signal's."""
    with run_world(tmp_path, json.dumps({"reply": "source"}).encode()) as world:
        data = yaml.safe_load(world.config.read_text())
        data["contract"]["invariants"][0]["severity"] = "enormous"  # the proxy section alone is fine
        world.config.write_text(yaml.safe_dump(data))
        with pytest.raises(SystemExit) as stopped:
            main(["contract", "run", "-c", str(world.config), "-o", str(world.out)])
        left, still = proxy_children(world.config), listening(world.admin)
    assert stopped.value.code == 2
    assert "severity" in capsys.readouterr().err
    assert left == [] and not still, "the child started early was stopped before the command returned"


def test_a_run_adopts_its_early_child(tmp_path: Path) -> None:
    with run_world(tmp_path, json.dumps({"reply": "AAPL, per the source."}).encode()) as world:
        out = contract_run(world)
        assert proxy_children(world.config) == [] and not listening(world.admin)
    assert out.returncode == 0, out.stderr[-2000:]
    results = json.loads((world.out / "results.json").read_text())
    assert results["complete"] is True and all(e["journal"] is not None for e in results["episodes"])


@pytest.mark.parametrize("where", ["child", "in-process"])
def test_the_runs_own_proxy_serves_its_configs_admin_and_token_whatever_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """FLAKEPROXY_ADMIN and FLAKEPROXY_TOKEN are `flakeproxy proxy`'s (a sidecar's); the run's own proxy, which the
    runner reaches at proxy.admin with proxy.token, ignores them (it used to take them, out of the runner's reach)."""
    monkeypatch.setenv("FLAKEPROXY_TOKEN", "meant-for-a-sidecar")
    monkeypatch.setenv("FLAKEPROXY_ADMIN", f"127.0.0.1:{free_port()}")
    if where == "in-process":
        monkeypatch.setenv("FLAKEPROXY_IN_PROCESS_PROXY", "1")
    with run_world(tmp_path, json.dumps({"reply": "AAPL, per the source."}).encode()) as world:
        out = contract_run(world)
    assert out.returncode == 0, out.stderr[-2000:]


#: A sitecustomize that gives the runner a second thread: fork is then unsafe, and the proxy child is spawned.
SECOND_THREAD = "import threading\nthreading.Thread(target=threading.Event().wait, daemon=True).start()\n"


@pytest.mark.parametrize("how", ["forked", "spawned"])
def test_a_token_from_flakeproxy_token_reaches_the_runs_own_proxy_forked_or_spawned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """`proxy.token: ${FLAKEPROXY_TOKEN}` (what the tool's own warning suggests): the child's environment lacks
    FLAKEPROXY_TOKEN (forked.RUNNERS_OWN), so a spawned child that read the file again failed on it (exit 3); both
    kinds are handed the config the runner expanded and validated. A runner with a second thread spawns."""
    monkeypatch.setenv("FLAKEPROXY_TOKEN", "s3cret-token")
    if how == "spawned":
        (site := tmp_path / "site").mkdir()
        (site / "sitecustomize.py").write_text(SECOND_THREAD)
        monkeypatch.setenv("PYTHONPATH", str(site))
    with run_world(tmp_path, json.dumps({"reply": "AAPL, per the source."}).encode()) as world:
        data = yaml.safe_load(world.config.read_text())
        data["proxy"]["token"] = "${FLAKEPROXY_TOKEN}"
        world.config.write_text(yaml.safe_dump(data))
        out = contract_run(world)
        assert proxy_children(world.config) == [] and not listening(world.admin)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads((world.out / "results.json").read_text())["complete"] is True
