"""The annotated flakeproxy.yaml `flakeproxy init` writes: every section with a comment saying what to change."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from flakeproxy.starter.answers import Answers
from flakeproxy.starter.contract import invariant_lines, scenario_lines
from flakeproxy.starter.layout import Layout


def q(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is YAML's), its `$` doubled: flakeproxy reads ${VAR}
    from the environment, and a prompt's "$5" or "${x}" is text."""
    return json.dumps(text.replace("$", "$$"), ensure_ascii=False)


def _flow(fields: dict[str, str]) -> str:
    return (
        "{"
        + ", ".join(f"{k}: {q(v) if k in ('path', 'upstream', 'host', 'mcp_tool') else v}" for k, v in fields.items())
        + "}"
    )


def _header(answers: Answers, path: str) -> list[str]:
    apis = ", ".join(dict.fromkeys(answers.providers))
    tools = f" and {len(answers.tools)} tool API{'s' if len(answers.tools) != 1 else ''}" if answers.tools else ""
    kind = {"http": "an HTTP", "command": "a command", "python": "a Python"}[answers.agent_type]
    option = "" if path == "flakeproxy.yaml" else f" -c {path}"
    return [
        f"# Written by `flakeproxy init`: {kind} agent that calls {apis}{tools}.",
        f"# Check it:  flakeproxy contract validate{option}   (cells, agent invocations, warnings)",
        f"# Run it:    flakeproxy contract run{option}        (starts the proxy; results in run.output)",
        "# Every key: `flakeproxy schema` (JSON Schema for editors) and docs/reference/config.md (the docs site).",
        'version: "2.0"',
        "",
    ]


def _env_lines(layout: Layout) -> list[str]:
    """A command agent's environment: flakeproxy starts it with its calls pointed at the proxy."""
    named = [r for r in layout.routes if r.variable is not None]
    tools = [r for r in layout.routes if r.variable is None]
    if not named and not tools:
        return []
    lines = ["  env:              # set for every run of the command; {url:NAME} is listener NAME's address"]
    lines += [f"    {r.variable}: {q(r.placeholder or r.value)}" for r in named]
    lines += [
        f"    # TOOL_BASE_URL: {q(str(r.placeholder))}   # the variable your agent reads for {r.was}" for r in tools
    ]
    return lines


def _beside(endpoint: str, name: str) -> str:
    """A URL on the agent's own host and port: its endpoint's, with the path /NAME (a trial's --endpoint moved the
    agent, the comment's reset URL stayed at 8000)."""
    parts = urlsplit(endpoint)
    return f"{parts.scheme}://{parts.netloc}/{name}"


def _agent(answers: Answers, layout: Layout) -> list[str]:
    lines = ["# How flakeproxy reaches your agent. Each episode sends it one prompt and judges the answer.", "agent:"]
    if answers.agent_type == "http":
        lines += [
            "  type: http",
            f"  endpoint: {q(answers.endpoint)}",
            '  request_template: {message: "{prompt}"}   # the JSON body it expects; {prompt} is filled in, JSON-safe',
            "  response_path: $.reply                    # where the answer is in its JSON reply (none: the body)",
            f"  # reset_endpoint: {_beside(answers.endpoint, 'reset')}   # POSTed before each episode if your agent "
            "keeps state",
        ]
    elif answers.agent_type == "command":
        lines += [
            "  type: command    # the prompt on stdin (or {prompt} in an argument), the answer on stdout",
            f"  command: [{', '.join(q(a) for a in answers.command)}]",
            *_env_lines(layout),
        ]
    else:
        lines += [
            "  type: python     # called in flakeproxy's own process with the prompt; returns the answer",
            f"  callable: {answers.callable}",
            "  # reset_function: agent:reset_state   # called before each episode if your agent keeps state",
        ]
        if answers.tool_callables:
            tools = ", ".join(answers.tool_callables)
            lines.append(f"  tools: [{tools}]   # flakeproxy wraps these to inject tool faults")
    return [*lines, "  timeout_ms: 60000", ""]


def _proxy(layout: Layout) -> list[str]:
    lines = ["# The proxy between your agent and what it calls; the runner starts it and drives it here:", "proxy:"]
    lines.append(f"  admin: {layout.admin}   # the control API; `flakeproxy init --base-port N` moves every port")
    if layout.forward is not None:
        lines += [
            f"  forward: {layout.forward}   # the agent's HTTPS_PROXY; HTTPS is decrypted for the target hosts only",
            "  # ca_dir: ~/.mitmproxy        # its CA (made on first start): `flakeproxy ca` prints it for the agent",
        ]
        if layout.forward_allow:
            lines.append(f"  forward_allow: [{', '.join(q(h) for h in layout.forward_allow)}]   # loopback/private")
    else:
        lines.append(
            "  listeners:       # one per upstream: point the agent's base URL at `listen`, flakeproxy forwards"
        )
        lines += [f"    - {_flow(lst.model_dump())}" for lst in layout.listeners]
    lines.append("")
    return lines


def _targets(layout: Layout) -> list[str]:
    lines = ["# What faults aim at: each LLM API (api: shapes errors like that provider), each tool API.", "targets:"]
    lines += [f"  {t.name}: {_flow(t.fields)}" for t in layout.targets]
    return [*lines, ""]


def render_config(answers: Answers, layout: Layout, path: str = "flakeproxy.yaml") -> str:
    """The whole annotated config text (path: where it goes, for the commands its header shows)."""
    prompts = [f"  - {q(p)}" for p in answers.prompts]
    lines = [
        *_header(answers, path),
        *_agent(answers, layout),
        *_proxy(layout),
        *_targets(layout),
        "# What you ask your agent, in every scenario: replace with real tasks (each one costs an agent run",
        "# per scenario).",
        "golden_prompts:",
        *prompts,
        "",
        "# The rules it must keep whatever breaks. Add your own: contains, regex, refusal_check, call_count, ...",
        "contract:",
        '  name: "Starter contract"',
        *invariant_lines(layout),
        "",
        *scenario_lines(answers, layout),
        "",
        "run:",
        "  seed: 7                    # the same seed, the same faults",
        "  output: flakeproxy-results # results.json, junit.xml, report.html, summary.md",
        "",
        "scoring:",
        "  min_resilience: 80         # fail (exit 1) when the resilience score (0-100) is below 80, besides any",
        "                             # critical failure; without it a contract of non-critical rules cannot fail",
        "",
    ]
    return "\n".join(lines)
