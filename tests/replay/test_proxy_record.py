"""`flakeproxy proxy --record DIR`: one session file per cell when it ends, the rest at shutdown."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import yaml

from flakeproxy import parse_config
from flakeproxy.addons.server import ProxyServer
from flakeproxy.replay.files import load_session_file
from tests.replay.test_proxy_replay import TARGETS, get, get_events
from tests.support.loops import LoopThread
from tests.support.proxy import Control, config_for
from tests.support.upstream import RunningUpstream


@pytest.mark.timeout(60)
def test_the_proxy_writes_a_session_per_cell_and_one_for_traffic_of_no_cell(tmp_path: Path) -> None:
    with RunningUpstream() as up:
        config = parse_config(config_for({"tools": up.url}, TARGETS), "test.yaml")
        server = ProxyServer(config, record=tmp_path / "sessions")
        thread, ready = LoopThread("proxy"), threading.Event()
        future = thread.submit(server.run(on_ready=lambda _line: ready.set(), handle_signals=False))
        try:
            assert ready.wait(15), "the proxy did not start"
            control, base = Control(f"http://{server.admin}"), f"http://{config.proxy.listeners[0].listen}"
            cell = control.begin("quote then stream")
            get(base, "/v1/quotes?symbol=AAPL", cell)
            get_events(base, "/sse?gap=0.01&n=3", cell)
            control.end(cell)
            written = sorted((tmp_path / "sessions").glob("*.yaml"))
            get(base, "/v1/quotes?symbol=MSFT", "")  # no cell open: written at shutdown
        finally:
            server.shutdown()
            future.result(timeout=15)
            thread.close()
    assert [p.name for p in written] == ["quote-then-stream.yaml"]
    (session,) = load_session_file(written[0])
    assert [(x.target, x.method, x.status) for x in session.exchanges] == [
        ("quotes", "GET", 200),
        ("events", "GET", 200),
    ]
    assert yaml.safe_load(session.exchanges[0].response_body)["price"] == 189.5
    assert [e.at_ms is not None for e in session.exchanges[1].events or []] == [True, True, True]
    (rest,) = load_session_file(tmp_path / "sessions" / "proxy.yaml")
    assert rest.exchanges[0].url.endswith("/v1/quotes?symbol=MSFT")
