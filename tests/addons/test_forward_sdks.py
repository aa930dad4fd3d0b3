"""Agents that cannot change their URLs, through the forward listener: the official OpenAI and Anthropic
Python SDKs and openai-node keep their built-in https://api.openai.com / https://api.anthropic.com, and are
configured only by HTTPS_PROXY and the CA variable (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS). They get the
scenario's faults (429 then retries, a cut stream, 529 then a retry), and the journal attributes every call
to its target by host; without the CA trusted the client fails on the certificate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.frameworks.node import CACHE as NODE_OPENAI
from tests.frameworks.node import node_agent
from tests.support.forward import World, forward_config, staging_world, trust_file
from tests.support.npm import npm_packages
from tests.support.proxy import Proxy, running_proxy
from tests.support.upstream import ANSWER

UNDICI = NODE_OPENAI.parent / "node-undici"
SCENARIO = {
    "llm_faults": [
        {"tool": "openai", "mode": "rate_limit", "retry_after_s": 0, "times": 2},
        {"tool": "openai", "mode": "stream_cut", "after_events": 3},
        {"tool": "anthropic", "mode": "overloaded", "times": 1},
    ]
}

PYTHON_AGENT = """
import json, openai, anthropic
ask = [{"role": "user", "content": "What is AAPL trading at?"}]
llm = openai.OpenAI()  # its default base URL: https://api.openai.com/v1
out = {"chat": llm.chat.completions.create(model="gpt-4o", messages=ask).choices[0].message.content}
parts, finish = [], None
for chunk in llm.chat.completions.create(model="gpt-4o", messages=ask, stream=True):
    if chunk.choices:
        parts.append(chunk.choices[0].delta.content or "")
        finish = chunk.choices[0].finish_reason or finish
out["stream"], out["finish"] = "".join(parts), finish
claude = anthropic.Anthropic()  # https://api.anthropic.com
out["anthropic"] = claude.messages.create(model="claude", max_tokens=50, messages=ask).content[0].text
print(json.dumps(out))
"""

NODE_AGENT = """
import OpenAI from "openai";
const ask = [{ role: "user", content: "What is AAPL trading at?" }];
const llm = new OpenAI();  // its default base URL: https://api.openai.com/v1
const answer = await llm.chat.completions.create({ model: "gpt-4o", messages: ask });
const out = { chat: answer.choices[0].message.content };
let text = "", finish = null;
for await (const chunk of await llm.chat.completions.create({ model: "gpt-4o", messages: ask, stream: true })) {
  if (chunk.choices.length) {
    text += chunk.choices[0].delta.content ?? "";
    finish = chunk.choices[0].finish_reason ?? finish;
  }
}
out.stream = text; out.finish = finish;
console.log(JSON.stringify(out));
"""

UNTRUSTED = """
import openai
try:
    openai.OpenAI(max_retries=0).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
except openai.APIConnectionError as e:
    chain, cause = [], e
    while cause is not None:
        chain.append(f"{type(cause).__name__}: {cause}")
        cause = cause.__cause__ or cause.__context__
    print("\\n".join(chain))
else:
    print("connected")
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with staging_world(tmp_path_factory.mktemp("upstream-ca")) as w:
        yield w


def agent_env(forward: str, **extra: str) -> dict[str, str]:
    """The agent's environment: HTTPS_PROXY and its CA variable; nothing of the machine's proxies or URLs."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
        and not k.endswith("_BASE_URL")
        and not k.startswith(("SSL_CERT", "NODE_"))
    }
    env.update({"HTTPS_PROXY": f"http://{forward}", "OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"})
    env.update(extra)
    return env


def run(args: list[str], env: dict[str, str], cwd: Path | None = None) -> dict[str, Any]:
    out = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-3000:]
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def calls(proxy: Proxy) -> list[tuple[str, list[str], int | None, str | None]]:
    """(url, targets, status, fault kind) per journal entry."""
    return [
        (e["url"], e["targets"], e["status"], (e["fault"] or {}).get("kind") if e["fault"] else None)
        for e in proxy.control.journal()
    ]


def assert_stream_cut(out: dict[str, Any]) -> None:
    assert out["chat"] == ANSWER  # after two 429s, the SDK's third try reached the upstream
    assert out["finish"] is None and out["stream"] and ANSWER.startswith(out["stream"]) and out["stream"] != ANSWER


CHAT = "https://api.openai.com/v1/chat/completions"


@pytest.mark.timeout(90)
def test_openai_and_anthropic_python_sdks_get_faults_through_the_forward_listener(world: World, tmp_path: Path) -> None:
    config, forward = forward_config(world, tmp_path / "ca")
    before = world.llm.count()
    with running_proxy(config) as p:
        p.control.scenario("staging", **SCENARIO)
        trust = trust_file(tmp_path, tmp_path / "ca" / "mitmproxy-ca-cert.pem")
        out = run([sys.executable, "-c", PYTHON_AGENT], agent_env(forward, SSL_CERT_FILE=str(trust)))
        assert_stream_cut(out)
        assert out["anthropic"] == ANSWER
        assert calls(p) == [
            (CHAT, ["openai"], 429, "rate_limit"),
            (CHAT, ["openai"], 429, "rate_limit"),
            (CHAT, ["openai"], 200, "stream_cut"),  # not a stream: the fault changed nothing
            (CHAT, ["openai"], 200, "stream_cut"),
            ("https://api.anthropic.com/v1/messages", ["anthropic"], 529, "overloaded"),  # api inferred: anthropic
            ("https://api.anthropic.com/v1/messages", ["anthropic"], 200, None),
        ]
        applied = [e["fault"]["applied"] for e in p.control.journal() if e["fault"]]
        assert applied == [True, True, False, True, True]
    seen = world.llm.requests[before:]
    assert [(r.path, r.headers["Host"]) for r in seen] == [
        ("/v1/chat/completions", "api.openai.com"),
        ("/v1/chat/completions", "api.openai.com"),
        ("/v1/messages", "api.anthropic.com"),
    ]


def node_env_for_proxy() -> dict[str, str]:
    """Node >= 22.21 / 24.5 honours HTTPS_PROXY in fetch with NODE_USE_ENV_PROXY=1. Older Node (20 here) does
    not: a preload (NODE_OPTIONS=--require) installs undici's EnvHttpProxyAgent, still no change to the agent."""
    node = subprocess.check_output(["node", "-p", "process.versions.node"], text=True)
    version = tuple(int(x) for x in node.split("."))
    if version >= (24, 5) or (22, 21) <= version < (23,):
        return {"NODE_USE_ENV_PROXY": "1"}
    npm_packages(UNDICI.name, "undici@6")
    preload = UNDICI / "env-proxy.cjs"
    module = json.dumps(str(UNDICI / "node_modules" / "undici"))
    preload.write_text(
        f"const {{ setGlobalDispatcher, EnvHttpProxyAgent }} = require({module});\n"
        "setGlobalDispatcher(new EnvHttpProxyAgent());\n"
    )
    return {"NODE_OPTIONS": f"--require {preload}"}


@pytest.mark.timeout(120)
def test_openai_node_gets_faults_through_the_forward_listener(world: World, tmp_path: Path) -> None:
    node_agent()  # openai@6 in the framework tests' cache (skips when npm cannot install it)
    script = NODE_OPENAI / "forward_agent.mjs"
    script.write_text(NODE_AGENT)
    config, forward = forward_config(world, tmp_path / "ca")
    with running_proxy(config) as p:
        p.control.scenario("staging", **SCENARIO)
        cert = tmp_path / "ca" / "mitmproxy-ca-cert.pem"
        env = agent_env(forward, NODE_EXTRA_CA_CERTS=str(cert), **node_env_for_proxy())
        out = run(["node", str(script)], env, cwd=NODE_OPENAI)
        assert_stream_cut(out)
        assert [c[1:] for c in calls(p)] == [
            (["openai"], 429, "rate_limit"),
            (["openai"], 429, "rate_limit"),
            (["openai"], 200, "stream_cut"),
            (["openai"], 200, "stream_cut"),
        ]
        assert {c[0] for c in calls(p)} == {CHAT}


def test_without_the_ca_trusted_the_client_fails_on_the_certificate(world: World, tmp_path: Path) -> None:
    config, forward = forward_config(world, tmp_path / "ca")
    with running_proxy(config) as p:
        # it trusts the upstreams' own CA, not the proxy's: what an agent sees before its CA variable is set
        env = agent_env(forward, SSL_CERT_FILE=str(world.ca.cert_file))
        out = subprocess.run([sys.executable, "-c", UNTRUSTED], env=env, capture_output=True, text=True, timeout=60)
        lines = out.stdout.splitlines()
        assert lines[0] == "APIConnectionError: Connection error.", out.stdout + out.stderr[-2000:]
        assert lines[-1].startswith("SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED]")
        assert "unable to get local issuer certificate" in lines[-1]
        assert p.control.journal() == []  # no request got past the TLS handshake
