"""A WebSocket's messages in its journal entry: bounded in count and bytes, redacted when read."""

from __future__ import annotations

import json

from flakeproxy.proxycore import ws_log
from flakeproxy.proxycore.redact import DEFAULT
from flakeproxy.proxycore.ws_log import WsLog, redact_ws


def test_messages_are_kept_up_to_the_caps_and_all_are_counted() -> None:
    log = WsLog()
    for i in range(ws_log.WS_MESSAGES_MAX + 5):
        log.add(i % 2 == 0, b"x" * 10, True, float(i))
    data = log.to_json()
    assert len(data["messages"]) == ws_log.WS_MESSAGES_MAX and data["message_count"] == ws_log.WS_MESSAGES_MAX + 5
    assert data["messages_truncated"] and data["message_bytes"] == 10 * (ws_log.WS_MESSAGES_MAX + 5)


def test_a_large_message_is_cut_and_binary_is_hex() -> None:
    log = WsLog()
    log.add(False, b"a" * (ws_log.WS_MESSAGE_CAP + 10), True, 1.0, "dropped")
    log.add(True, b"\x00\xff", False, 2.0)
    big, binary = log.to_json()["messages"]
    assert len(big["text"]) == ws_log.WS_MESSAGE_CAP and big["truncated"] and big["fault"] == "dropped"
    assert binary == {"from": "client", "at_ms": 2.0, "bytes": 2, "binary": "00ff"}


def test_the_first_close_is_kept() -> None:
    log = WsLog()
    log.closed(1011, "bye", "proxy")
    log.closed(1000, "", "client")
    assert (log.close_code, log.close_reason, log.closed_by) == (1011, "bye", "proxy")


def test_secrets_in_messages_are_redacted() -> None:
    log = WsLog()
    log.add(True, json.dumps({"type": "session.update", "api_key": "sk-abcdef0123456789abcdef"}).encode(), True, 0.0)
    log.add(False, b"echo tok-secret-value", True, 1.0)
    out = redact_ws(DEFAULT, log.to_json(), {"tok-secret-value"})
    assert "sk-abcdef" not in json.dumps(out) and "tok-secret-value" not in json.dumps(out)
