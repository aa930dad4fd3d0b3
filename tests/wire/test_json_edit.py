from __future__ import annotations

from flakeproxy.wire.json_edit import map_mcp_text, map_strings, pad, poison_request, rename_drop


def test_rename_drop_at_every_depth() -> None:
    data = {"price": 1, "nested": [{"price": 2, "drop": 3}], "drop": 4}
    assert rename_drop(data, {"price": "cost"}, ["drop"]) == {"cost": 1, "nested": [{"cost": 2}]}


def test_map_strings_touches_values_not_keys() -> None:
    assert map_strings({"a": "x", "b": [1, "y"]}, str.upper) == {"a": "X", "b": [1, "Y"]}


def test_map_mcp_text_touches_only_text_content() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hi"}], "isError": False}}
    out = map_mcp_text(message, str.upper)
    assert out["result"]["content"][0] == {"type": "text", "text": "HI"} and out["jsonrpc"] == "2.0"


def test_pad() -> None:
    assert len(pad({"a": 1}, 1000, "xy")["notes"]) == 1000
    mcp = pad({"result": {"content": []}}, 10, "z")
    assert mcp["result"]["content"] == [{"type": "text", "text": "z" * 10}]


def test_poison_request_strategies() -> None:
    body = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]}
    history = poison_request(body, "P", "history")["messages"]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "user"] and history[1]["content"] == "P"
    assert poison_request(body, "P", "append")["messages"][-1]["content"] == "q\n\nP"
    assert poison_request(body, "P", "replace")["messages"][-1]["content"] == "P"
    assert poison_request({"input": "q"}, "P", "prepend") == {"input": "P\n\nq"}
