from __future__ import annotations

import json

from flakeproxy.wire.mcp import called_tool, is_error_reply, jsonrpc_error_reply

CALL = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search"}}).encode()


def test_called_tool_from_body_or_headers() -> None:
    assert called_tool({}, CALL) == "search"
    assert called_tool({"mcp-method": "tools/call", "mcp-name": "other"}, b"") == "other"
    assert called_tool({}, b'{"jsonrpc": "2.0", "method": "tools/list", "id": 1}') is None
    assert called_tool({}, b"not json") is None
    assert called_tool({}, b"[" + CALL + b"]") == "search"


def test_replies_keep_the_request_id_and_session() -> None:
    reply = is_error_reply({"mcp-session-id": "s1"}, CALL, "down")
    assert json.loads(reply.body)["id"] == 3 and json.loads(reply.body)["result"]["isError"] is True
    assert reply.headers["mcp-session-id"] == "s1"
    error = json.loads(jsonrpc_error_reply({}, CALL, -32602, "bad").body)
    assert error == {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "bad"}}
