from __future__ import annotations

from flakeproxy.wire.json_edit import map_mcp_result, map_strings, pad, poison_request, rename_drop


def test_rename_drop_at_every_depth() -> None:
    data = {"price": 1, "nested": [{"price": 2, "drop": 3}], "drop": 4}
    assert rename_drop(data, {"price": "cost"}, ["drop"]) == {"cost": 1, "nested": [{"cost": 2}]}


def test_map_strings_touches_values_not_keys() -> None:
    assert map_strings({"a": "x", "b": [1, "y"]}, str.upper) == {"a": "X", "b": [1, "Y"]}


def test_map_mcp_result_touches_text_content() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hi"}], "isError": False}}
    out = map_mcp_result(message, on_text=str.upper)
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


STRUCTURED = {
    "jsonrpc": "2.0",
    "id": 7,
    "result": {
        "content": [{"type": "text", "text": '{"headline": "AAPL up", "price": 1}'}],
        "structuredContent": {"headline": "AAPL up", "price": 1, "tags": ["tech"]},
        "isError": False,
    },
}


def test_map_mcp_result_edits_structured_content_as_well_as_text() -> None:
    """Clients of structured output read structuredContent only: an edit of the text alone never reaches them."""
    out = map_mcp_result(STRUCTURED, on_text=lambda t: t + "!")
    assert out["result"]["structuredContent"] == {"headline": "AAPL up!", "price": 1, "tags": ["tech!"]}
    assert out["result"]["content"][0]["text"].endswith("!")
    assert STRUCTURED["result"]["structuredContent"]["headline"] == "AAPL up"  # the input is left as it is


def test_map_mcp_result_edits_json_text_as_json() -> None:
    out = map_mcp_result(STRUCTURED, on_json=lambda d: rename_drop(d, {"price": "cost"}, []))
    assert out["result"]["structuredContent"] == {"headline": "AAPL up", "cost": 1, "tags": ["tech"]}
    assert out["result"]["content"][0]["text"] == '{"headline": "AAPL up", "cost": 1}'


def test_map_mcp_result_leaves_errors_and_other_messages_alone() -> None:
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "nope"}}
    assert map_mcp_result(error, on_text=str.upper) == error


def test_pad_grows_the_structured_content_too() -> None:
    out = pad(STRUCTURED, 10, "z")
    assert out["result"]["structuredContent"]["notes"] == "z" * 10
    assert out["result"]["content"][-1] == {"type": "text", "text": "z" * 10}
