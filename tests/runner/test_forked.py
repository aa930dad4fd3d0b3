"""runner/forked.py: the proxy child by fork(), from a runner with one thread (issue 23: the start-up it saves).

Forking is only safe from a process with one thread, and the pytest worker has several, so each fork here happens
in a fresh interpreter running SCRIPT, which reports what it saw as JSON."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from flakeproxy.runner.forked import CHILD_NAME, can_fork
from flakeproxy.runner.proxy_child import start_proxy
from tests.hardening.runs import contract_run, run_world
from tests.support.children import proxy_children
from tests.support.loops import free_port

pytestmark = [
    pytest.mark.proxy_child,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the proxy child forks on Linux only"),
]

SCRIPT = r"""
import json, os, subprocess, sys
from flakeproxy.runner.forked import can_fork, fork_proxy
config, mode = sys.argv[1], sys.argv[2]
keep_r, keep_w = os.pipe()  # open in the runner when it forks: the child must not hold it
seen = {"forkable": can_fork()}
print("runner", flush=True)  # once: the child never returns here, nor writes what the runner wrote
child = fork_proxy(config, handed=mode.startswith("hand"))
if mode.startswith("hand"):  # what `contract run` does once it has validated the config: handed, or None
    from flakeproxy.config import load_config
    child.hand(load_config(sys.argv[3]) if mode == "hand" else None)
    mode = "serve"
seen["ready"] = child.stdout.readline().decode()
if mode == "serve":
    seen["name"] = open(f"/proc/{child.pid}/comm", "rb").read().strip().decode()
    links = [os.readlink(f"/proc/{child.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{child.pid}/fd")]
    seen["holds_runner_pipe"] = any(str(os.fstat(keep_r).st_ino) in link for link in links)
    seen["stdin"] = os.readlink(f"/proc/{child.pid}/fd/0")
    try:
        child.wait(0.2)
        seen["wait"] = "returned"
    except subprocess.TimeoutExpired:
        seen["wait"] = "timed out"
    os.killpg(child.pid, 15)
seen["code"] = child.wait(20)
seen["stderr"] = child.stderr.read().decode()
print(json.dumps(seen))
"""


def _config(tmp: Path, admin: str) -> Path:
    listener = {"name": "tools", "listen": f"127.0.0.1:{free_port()}", "upstream": "http://127.0.0.1:9"}
    path = tmp / "c.yaml"
    path.write_text(yaml.safe_dump({"version": "2.0", "proxy": {"admin": admin, "listeners": [listener]}}))
    return path


def _forked(config: Path, mode: str, *more: str) -> tuple[list[str], dict[str, object]]:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(config), mode, *more],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=config.parent,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    *before, last = out.stdout.strip().splitlines()
    return before, json.loads(last)


def test_a_forked_proxy_serves_named_with_only_its_own_files_and_stops_on_sigterm(tmp_path: Path) -> None:
    admin = f"127.0.0.1:{free_port()}"
    before, seen = _forked(_config(tmp_path, admin), "serve")
    assert before == ["runner"], "the child wrote the runner's unwritten output, or ran on in the runner's code"
    assert seen["forkable"] is True
    assert str(seen["ready"]).startswith(f"flakeproxy proxy ready: control API http://{admin}")
    assert seen["name"] == CHILD_NAME.decode()
    assert seen["holds_runner_pipe"] is False and seen["stdin"] == "/dev/null"
    assert seen["wait"] == "timed out", "wait(timeout) returned while the proxy still ran"
    assert seen["code"] == 0, seen["stderr"]


def test_a_forked_proxy_runs_the_config_it_is_handed_not_its_file(tmp_path: Path) -> None:
    """`contract run` hands its proxy the config it validated (issue 23: the child validates nothing again), so the
    proxy serves what the runner checked, overrides and all, even where the file says otherwise."""
    file_admin, handed_admin = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    (handed := tmp_path / "handed").mkdir()
    before, seen = _forked(_config(tmp_path, file_admin), "hand", str(_config(handed, handed_admin)))
    assert before == ["runner"]
    assert str(seen["ready"]).startswith(f"flakeproxy proxy ready: control API http://{handed_admin}"), seen
    assert seen["holds_runner_pipe"] is False and seen["code"] == 0, seen["stderr"]


def test_a_forked_proxy_handed_nothing_reads_its_file(tmp_path: Path) -> None:
    admin = f"127.0.0.1:{free_port()}"
    before, seen = _forked(_config(tmp_path, admin), "hand-none")
    assert before == ["runner"]
    assert str(seen["ready"]).startswith(f"flakeproxy proxy ready: control API http://{admin}"), seen
    assert seen["code"] == 0, seen["stderr"]


def test_a_forked_proxy_that_cannot_start_says_why_and_exits_3(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        admin = f"127.0.0.1:{taken.getsockname()[1]}"
        before, seen = _forked(_config(tmp_path, admin), "fail")
    assert before == ["runner"] and seen["ready"] == ""
    assert seen["code"] == 3
    from flakeproxy.addons.server import _ephemeral_hint

    port = int(admin.rsplit(":", 1)[1])
    assert str(seen["stderr"]).strip() == (
        f"error: cannot listen on {admin} (control API): Address already in use; stop what uses it or pick another port"
        + _ephemeral_hint(port)  # bound to port 0: in the kernel's range for outgoing connections, said so
    )


def test_a_process_with_threads_spawns_its_proxy(tmp_path: Path) -> None:
    """This pytest worker has threads of its own; one more makes sure: fork is not safe, so the child is spawned."""
    stop = threading.Event()
    waiting = threading.Thread(target=stop.wait)
    waiting.start()
    try:
        assert not can_fork()
        child = start_proxy(str(_config(tmp_path, f"127.0.0.1:{free_port()}")))
        try:
            assert isinstance(child, subprocess.Popen), "forked from a process with threads"
            assert child.stdout is not None and child.stdout.readline().startswith(b"flakeproxy proxy ready")
        finally:
            child.terminate()
            child.wait(20)
            for pipe in (child.stdout, child.stderr):
                if pipe is not None:
                    pipe.close()
    finally:
        stop.set()
        waiting.join()


def test_contract_run_forks_its_proxy(tmp_path: Path) -> None:
    """The run as users start it: its proxy child is the forked one (a spawned one is named python, and has `proxy`
    in its command line), and it is gone when the run ends."""
    with run_world(tmp_path, json.dumps({"reply": "AAPL, per the source."}).encode(), delay_s=0.3) as world:
        names: list[bytes] = []
        runner = threading.Thread(target=lambda: names.extend(_child_names_during(world.config)))
        runner.start()
        out = contract_run(world)
        runner.join()
        assert proxy_children(world.config) == []
    assert out.returncode == 0, out.stderr[-2000:]
    assert names and set(names) == {CHILD_NAME}, names


def _child_names_during(config: Path) -> list[bytes]:
    """The names of the run's proxy children, read once one has started (within 30 s)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if pids := proxy_children(config):
            with contextlib.suppress(FileNotFoundError):  # ended meanwhile: look again
                return [Path(f"/proc/{pid}/comm").read_bytes().strip() for pid in pids]
        time.sleep(0.01)
    return []
