"""A runner driving a sidecar someone else started (`proxy.admin_url`) waits for its readiness itself, as in a
pod, where native sidecars give no order for readiness: a sidecar whose port accepts but does not answer yet,
then the real proxy coming up on that port, is waited for; one that never comes, or refuses the token, ends
the run with exit 3 and one line naming the admin URL, within the bound (`proxy.ready_timeout_ms`), after the
line naming the files of its record (results.json saying why nothing ran)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from tests.runner.world import cli
from tests.support.loops import free_port, running_app

FLAKEPROXY = [sys.executable, "-m", "flakeproxy"]


def _agent() -> list[web.RouteDef]:
    async def chat(request: web.Request) -> web.Response:
        await request.json()
        return web.json_response({"reply": "AAPL is at 189.50 according to the exchange feed (source)."})

    return [web.post("/chat", chat)]


def _config(tmp: Path, agent: str, admin: str, token: str, **proxy: Any) -> Path:
    data = {
        "version": "2.0",
        "agent": {"type": "http", "endpoint": f"{agent}/chat", "request_template": {"message": "{prompt}"}},
        "proxy": {
            "admin": admin,
            "admin_url": f"http://{admin}",
            "token": token,
            "listeners": [{"name": "tools", "listen": f"127.0.0.1:{free_port()}", "upstream": "http://127.0.0.1:9"}],
            **proxy,
        },
        "golden_prompts": ["What is AAPL trading at?"],
        "contract": {"name": "wait", "invariants": [{"id": "cites", "type": "regex", "pattern": "(?i)source"}]},
        "chaos_matrix": [{"name": "no-chaos"}],
        "run": {"output": str(tmp / "out")},
    }
    path = tmp / "flakeproxy.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _record(tmp: Path) -> str:
    """The line naming the files of a run that stopped before any episode: its record, an incomplete results.json."""
    files = ", ".join(str(tmp / "out" / n) for n in ("results.json", "junit.xml", "report.html", "summary.md"))
    return f"wrote {files} (this run's record: it stopped before any episode ended)"


@contextmanager
def _sidecar(config: Path, token: str) -> Iterator[None]:
    """The real `flakeproxy proxy` on the config's admin address, as a sidecar: until its ready line."""
    args = [*FLAKEPROXY, "proxy", "-c", str(config), "--token", token]
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        try:
            assert child.stdout is not None
            line = child.stdout.readline()
            assert line.startswith("flakeproxy proxy ready"), (line, child.stderr.read() if child.poll() else "")
            yield
        finally:
            child.terminate()
            child.wait(10)


def _accept(server: socket.socket, held: list[socket.socket], count: int, deadline_s: float) -> None:
    """Accept `count` connections on server and hold them unanswered (a port that is open, a proxy not ready)."""
    server.settimeout(0.2)
    deadline = time.monotonic() + deadline_s
    while len(held) < count:
        assert time.monotonic() < deadline, f"the runner probed the admin port {len(held)} time(s) in {deadline_s} s"
        try:
            held.append(server.accept()[0])
        except TimeoutError:
            continue


def test_the_runner_waits_for_a_sidecar_that_becomes_ready_late(tmp_path: Path) -> None:
    admin = f"127.0.0.1:{free_port()}"
    host, port = admin.split(":")
    with running_app(_agent(), "agent") as agent:
        config = _config(tmp_path, agent, admin, "t0ken")
        # the port is open but nothing answers: a starting sidecar (each probe must give up and try again)
        server = socket.create_server((host, int(port)))
        held: list[socket.socket] = []
        args = [*FLAKEPROXY, "contract", "run", "-c", str(config)]
        with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as runner:
            try:
                _accept(server, held, 2, deadline_s=20)
                assert runner.poll() is None, runner.stderr.read() if runner.stderr else ""
                server.close()
                with _sidecar(config, "t0ken"):
                    _, err = runner.communicate(timeout=60)
            finally:
                if runner.poll() is None:
                    runner.kill()
                for conn in held:
                    conn.close()
    assert runner.returncode == 0, err[-2000:]
    assert (tmp_path / "out" / "results.json").exists()


def test_a_sidecar_that_never_comes_is_said_while_waited_for_then_one_line_naming_the_admin_url(
    tmp_path: Path,
) -> None:
    admin = f"127.0.0.1:{free_port()}"  # nothing listens there
    with running_app(_agent(), "agent") as agent:
        config = _config(tmp_path, agent, admin, "t0ken", ready_timeout_ms=1500)
        start = time.monotonic()
        out = cli(config)
        took = time.monotonic() - start
    assert out.returncode == 3, out.stderr
    assert "Traceback" not in out.stderr and "ssl:default" not in out.stderr, out.stderr
    assert out.stderr.strip().splitlines() == [
        f"waiting for the proxy's control API at http://{admin} (proxy.admin_url) to answer: up to 1.5 s "
        "(proxy.ready_timeout_ms); last error: Connection refused",
        _record(tmp_path),
        f"error: the proxy's control API at http://{admin} (proxy.admin_url) was not ready within 1.5 s (last error: "
        "Connection refused); start the proxy, or point proxy.admin_url at its control API",
    ]
    assert took < 1.5 + 10, f"the bounded wait took {took:.1f} s"  # the bound, plus interpreter start-up


@pytest.mark.parametrize(
    ("token", "scheme", "error"),
    [
        ("wrong", "http", "refused the token (HTTP 401); set proxy.token in {config} to the proxy's token"),
        # its errno, 1, was read "Operation not permitted", and retried for the whole bound
        (
            "right",
            "https",
            ": the TLS handshake failed ([SSL: WRONG_VERSION_NUMBER] wrong version number); if it serves plain HTTP, "
            "use an http:// URL",
        ),
    ],
    ids=["refused-token", "tls-to-plain-http"],
)
def test_what_waiting_cannot_change_is_not_waited_for(tmp_path: Path, token: str, scheme: str, error: str) -> None:
    """A refused token, or an https:// admin_url to a control API that serves plain HTTP: said at once, within
    the default 60 s bound."""
    admin = f"127.0.0.1:{free_port()}"
    with running_app(_agent(), "agent") as agent:
        config = _config(tmp_path, agent, admin, token, admin_url=f"{scheme}://{admin}")
        with _sidecar(config, "right"):
            start = time.monotonic()
            out = cli(config)
            took = time.monotonic() - start
    assert out.returncode == 3, out.stderr
    said = error.format(config=config)
    assert out.stderr.strip().splitlines() == [
        _record(tmp_path),
        f"error: the proxy's control API at {scheme}://{admin}{'' if said.startswith(':') else ' '}{said}",
    ]
    assert took < 20, f"it was retried for {took:.1f} s"


@pytest.mark.parametrize(
    ("written", "env", "hint"),
    [
        (
            "${FP_TOKEN}",
            {"FP_TOKEN": "wrong"},
            "refused the token (HTTP 401); set proxy.token in {config} (it reads ${{FP_TOKEN}}) to the proxy's token",
        ),
        (
            None,
            {},
            "asks for a token, and this run sends none (HTTP 401); set proxy.token in {config} to the proxy's token",
        ),
    ],
    ids=["from-a-variable", "none-sent"],
)
def test_the_token_hint_names_what_sets_the_token(
    tmp_path: Path, written: str | None, env: dict[str, str], hint: str
) -> None:
    """The variable the config reads the token from, when it reads one: never FLAKEPROXY_TOKEN, which the runner
    does not read (setting it changed nothing)."""
    admin = f"127.0.0.1:{free_port()}"
    with running_app(_agent(), "agent") as agent:
        config = _config(tmp_path, agent, admin, "right")
        with _sidecar(config, "right"):
            data = yaml.safe_load(config.read_text())
            data["proxy"]["token"] = written
            if written is None:
                del data["proxy"]["token"]
            config.write_text(yaml.safe_dump(data, sort_keys=False))
            command = [*FLAKEPROXY, "contract", "run", "-c", str(config)]
            out = subprocess.run(
                command, capture_output=True, text=True, timeout=60, env={**os.environ, **env, "FLAKEPROXY_TOKEN": "x"}
            )
    assert out.returncode == 3, out.stderr
    assert out.stderr.strip().splitlines() == [
        _record(tmp_path),
        f"error: the proxy's control API at http://{admin} " + hint.format(config=config),
    ]
    assert "FLAKEPROXY_TOKEN" not in out.stderr


@pytest.mark.parametrize("at", ["listener", "agent", "another-server"])
def test_an_admin_url_that_is_not_the_control_api_is_said_at_once_and_the_token_stays_home(
    tmp_path: Path, at: str
) -> None:
    """A trial pointed admin_url at the sidecar's LLM listener: the runner waited its whole bound, and every probe
    went through the listener to the upstream with the control token. A listener now answers a request carrying
    the control token itself (403, never upstream), and the runner stops at once on it or on a 404."""
    seen: list[dict[str, str]] = []

    async def anything(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        return web.json_response({"ok": True})

    admin = f"127.0.0.1:{free_port()}"
    with running_app(_agent(), "agent") as agent, running_app([web.route("*", "/{tail:.*}", anything)], "up") as up:
        config = _config(tmp_path, agent, admin, "right")
        data = yaml.safe_load(config.read_text())
        listener = data["proxy"]["listeners"][0]
        listener["upstream"] = up
        data["proxy"]["admin_url"] = {"listener": f"http://{listener['listen']}", "agent": agent, "another-server": up}[
            at
        ]
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        with _sidecar(config, "right"):
            start = time.monotonic()
            out = cli(config)
            took = time.monotonic() - start
    assert out.returncode == 3, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    if at == "listener":
        assert last.startswith(f"error: http://{listener['listen']} (proxy.admin_url) is not the proxy's control API: ")
        assert f"this is a flakeproxy listener, not its control API (that is at {admin})" in last
    elif at == "another-server":  # it answers 200 with JSON of its own: said, not a crash on its shape
        assert last == (
            f"error: {up} (proxy.admin_url) answered GET /healthz with \"{{'ok': True}}\", not flakeproxy's health: "
            "that is not the proxy's control API; point it at the proxy's admin address"
        )
    else:
        assert last == (
            f"error: {agent} (proxy.admin_url) answered GET /healthz with HTTP 404: that is not the proxy's control "
            "API (a listener, or the agent?); point it at the proxy's admin address"
        )
    if at == "listener":  # the token never went through the listener to its upstream
        assert not any("right" in h.get("Authorization", "") for h in seen), seen
    assert took < 20


def test_a_sidecar_reset_under_a_run_is_said_so(tmp_path: Path) -> None:
    """A trial's second run reset the sidecar under the first, which ended on "answered 404: no open episode
    'c177'", unexplained."""
    import threading
    import urllib.request

    async def slow(request: web.Request) -> web.Response:
        await request.json()
        await asyncio.sleep(1.5)
        return web.json_response({"reply": "AAPL is at 189.50 (source: the feed)"})

    def another_run_resets(admin: str) -> None:
        """Once the run's episode is open (the event, not a sleep: the run may start slowly on a loaded machine)."""
        import json

        auth = {"authorization": "Bearer t"}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with urllib.request.urlopen(
                urllib.request.Request(f"http://{admin}/healthz", headers=auth), timeout=5
            ) as r:
                if json.loads(r.read())["open_episodes"]:
                    break
            time.sleep(0.02)
        reset = urllib.request.Request(f"http://{admin}/reset", method="POST", headers=auth)
        urllib.request.urlopen(reset, timeout=5).close()

    admin = f"127.0.0.1:{free_port()}"
    with running_app([web.post("/chat", slow)], "agent") as agent:
        config = _config(tmp_path, agent, admin, "t")
        with _sidecar(config, "t"):
            threading.Thread(target=another_run_resets, args=(admin,), daemon=True).start()
            out = cli(config)
    assert out.returncode == 3, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert "answered 404: no open episode" in last
    assert last.endswith("(the proxy was reset or restarted meanwhile: another run on the same proxy? runs sharing a "
                         "sidecar must not overlap)")  # fmt: skip
