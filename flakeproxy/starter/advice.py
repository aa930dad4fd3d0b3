"""What `flakeproxy init` prints after writing: what to change in the agent, and the next command."""

from __future__ import annotations

from flakeproxy.starter.answers import Answers
from flakeproxy.starter.layout import CA_BUNDLE, CA_CERT, Layout


def _ca_steps(config: str) -> list[str]:
    return [
        "  Make the CA files the agent trusts (once; the proxy keeps its CA in proxy.ca_dir):",
        f"    flakeproxy ca -c {config} --bundle --out {CA_BUNDLE}   # public roots + flakeproxy's CA",
        f"    flakeproxy ca -c {config} --out {CA_CERT}              # flakeproxy's CA alone (Node)",
    ]


def agent_changes(answers: Answers, layout: Layout, config: str) -> list[str]:
    """How the agent's calls go through flakeproxy, for its type and mode."""
    named = [r for r in layout.routes if r.variable is not None]
    tools = [r for r in layout.routes if r.variable is None]
    if answers.agent_type == "command":
        lines = ["Your agent: flakeproxy starts the command with these set (agent.env); it only has to read them:"]
        lines += [
            f"  {r.variable}={r.placeholder or r.value}" + (f"  ({r.value})" if r.placeholder else "") for r in named
        ]
    elif answers.agent_type == "python":
        lines = ["Your agent runs inside flakeproxy's process: set these in the shell you run flakeproxy from:"]
        lines += [f"  export {r.variable}={r.value}" for r in named]
    else:
        lines = ["Your agent: start it with these set, so its calls go through flakeproxy:"]
        lines += [f"  {r.variable}={r.value}" for r in named]
    if layout.forward is not None:
        lines += _ca_steps(config)
        lines.append(
            "  (SSL_CERT_FILE: Python's httpx, openai, anthropic; REQUESTS_CA_BUNDLE: requests; "
            "NODE_EXTRA_CA_CERTS: Node)"
        )
    for r in tools:
        lines.append(f"  its base URL for {r.was}: {r.value}")
    if answers.mcp and not answers.mcp_tools:
        lines.append(
            "  its MCP tools are not targets yet: name the ones to break with --mcp-tool NAME, or add "
            "{listener: ..., mcp_tool: NAME} targets (a fault on the server itself hits its handshake too)"
        )
    if answers.agent_type == "command" and tools:
        lines.append("  (the command also gets FLAKEPROXY_URL_<LISTENER> for each listener)")
    return lines


def next_steps(answers: Answers, config: str, scenarios: int) -> list[str]:
    """Edit what init could not know, then validate and run (its `scenarios`)."""
    edit = {
        "http": f"it must answer POSTs at {answers.endpoint}; set request_template and response_path to its JSON",
        "command": "it reads the prompt on stdin and prints the answer",
        "python": f"{answers.callable} takes the prompt and returns the answer",
    }[answers.agent_type]
    option = "" if config == "flakeproxy.yaml" else f" -c {config}"
    return [
        f"Then edit {config}: {edit}; golden_prompts to real tasks; the contract to your rules.",
        "Next:",
        f"  flakeproxy contract validate{option}   # what the run will cost, and warnings",
        f"  flakeproxy contract run{option}        # starts the proxy, runs {scenarios} scenarios, "
        "writes flakeproxy-results/",
    ]
