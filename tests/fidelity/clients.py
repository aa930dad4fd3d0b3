"""The official clients making one call each and reporting what they saw: openai and anthropic in Python
(in .venv) and in Node (npm packages installed once into a cache folder)."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tests.support.npm import CACHE_ROOT, npm_packages

PACKAGES = ("openai@6", "@anthropic-ai/sdk@1")
CACHE = CACHE_ROOT / "node-sdks"
SCRIPT = Path(__file__).with_name("node_client.mjs")
MESSAGES: Any = [{"role": "user", "content": "What is AAPL trading at?"}]
OAI_TOOLS: Any = [{"type": "function", "function": {"name": "get_quote", "parameters": {"type": "object"}}}]
CLAUDE_TOOLS: Any = [
    {"name": "get_quote", "description": "quote", "input_schema": {"type": "object", "properties": {}}}
]


@dataclass
class Seen:
    """What one client call ended with: the exception's class and status (None if it returned), the finish /
    stop reason, the text (or the tool call's arguments), how many chunks the stream gave, whether the
    error carried a request id."""

    error: str | None = None
    status: int | None = None
    finish: str | None = None
    content: str = ""
    chunks: int = 0
    request_id: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _caught(seen: Seen, e: Exception) -> None:
    seen.error = type(e).__name__
    seen.status = getattr(e, "status_code", None)
    seen.request_id = getattr(e, "request_id", None) is not None


def python_openai(base: str, call: str, max_retries: int, timeout: float) -> Seen:
    import openai

    seen = Seen()
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=max_retries, timeout=timeout)
    try:
        if call == "json":
            reply = client.chat.completions.create(model="m", messages=MESSAGES)
            seen.content, seen.finish = reply.choices[0].message.content or "", reply.choices[0].finish_reason
        elif call == "responses_stream":
            with client.responses.stream(model="m", input="What is AAPL trading at?") as stream:
                for event in stream:
                    seen.chunks += 1
                    if event.type == "response.output_text.delta":
                        seen.content += event.delta
                seen.finish = stream.get_final_response().status
        else:
            tools = {"tools": OAI_TOOLS} if call == "tools_stream" else {}
            # closed on the way out, even when it raises: an unclosed stream is finalized by the GC later
            with client.chat.completions.create(model="m", messages=MESSAGES, stream=True, **tools) as stream:
                for chunk in stream:
                    seen.chunks += 1
                    for choice in chunk.choices:
                        seen.content += choice.delta.content or ""
                        for tool_call in choice.delta.tool_calls or []:
                            seen.content += (tool_call.function.arguments or "") if tool_call.function else ""
                        seen.finish = choice.finish_reason or seen.finish
    except Exception as e:  # the reaction under test: recorded, then compared
        _caught(seen, e)
    finally:
        client.close()
    return seen


def python_anthropic(base: str, call: str, max_retries: int, timeout: float) -> Seen:
    import anthropic

    seen = Seen()
    client = anthropic.Anthropic(base_url=base, api_key="sk-ant-test", max_retries=max_retries, timeout=timeout)
    body: Any = {"model": "m", "max_tokens": 100, "messages": MESSAGES}
    if call == "tools_stream":
        body["tools"] = CLAUDE_TOOLS
    try:
        if call == "json":
            message = client.messages.create(**body)
        else:
            with client.messages.stream(**body) as stream:
                for _event in stream:
                    seen.chunks += 1
                message = stream.get_final_message()
        block = message.content[0] if message.content else None
        seen.finish = message.stop_reason
        if block is not None:
            seen.content = block.text if block.type == "text" else json.dumps(block.input)
    except Exception as e:  # the reaction under test: recorded, then compared
        _caught(seen, e)
    finally:
        client.close()
    return seen


def python_gemini(base: str, call: str, max_retries: int, timeout: float) -> Seen:
    from google import genai
    from google.genai import types

    retry = types.HttpRetryOptions(attempts=max_retries + 1, initial_delay=0.3, max_delay=2, exp_base=2, jitter=0)
    options = types.HttpOptions(base_url=base, timeout=int(timeout * 1000), retry_options=retry)
    client = genai.Client(api_key="gemini-test", http_options=options)
    seen = Seen()
    try:
        if call == "json":
            reply = client.models.generate_content(model="gemini-2.0-flash", contents="What is AAPL trading at?")
            seen.content = reply.text or ""
            seen.finish = _gemini_finish(reply)
        else:
            chunks = client.models.generate_content_stream(model="gemini-2.0-flash", contents="AAPL?")
            try:
                for chunk in chunks:
                    seen.chunks += 1
                    seen.content += chunk.text or ""
                    seen.finish = _gemini_finish(chunk) or seen.finish
            finally:
                chunks.close()
    except Exception as e:  # the reaction under test: recorded, then compared
        seen.error, seen.status = type(e).__name__, getattr(e, "code", None)
    finally:
        client.close()
    return seen


def _gemini_finish(reply: Any) -> str | None:
    reason = reply.candidates[0].finish_reason if reply.candidates else None
    return None if reason is None else str(getattr(reason, "value", reason))


def node_client() -> Path:
    """The runner script beside a node_modules holding openai@6 and @anthropic-ai/sdk (skip when npm cannot
    install them)."""
    script = npm_packages(CACHE.name, *PACKAGES) / SCRIPT.name
    shutil.copyfile(SCRIPT, script)
    return script


def node(sdk: str, base: str, call: str, max_retries: int, timeout: float) -> Seen:
    spec = {"sdk": sdk, "base": base, "call": call, "maxRetries": max_retries, "timeoutMs": int(timeout * 1000)}
    done = subprocess.run(
        ["node", str(node_client()), json.dumps(spec)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, f"the node client failed: {done.stderr[-2000:]}"
    return Seen(**json.loads(done.stdout.strip().splitlines()[-1]))


def run_client(client: str, base: str, call: str, max_retries: int, timeout: float) -> Seen:
    """client: py-openai, py-anthropic, node-openai, node-anthropic."""
    if client == "py-openai":
        return python_openai(base, call, max_retries, timeout)
    if client == "py-anthropic":
        return python_anthropic(base, call, max_retries, timeout)
    if client == "py-gemini":
        return python_gemini(base, call, max_retries, timeout)
    return node(client.removeprefix("node-"), base, call, max_retries, timeout)
