"""The control API: scenarios, cells, journal, reset, errors with choices, the token, redaction."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from flakeproxy import control_api as api
from tests.support.http import Seen, fetch
from tests.support.loops import free_port
from tests.support.proxy import Control, Proxy, config_for, running_proxy
from tests.support.upstream import RunningUpstream, Upstream

TARGETS = {"quotes": {"listener": "tools", "path": "/v1/quotes*"}}
MATRIX = {"chaos_matrix": [{"name": "calm"}, {"name": "down", "tool_faults": [{"tool": "quotes", "mode": "error"}]}]}


#: the module's world (tests/addons/conftest.py: a real upstream and proxy from TARGETS and MATRIX), reset per test
pytestmark = pytest.mark.usefixtures("clean")


def test_healthz(world: tuple[Upstream, Proxy]) -> None:
    health = world[1].control.ok("GET", "/healthz")
    assert health["status"] == "ok" and health["scenario"] is None
    assert list(health["listeners"]) == ["tools"]
    fields = {"method": None, "mcp_tool": None, "api": None, "host": None}  # what matching reads, for a runner
    assert health["targets"] == {"quotes": {"listener": "tools", "path": "/v1/quotes*", **fields}}


def test_scenario_by_name_and_back_to_none(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    assert proxy.control.scenario("down", seed=5)["scenario"] == "down"
    assert proxy.control.ok("GET", "/scenario")["seed"] == 5
    assert fetch(proxy.listeners["tools"], "/v1/quotes").status == 503
    proxy.control.scenario(None)
    assert fetch(proxy.listeners["tools"], "/v1/quotes").status == 200


def test_unknown_scenario_lists_the_valid_ones(world: tuple[Upstream, Proxy]) -> None:
    status, body = world[1].control.call("PUT", "/scenario", {"name": "dwon"})
    assert status == 404 and body == {"error": "unknown scenario 'dwon'", "valid": ["calm", "down"]}


def test_inline_scenario_is_validated_by_the_same_models(world: tuple[Upstream, Proxy]) -> None:
    control = world[1].control
    status, body = control.call(
        "PUT", "/scenario", {"scenario": {"name": "x", "tool_faults": [{"tool": "quotes", "mode": "explode"}]}}
    )
    assert status == 400 and "explode" in body["error"] and "tool_faults.0" in body["error"]
    status, body = control.call(
        "PUT", "/scenario", {"scenario": {"name": "x", "tool_faults": [{"tool": "nope", "mode": "error"}]}}
    )
    assert status == 400 and "tool 'nope' is not one of the targets; valid: quotes" in body["error"]


def test_bad_requests_say_what_is_valid(world: tuple[Upstream, Proxy]) -> None:
    control = world[1].control
    assert control.call("PUT", "/scenario", {"nmae": "down"}) == (
        400,
        {"error": "unknown keys ['nmae']", "valid": ["name", "scenario", "seed"]},
    )
    status, body = control.call("GET", "/nowhere")
    assert status == 404 and "GET /healthz" in body["valid"]
    status, body = control.call("POST", "/episodes/c999/end")
    assert status == 404 and body["error"] == "no open episode 'c999'"


def raw(proxy: Proxy, method: str, path: str, body: bytes, headers: dict[str, str] | None = None) -> Seen:
    base = proxy.control.url
    return fetch(base, path, method, body, {"content-type": "application/json", **(headers or {})}, timeout=30)


def error_of(seen: Seen) -> str:
    assert seen.headers["content-type"].startswith("application/json"), seen
    body = json.loads(seen.body)
    assert list(body) == ["error"] or "valid" in body, body
    return str(body["error"])


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b'{"name": ["x"]}', 400, 'name must be a string (a scenario of chaos_matrix) or null, got ["x"]'),
        (b'{"name": {}}', 400, "name must be a string (a scenario of chaos_matrix) or null, got {}"),
        (b'{"name": "\xff', 400, "body is not UTF-8 (byte 10: b'\\xff'); send JSON"),
        (b"[" * 100_000 + b"]" * 100_000, 400, "body nests JSON too deeply to read"),
        (b"{" * 3, 400, "body is not JSON (Expecting property name"),
        (b"[1]", 400, "body must be a JSON object, got list"),
        (b'{"seed": "1"}', 400, "seed must be an integer, got '1'"),
        (b" " * (10 * 1024 * 1024), 413, "body too large: 10485760 bytes; the control API reads at most 1048576"),
    ],
    ids=["name-list", "name-object", "not-utf8", "deep", "not-json", "not-object", "seed", "10MB"],
)
def test_every_bad_scenario_body_is_a_4xx_json_error(
    world: tuple[Upstream, Proxy], body: bytes, status: int, says: str
) -> None:
    seen = raw(world[1], "PUT", "/scenario", body)
    assert seen.status == status and error_of(seen).startswith(says), (seen.status, seen.body[:300])


def test_a_body_too_large_without_a_length_is_a_413(world: tuple[Upstream, Proxy]) -> None:
    def chunks() -> Iterator[bytes]:
        yield from [b" " * 65536] * 40  # 2.5 MiB, chunked: the size is not known up front

    url = urllib.parse.urlsplit(world[1].control.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.request(
            "PUT", "/scenario", body=chunks(), headers={"content-type": "application/json"}, encode_chunked=True
        )
        response = conn.getresponse()
        assert response.status == 413
        assert json.loads(response.read())["error"].startswith("body too large: more; the control API reads at most")
    finally:
        conn.close()


@pytest.mark.parametrize(
    "bad", ["a/b", "", "x" * 129, "sp ace", "é"], ids=["slash", "empty", "long", "space", "accent"]
)
def test_cell_ids_are_checked(world: tuple[Upstream, Proxy], bad: str) -> None:
    status, body = world[1].control.call("POST", "/episodes", {"id": bad})
    assert status == 400 and body["error"].startswith(f"episode id {bad!r} is not valid: use 1-128 letters")
    assert world[1].control.ok("GET", "/healthz")["open_episodes"] == []


def test_a_cell_with_a_runner_style_id_begins_and_ends(world: tuple[Upstream, Proxy]) -> None:
    control = world[1].control
    assert control.ok("POST", "/episodes", {"id": "e12.r0", "label": "x"}) == {"id": "e12.r0", "label": "x"}
    status, body = control.call("POST", "/episodes", {"id": "e12.r0"})
    assert status == 409 and body["error"] == "episode 'e12.r0' is already open; end it first or pick another id"
    assert control.end("e12.r0") == []
    assert control.call("POST", "/episodes/e12.r0/end")[0] == 404


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"label": 3}, "label must be a string (e.g. 'invariant x scenario') or null, got 3"),
        ({"id": ["a"]}, "id must be a string (e.g. 'e12.r0') or null, got [\"a\"]"),
        ({"lable": "x"}, "unknown keys ['lable']"),
    ],
)
def test_bad_cell_bodies(world: tuple[Upstream, Proxy], body: dict[str, object], says: str) -> None:
    status, answer = world[1].control.call("POST", "/episodes", body)
    assert (status, answer["error"]) == (400, says)


def test_journal_per_cell(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    proxy.control.scenario("down")
    first = proxy.control.begin("first")
    fetch(proxy.listeners["tools"], "/v1/quotes")
    fetch(proxy.listeners["tools"], "/echo", "POST", b"x")
    journal_first = proxy.control.end(first)
    second = proxy.control.begin("second")
    fetch(proxy.listeners["tools"], "/v1/quotes")
    journal_second = proxy.control.end(second)
    assert [(e["url"].rsplit("/", 1)[1], e["status"]) for e in journal_first] == [("quotes", 503), ("echo", 200)]
    assert [e["episode"] for e in journal_second] == [second] and len(proxy.control.journal()) == 3


def test_an_end_with_next_opens_the_next_episode_as_it_closes(world: tuple[Upstream, Proxy]) -> None:
    """One round trip per episode for a runner that runs them one at a time (issue 23): the journal of the one
    that ended, the next open under its own scenario, and its requests its own."""
    _, proxy = world
    control = proxy.control
    first = control.begin("first")
    fetch(proxy.listeners["tools"], "/v1/quotes")
    status, ended = control.call("POST", f"/episodes/{first}/end", {"next": {"label": "second", "scenario": "down"}})
    assert status == 200 and [e["status"] for e in ended["journal"]] == [200]
    second = ended["next"]
    assert second == {"id": second["id"], "label": "second", "scenario": "down"} and second["id"] != first
    assert control.ok("GET", "/healthz")["open_episodes"] == [second["id"]]
    assert fetch(proxy.listeners["tools"], "/v1/quotes").status == 503, "the next one's scenario runs"
    assert [(e["episode"], e["status"]) for e in control.end(second["id"])] == [(second["id"], 503)]


def test_a_bad_next_ends_nothing(world: tuple[Upstream, Proxy]) -> None:
    control = world[1].control
    first = control.begin("first")
    for body, says in [
        ({"next": ["second"]}, 'next: an object as POST /episodes takes, e.g. {"label": "e2"}, got ["second"]'),
        ({"next": {"lable": "x"}}, "next: unknown keys ['lable']"),
        ({"next": {"scenario": "dwon"}}, "next: unknown scenario 'dwon'"),  # 400, not the 404 of an episode not open
        ({"next": {"slot": 3}}, "next: this proxy has no slots (proxy.slots), got slot 3; leave it out"),
        ({"nxet": {}}, "unknown keys ['nxet']"),
    ]:
        status, answer = control.call("POST", f"/episodes/{first}/end", body)
        assert status == 400 and answer["error"].startswith(says), answer
        assert control.ok("GET", "/healthz")["open_episodes"] == [first], "checked before anything ended"


def test_a_next_that_cannot_open_still_ends_this_one(world: tuple[Upstream, Proxy]) -> None:
    """A next whose id is taken meanwhile (409 for POST /episodes): this episode ends and next_error says why."""
    control = world[1].control
    first, other = control.begin("first"), control.begin("other")
    status, ended = control.call("POST", f"/episodes/{first}/end", {"next": {"id": other}})
    assert status == 200 and ended["id"] == first and "next" not in ended
    assert ended["next_error"] == f"episode {other!r} is already open; end it first or pick another id"
    assert control.ok("GET", "/healthz")["open_episodes"] == [other]


def test_an_episode_end_says_the_newest_request_of_no_episode(world: tuple[Upstream, Proxy]) -> None:
    """loose_seq: the runner reads the unattributed requests only once it moves (runner/engine.py _loose_news)."""
    _, proxy = world

    def ended_seq() -> int | None:
        episode = proxy.control.begin()
        fetch(proxy.listeners["tools"], "/v1/quotes")  # this episode's own: not loose
        return api.EpisodeEnded.model_validate(proxy.control.send(api.EPISODE_END, episode=episode)).loose_seq

    assert ended_seq() == 0, "no request of no episode since the reset"
    fetch(proxy.listeners["tools"], "/v1/quotes")  # no episode open: of no episode
    (loose,) = [e for e in proxy.control.journal() if e["episode"] is None]
    assert ended_seq() == loose["seq"]
    assert ended_seq() == loose["seq"], "an episode's own requests do not move it"


def test_a_request_with_several_cells_open_names_its_candidates(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    a, b = proxy.control.begin(), proxy.control.begin()
    fetch(proxy.listeners["tools"], "/v1/quotes")
    fetch(proxy.listeners["tools"], "/v1/quotes", headers={"x-flakeproxy-cell": b})
    unattributed, named = proxy.control.journal()
    assert unattributed["episode"] is None and unattributed["episode_candidates"] == sorted([a, b])
    assert named["episode"] == b and "x-flakeproxy-cell" not in named["request_headers"]


def test_secrets_are_redacted(world: tuple[Upstream, Proxy]) -> None:
    up, proxy = world
    secrets = {
        "authorization": "Bearer sk-live-123",
        "x-api-key": "key-456",
        "cookie": "session=789",
        "x-custom-token": "tok-000",
    }
    fetch(proxy.listeners["tools"], "/v1/quotes", headers={**secrets, "x-trace": "visible"})
    [entry] = proxy.control.journal()
    for name in secrets:
        assert entry["request_headers"][name] == "[redacted]"
    assert entry["request_headers"]["x-trace"] == "visible"
    everything = str(proxy.control.ok("GET", "/journal"))
    assert not any(value in everything for value in secrets.values())
    sent = {k.lower(): v for k, v in up.requests[-1].headers.items()}
    assert sent["authorization"] == "Bearer sk-live-123"  # the upstream still gets it


def test_reset_clears_everything(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    proxy.control.scenario("down")
    proxy.control.begin()
    fetch(proxy.listeners["tools"], "/v1/quotes")
    assert proxy.control.ok("POST", "/reset") == {"scenario": None, "seed": 0, "definition": None}
    assert proxy.control.journal() == [] and proxy.control.ok("GET", "/healthz")["open_episodes"] == []


def test_token_is_required_when_set() -> None:
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, TARGETS), token="s3cret") as proxy:
        anonymous = Control(proxy.control.url)
        assert anonymous.call("GET", "/healthz")[0] == 401
        assert anonymous.call("PUT", "/scenario", {"name": None}, token="wrong")[0] == 401
        assert proxy.control.call("GET", "/healthz")[0] == 200
        for header, status in [
            ("bearer s3cret", 200),
            ("BEARER  s3cret", 200),
            ("s3cret", 401),
            ("Basic s3cret", 401),
            ("Bearer", 401),
            ("Bearers3cret", 401),
        ]:
            seen = fetch(proxy.control.url, "/healthz", headers={"authorization": header})
            assert seen.status == status, header
            if status == 401:
                assert json.loads(seen.body) == {
                    "error": "missing or wrong token; send Authorization: Bearer <proxy.token>"
                }


def test_refuses_to_bind_beyond_loopback_without_a_token(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(config_for({"tools": "http://127.0.0.1:9"}, TARGETS))
    out = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "proxy", "-c", str(path), "--admin", "0.0.0.0:0"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2
    assert out.stderr == (
        "error: control API on 0.0.0.0:0 listens beyond loopback without a token; set --token or proxy.token\n"
    )


def _start(path: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "flakeproxy", "proxy", "-c", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_proxy_command_prints_one_ready_line_and_stops_cleanly(tmp_path: Path, sig: signal.Signals) -> None:
    """...and its atexit handlers run: it ends without the interpreter's teardown (cli.main.end_at_once)."""
    path = tmp_path / "c.yaml"
    path.write_text(config_for({"tools": "http://127.0.0.1:9"}, TARGETS))
    config = yaml.safe_load(path.read_text())
    mark = tmp_path / "atexit-ran"
    (tmp_path / "sitecustomize.py").write_text(
        f"import atexit, pathlib\natexit.register(pathlib.Path({str(mark)!r}).touch)\n"
    )
    with _start(path, {**os.environ, "PYTHONPATH": str(tmp_path)}) as process:
        assert process.stdout is not None
        line = process.stdout.readline()
        admin = config["proxy"]["admin"]
        assert (
            line == f"flakeproxy proxy ready: control API http://{admin}; listeners: tools "
            f"{config['proxy']['listeners'][0]['listen']}\n"
        )
        assert Control(f"http://{admin}").ok("GET", "/healthz")["status"] == "ok"
        os.kill(process.pid, sig)
        assert process.wait(10) == 0
        assert process.stderr is not None and "Traceback" not in process.stderr.read()
    assert mark.exists()


#: Invariants the proxy never reads, each wrong: a type there is not, a regex without its pattern.
WRONG_INVARIANTS = {
    "contract": {"name": "c", "invariants": [{"id": "x", "type": "no_such_check"}]},
    "invariants": [{"type": "regex"}],
}


def test_the_proxy_serves_a_config_whose_invariants_are_wrong(tmp_path: Path) -> None:
    """Invariants are the runner's to validate and judge (issue 23 item 3: the proxy starts without the invariant
    catalogue): the proxy serves what it reads, checks an inline scenario against it, and `contract validate`
    still refuses the config."""
    path = tmp_path / "c.yaml"
    with RunningUpstream() as up:
        path.write_text(config_for({"tools": up.url}, TARGETS, {**MATRIX, **WRONG_INVARIANTS}))
        data = yaml.safe_load(path.read_text())
        listener, control = data["proxy"]["listeners"][0]["listen"], Control(f"http://{data['proxy']['admin']}")
        with _start(path) as process:
            assert process.stdout is not None and process.stderr is not None
            try:
                assert process.stdout.readline().startswith("flakeproxy proxy ready"), process.stderr.read()
                assert fetch(f"http://{listener}", "/v1/quotes").status == 200 and up.count("/v1/quotes") == 1
                control.ok("PUT", "/scenario", {"name": "down"})
                assert fetch(f"http://{listener}", "/v1/quotes").status == 503 and up.count("/v1/quotes") == 1
                inline = {"name": "inline", "tool_faults": [{"tool": "quotes", "mode": "error", "error_code": 429}]}
                control.ok("PUT", "/scenario", {"scenario": inline})
                assert fetch(f"http://{listener}", "/v1/quotes").status == 429
                bad = {"name": "bad", "tool_faults": [{"tool": "nope", "mode": "error"}]}
                status, body = control.call("PUT", "/scenario", {"scenario": bad})
                assert status == 400 and "tool 'nope' is not one of the targets; valid: quotes" in body["error"]
            finally:
                process.terminate()
                assert process.wait(10) == 0
    out = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "contract", "validate", "-c", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr.startswith(f"error: {path} line 22: contract.invariants[0].type: unknown type 'no_such_check'")


def _proxy_on_a_busy_port(tmp_path: Path, slotted: bool) -> tuple[int, subprocess.CompletedProcess[str]]:
    """`flakeproxy proxy` with one listening address taken: the listener's own, or (slotted) slot 2's."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        data = yaml.safe_load(config_for({"tools": "http://127.0.0.1:9"}, TARGETS))
        if slotted:
            data["proxy"]["slots"] = 3
            slots = [f"127.0.0.1:{free_port()}" for _ in range(2)] + [f"127.0.0.1:{port}"]
            data["proxy"]["listeners"][0]["slot_listen"] = slots
        else:
            data["proxy"]["listeners"][0]["listen"] = f"127.0.0.1:{port}"
        path = tmp_path / "c.yaml"
        path.write_text(yaml.safe_dump(data))
        out = subprocess.run(
            [sys.executable, "-m", "flakeproxy", "proxy", "-c", str(path)], capture_output=True, text=True, timeout=30
        )
    return port, out


@pytest.mark.parametrize(("slotted", "which"), [(False, "listener tools"), (True, "listener tools, slot 2")])
def test_port_in_use_is_one_line_and_exit_3(tmp_path: Path, slotted: bool, which: str) -> None:
    """A slot's port is one the config may never have written (listen + k x slot_port_step): the line says which."""
    port, out = _proxy_on_a_busy_port(tmp_path, slotted)
    assert out.returncode == 3
    from flakeproxy.addons.server import _ephemeral_hint

    assert out.stderr == (
        f"error: cannot listen on 127.0.0.1:{port} ({which}): Address already in use; "
        f"stop what uses it or pick another port{_ephemeral_hint(port)}\n"
    )


def test_a_busy_port_in_the_outgoing_range_says_an_outgoing_connection_may_hold_it() -> None:
    """A trial looked for a listener on its port: an outgoing connection held it (a source port), nothing listened."""
    from pathlib import Path

    from flakeproxy.addons.server import _ephemeral_hint

    low, high = (int(n) for n in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    assert _ephemeral_hint(low) == (
        f" (it is in the range {low}-{high} the kernel gives outgoing connections, so one may hold it with nothing "
        f"listening: ports below {low} avoid that)"
    )
    assert _ephemeral_hint(low - 1) == "" and _ephemeral_hint(high + 1) == ""
