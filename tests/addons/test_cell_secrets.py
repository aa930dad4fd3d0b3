"""A secret that one request of an episode carried is scrubbed from every entry of that episode, and from the
texts (the agent's answer and error) the runner sends with the cell's end: only the proxy saw the value."""

from __future__ import annotations

import json

from tests.support.http import fetch
from tests.support.proxy import config_for, running_proxy
from tests.support.upstream import RunningUpstream

SECRET = "sk-live-CELLWIDE-83hd72kd"
TARGETS = {"quotes": {"listener": "tools", "path": "/v1/quotes*"}, "echo": {"listener": "tools", "path": "/echo"}}


def test_a_secret_of_one_request_is_scrubbed_from_the_others_and_from_the_answer() -> None:
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, TARGETS)) as proxy:
        base = proxy.listeners["tools"]
        cell = proxy.control.begin("secrets")
        headers = {"x-flakeproxy-cell": cell}
        fetch(base, "/v1/quotes?symbol=AAPL", "GET", None, {**headers, "Authorization": f"Bearer {SECRET}"})
        echoed = json.dumps({"note": f"the key was {SECRET}"}).encode()  # no secret-named field: not found alone
        fetch(base, "/echo", "POST", echoed, {**headers, "content-type": "application/json"})
        ended = proxy.control.ok("POST", f"/episodes/{cell}/end", {"texts": [f"My key is {SECRET}.", None]})
        assert any(SECRET in r.body.decode() for r in up.requests), "the secret did reach the upstream"
    said = json.dumps(ended)
    assert SECRET not in said, said
    assert ended["texts"] == ["My key is [redacted].", None]
    assert [e["url"].rsplit("/", 1)[-1] for e in ended["journal"]] == ["quotes?symbol=AAPL", "echo"]
    assert "[redacted]" in ended["journal"][1]["request_body"] and "[redacted]" in ended["journal"][1]["response_body"]


def test_bad_texts_are_a_clear_4xx() -> None:
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, TARGETS)) as proxy:
        cell = proxy.control.begin("bad")
        status, data = proxy.control.call("POST", f"/episodes/{cell}/end", {"texts": "not a list"})
        assert status == 400 and "texts must be a list" in data["error"], data
        status, data = proxy.control.call("POST", f"/episodes/{cell}/end", {"text": []})
        assert status == 400 and data["valid"] == ["texts"], data
