"""request_template as a JSON string (Flakestorm's syntax) or a text body, filled JSON-safely and sent to a
real aiohttp agent server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp import web

from flakeproxy.config.agent import HttpAgent
from flakeproxy.errors import ConfigError
from flakeproxy.runner.agents.http import HttpAdapter
from flakeproxy.schema import config_schema
from tests.config.base_config import edit
from tests.support.loops import running_app

PROMPT = 'He said "hi" \\ then\nleft: {"x": 1} ✓ {prompt}'


def agent(template: Any, **extra: Any) -> HttpAgent:
    return HttpAgent.model_validate(
        {"type": "http", "endpoint": "http://127.0.0.1:1/chat", "request_template": template, **extra}
    )


@pytest.mark.parametrize(
    ("template", "parsed"),
    [
        ('{"message": "{prompt}"}', {"message": "{prompt}"}),
        ('  {"input": {"text": "{prompt}", "n": 1}}', {"input": {"text": "{prompt}", "n": 1}}),
        ('[{"role": "user", "content": "{prompt}"}]', [{"role": "user", "content": "{prompt}"}]),
        ("{prompt}", "{prompt}"),  # not JSON: a text body
        ("Question: {prompt}", "Question: {prompt}"),
        ({"message": "{prompt}"}, {"message": "{prompt}"}),
    ],
)
def test_string_templates_are_parsed_once(template: Any, parsed: Any) -> None:
    assert agent(template).request_template == parsed


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ('{"message": {prompt}}', r"looks like JSON but does not parse \(Expecting property name .* column 14\)"),
        ("{'message': '{prompt}'}", r"looks like JSON but does not parse .*, put the placeholder in quotes"),
        ('{"message": "hi"}', r"request_template never uses \{prompt\}"),
    ],
)
def test_bad_string_templates_are_one_line(template: str, message: str) -> None:
    text = edit('request_template: {message: "{prompt}"}', f"request_template: {json.dumps(template)}")
    from flakeproxy.config import parse_config

    with pytest.raises(ConfigError, match=r"<string> line 5: agent\.request_template: " + message) as info:
        parse_config(text)
    assert "\n" not in str(info.value)


def test_a_text_template_needs_a_body() -> None:
    with pytest.raises(ValueError, match="method GET has none"):
        agent("{prompt}", method="GET")


def test_schema_accepts_a_string_template() -> None:
    prop = config_schema()["$defs"]["HttpAgent"]["properties"]["request_template"]
    assert {"type": "string"} in prop["anyOf"] and any(t.get("type") == "object" for t in prop["anyOf"])


async def _send(template: Any) -> tuple[str, dict[str, Any]]:
    seen: dict[str, Any] = {}

    async def handle(request: web.Request) -> web.Response:
        seen["type"] = request.content_type
        seen["raw"] = await request.text()
        return web.json_response({"reply": "ok"})

    with running_app([web.post("/chat", handle)], "agent") as url:
        config = HttpAgent.model_validate(
            {"type": "http", "endpoint": f"{url}/chat", "request_template": template, "response_path": "$.reply"}
        )
        adapter = HttpAdapter(config)
        await adapter.start()
        try:
            reply = await adapter.invoke(PROMPT)
        finally:
            await adapter.close()
    assert reply.error is None, reply.error
    return reply.text or "", seen


def test_json_string_template_substitutes_a_value() -> None:
    _, seen = asyncio.run(_send('{"message": "{prompt}", "meta": ["{prompt}", 2]}'))
    assert seen["type"] == "application/json"
    assert json.loads(seen["raw"]) == {"message": PROMPT, "meta": [PROMPT, 2]}


def test_text_template_sends_the_raw_prompt() -> None:
    _, seen = asyncio.run(_send("Q: {prompt}"))
    assert seen["type"] == "text/plain" and seen["raw"] == f"Q: {PROMPT}"
