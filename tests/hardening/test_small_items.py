"""The smaller items of issue 21 (item 11), each over real sockets and failing on the previous code:
ESC/BEL from config strings in summary.md and on the terminal; a chunk error under a rewriting fault journaled
as "changed nothing"; truncated_response on a JSON answer with one byte that is not UTF-8; brotli bodies shown
as binary in the journal. (The 20 MB config string is in test_hostile_files.py, the read timeout's default in
tests/addons/test_upstream_failures.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.hardening.hostile import WORDS, broken_chunked_upstream, hostile_upstream
from tests.hardening.runs import contract_run, run_world
from tests.support.http import fetch
from tests.support.proxy import Proxy, config_for, running_proxy

MATRIX = [
    {"name": "cut", "llm_faults": [{"mode": "truncated_response", "max_tokens": 3}]},
    {"name": "drift", "tool_faults": [{"tool": "feed", "mode": "schema_drift", "drop": ["a"]}]},
]
TARGETS = {"llm": {"listener": "llm", "api": "openai"}, "feed": {"listener": "feed", "path": "/*"}}


@pytest.fixture(scope="module")
def proxy() -> Iterator[Proxy]:
    with (
        hostile_upstream() as up,
        broken_chunked_upstream() as broken,
        running_proxy(config_for({"llm": up, "feed": broken}, TARGETS, {"chaos_matrix": MATRIX})) as p,
    ):
        yield p


def _call(proxy: Proxy, scenario: str | None, listener: str, path: str, body: Any = None) -> tuple[Any, Any]:
    cell = proxy.control.ok("POST", "/episodes", {"label": path, "scenario": scenario})["id"]
    data = None if body is None else json.dumps(body).encode()
    headers = {"x-flakeproxy-cell": cell, "content-type": "application/json"}
    seen = fetch(proxy.listeners[listener], path, "POST" if data else "GET", data, headers)
    (entry,) = proxy.control.end(cell)
    return seen, entry


@pytest.mark.timeout(30)
def test_a_chunk_error_under_a_rewriting_fault_is_an_upstream_failure(proxy: Proxy) -> None:
    seen, entry = _call(proxy, "drift", "feed", "/v1/feed")
    assert seen.status == 502 and entry["status"] == 502
    fault = entry["fault"]
    assert fault["applied"] is False
    assert fault["not_applied_reason"].startswith("the upstream failed before the fault could apply: "), fault


@pytest.mark.timeout(30)
def test_truncated_response_keeps_an_answer_with_a_bad_byte_well_formed(proxy: Proxy) -> None:
    openai = pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")
    cell = proxy.control.ok("POST", "/episodes", {"label": "bad utf-8", "scenario": "cut"})["id"]
    client = openai.OpenAI(base_url=proxy.listeners["llm"] + "/v1", api_key="sk-test", max_retries=0, timeout=20)
    try:
        extra: Any = {"extra_query": {"bad_utf8": "1"}, "extra_headers": {"x-flakeproxy-cell": cell}}
        answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], **extra)
    finally:
        client.close()
    (entry,) = proxy.control.end(cell)
    choice = answer.choices[0]
    assert (choice.message.content, choice.finish_reason) == ("".join(WORDS[:3]), "length")
    assert entry["fault"]["applied"] is True


@pytest.mark.timeout(30)
def test_brotli_bodies_are_shown_decoded_in_the_journal(proxy: Proxy) -> None:
    seen, entry = _call(proxy, None, "llm", "/v1/chat/completions?enc=br", {"model": "m"})
    assert seen.status == 200 and seen.headers["content-encoding"] == "br"
    assert json.loads(entry["response_body"])["choices"][0]["message"]["content"] == "".join(WORDS)


@pytest.mark.timeout(120)
def test_control_characters_from_the_config_are_shown_not_obeyed(tmp_path: Path) -> None:
    answer = json.dumps({"reply": "per the source"}).encode()
    with run_world(tmp_path, answer) as world:
        data = yaml.safe_load(world.config.read_text())
        data["contract"]["name"] = "bell\x07 and \x1b]0;owned\x07 title"
        data["chaos_matrix"][1]["name"] = "quotes\x1b[31m-down"
        world.config.write_text(yaml.safe_dump(data))
        out = contract_run(world)
    assert out.returncode == 0, out.stderr[-2000:]
    summary = (world.out / "summary.md").read_text()
    for text in (summary, out.stdout, out.stderr):
        assert "\x1b" not in text and "\x07" not in text
    assert "\\\\x1b\\]0;owned\\\\x07" in summary  # shown (Markdown-escaped), not obeyed
    assert "quotes\\x1b[31m-down" in out.stderr
