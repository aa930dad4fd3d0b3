"""`flakeproxy init`: write a starter flakeproxy.yaml for your own agent, and say what to change in it.

Each answer comes from its flag; on a terminal (stdin is a TTY) the ones no flag gave are asked, with the
default shown; with --yes, or when stdin is not a terminal (CI, a pipe), the defaults are taken and nothing
waits for input.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import ValidationError

from flakeproxy.errors import ConfigError
from flakeproxy.starter import DEFAULT_PROMPT, PROVIDERS, Answers, parse_tool_url, write_starter
from flakeproxy.starter.answers import ADMIN_OFFSET, DEFAULT_BASE_PORT, WIRING

T = TypeVar("T")
OPTION_OF = {
    "endpoint": "--endpoint",
    "command": "--command",
    "callable": "--callable",
    "tool_callables": "--tool-callable",
    "providers": "--provider",
    "prompts": "--prompt",
    "llm_upstreams": "--llm-upstream",
    "base_port": "--base-port",
}


def _split(values: tuple[str, ...] | str) -> list[str]:
    """Repeated and comma-separated values as one list ('a,b' 'c' -> a, b, c)."""
    items = [values] if isinstance(values, str) else list(values)
    return [part.strip() for item in items for part in item.split(",") if part.strip()]


def _providers(values: tuple[str, ...] | str) -> list[str]:
    names = _split(values)
    unknown = [n for n in names if n not in PROVIDERS]
    if unknown or not names:
        got = f"unknown {unknown[0]!r}" if unknown else "none"
        raise click.BadParameter(f"{got}; choose one or more of {', '.join(PROVIDERS)}")
    return names


def _tools(values: tuple[str, ...] | str) -> list[str]:
    urls = _split(values)
    for url in urls:
        try:
            parse_tool_url(url)
        except ValueError as e:
            raise click.BadParameter(str(e)) from None
    return urls


def _upstreams(values: tuple[str, ...], providers: list[str]) -> dict[str, str]:
    """--llm-upstream URL (for the only LLM API) or PROVIDER=URL, as {provider: URL}; URLs are checked later."""
    out: dict[str, str] = {}
    for value in values:
        name, given, url = value.partition("=")
        if given and name in PROVIDERS:
            out[name] = url
        elif len({WIRING[p].listener for p in providers}) == 1:
            out.update(dict.fromkeys(providers, value))
        else:
            raise ConfigError(
                f"--llm-upstream: {value!r} is for which of its LLM APIs? give PROVIDER=URL, PROVIDER one of "
                + ", ".join(providers)
            )
    return out


def _command(text: str) -> list[str]:
    args = shlex.split(text)
    if not args:
        raise click.BadParameter("empty; give the command line that runs your agent")
    return args


class Asker:
    """Asks on a terminal what no flag gave; elsewhere (or with --yes) takes the default."""

    def __init__(self, yes: bool) -> None:
        self.interactive = not yes and sys.stdin.isatty()

    def __call__(self, given: T | None, question: str, default: T, shown: str, proc: Callable[[str], T]) -> T:
        """The flag's value; else, on a terminal, the answer (empty: `shown`, the default as typed) through proc,
        which raises click.BadParameter to ask again; else the default."""
        if given is not None or not self.interactive:
            return default if given is None else given
        answer: T = click.prompt(question, default=shown, value_proc=proc)
        return answer


def _url(text: str) -> str:
    if not re.match(r"^https?://[^/\s]+", text.strip()):
        raise click.BadParameter("must be an http:// or https:// URL, e.g. http://127.0.0.1:8000/chat")
    return text.strip()


def _kind(text: str) -> str:
    return str(click.Choice(["http", "command", "python"])(text.strip()))


def _answers(ask: Asker, flags: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "agent_type": ask(
            flags["agent"], "How does flakeproxy reach your agent? (http, command, python)", "http", "http", _kind
        )
    }
    if out["agent_type"] == "http":
        default = "http://127.0.0.1:8000/chat"
        endpoint = _flag(_url, flags["endpoint"], "--endpoint")
        out["endpoint"] = ask(endpoint, "The URL it answers POSTs on", default, default, _url)
    elif out["agent_type"] == "command":
        command = _flag(_command, flags["command"], "--command")
        question = "The command that runs it (the prompt on stdin, the answer on stdout)"
        out["command"] = ask(command, question, ["python", "agent.py"], "python agent.py", _command)
    else:
        out["callable"] = ask(
            flags["callable"], "The MODULE:FUNCTION that takes the prompt", "agent:run", "agent:run", str.strip
        )
        question = "Tool MODULE:FUNCTIONs to wrap for tool faults (comma-separated; none: -)"
        out["tool_callables"] = ask(list(flags["tool_callables"]) or None, question, [], "-", _none_or(_split))
    given_providers = _flag(_providers, flags["providers"], "--provider")
    out["providers"] = ask(
        given_providers, f"The LLM APIs it calls ({', '.join(PROVIDERS)})", ["openai"], "openai", _providers
    )
    given_tools = _flag(_tools, flags["tools"], "--tool")
    question = "The base URLs of the tool APIs it calls (comma-separated; none: -)"
    out["tools"] = ask(given_tools, question, [], "-", _none_or(_tools))
    given_mcp = _flag(_tools, flags["mcp"], "--mcp")
    question = "The URLs of the MCP servers it calls over HTTP, e.g. http://127.0.0.1:9000/mcp (none: -)"
    out["mcp"] = ask(given_mcp, question, [], "-", _none_or(_tools))
    if out["mcp"]:
        question = "The MCP tools to break, by name (comma-separated; none: -)"
        out["mcp_tools"] = ask(list(_split(flags["mcp_tools"])) or None, question, [], "-", _none_or(_split))
    if flags["forward"] is None and ask.interactive:
        question = "Can you point its base URLs at flakeproxy? (no: it goes through HTTPS_PROXY and trusts a CA)"
        out["forward"] = not click.confirm(question, default=True)
    else:
        out["forward"] = bool(flags["forward"])
    if flags["stream"] is None and ask.interactive:
        out["stream"] = click.confirm("Does it ask its LLM for streamed (SSE) answers?", default=False)
    else:
        out["stream"] = bool(flags["stream"])
    out["llm_upstreams"] = _upstreams(flags["llm_upstreams"], out["providers"])
    out["base_port"] = flags["base_port"]
    out["prompts"] = ask(
        list(flags["prompts"]) or None,
        "A task to give it (a golden prompt)",
        [DEFAULT_PROMPT],
        DEFAULT_PROMPT,
        lambda s: [s.strip()],
    )
    return out


def _flag(proc: Callable[[Any], T], value: Any, option: str) -> T | None:
    """A flag's value through the same check as the question; a bad one is a one-line error (exit 2)."""
    if not value:
        return None
    try:
        return proc(value)
    except click.BadParameter as e:
        raise ConfigError(f"{option}: {e.message}") from None


def _none_or(proc: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    return lambda text: [] if text.strip() in ("", "-") else proc(text)


@click.command()
@click.option(
    "-c",
    "--config",
    "config_path",
    default="flakeproxy.yaml",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="Where to write it; an existing file is never overwritten.",
)
@click.option(
    "--agent",
    type=click.Choice(["http", "command", "python"]),
    help="How flakeproxy reaches your agent: an HTTP endpoint, a command, a Python callable (default http).",
)
@click.option("--endpoint", help="http: the URL it answers POSTs on (default http://127.0.0.1:8000/chat).")
@click.option(
    "--command", help='command: the command line that runs it, e.g. "node agent.js" (default python agent.py).'
)
@click.option("--callable", "callable_", help="python: MODULE:FUNCTION taking the prompt (default agent:run).")
@click.option("--tool-callable", "tool_callables", multiple=True, help="python: a tool MODULE:FUNCTION to wrap.")
@click.option(
    "--provider",
    "providers",
    multiple=True,
    help=f"An LLM API it calls: {', '.join(PROVIDERS)} (repeatable or comma-separated; default openai).",
)
@click.option(
    "--llm-upstream",
    "llm_upstreams",
    multiple=True,
    metavar="[PROVIDER=]URL",
    help="Where its LLM API really is, if not at the provider (a gateway, a local fake LLM): scheme://HOST[:PORT]; "
    "PROVIDER=URL when it calls several (default each provider's own, e.g. https://api.openai.com).",
)
@click.option("--tool", "tools", multiple=True, help="The base URL of a tool API it calls (repeatable).")
@click.option(
    "--mcp",
    "mcp",
    multiple=True,
    metavar="URL",
    help="The URL of an MCP server it calls over streamable HTTP, e.g. http://127.0.0.1:9000/mcp (repeatable): a "
    "listener in front of it; faults aim at its tools by name (--mcp-tool).",
)
@click.option(
    "--mcp-tool",
    "mcp_tools",
    multiple=True,
    metavar="NAME",
    help="An MCP tool to break, by name (repeatable): a target {listener, mcp_tool} each, and a scenario whose "
    "first tool answers isError.",
)
@click.option(
    "--forward/--base-urls",
    default=None,
    help="--forward: its URLs cannot change, it goes through HTTPS_PROXY and trusts flakeproxy's CA; "
    "--base-urls (default): its base URLs point at flakeproxy's listeners.",
)
@click.option(
    "--stream/--no-stream",
    default=None,
    help="--stream: it asks its LLM APIs for streamed (SSE) answers; the LLM targets say so (stream: true) and the "
    "matrix also cuts a stream mid-way (default --no-stream).",
)
@click.option(
    "--base-port",
    type=int,
    default=DEFAULT_BASE_PORT,
    show_default=True,
    help=f"The ports the config listens on, from N: the forward listener on N, the listeners on N+1, N+2, ..., the "
    f"control API on N+{ADMIN_OFFSET} (the default: 8700, 8701..., 8790); for ports already taken (flag only; "
    f"1 to {65535 - ADMIN_OFFSET}).",
)
@click.option("--prompt", "prompts", multiple=True, help="A golden prompt (repeatable; default a placeholder).")
@click.option("-y", "--yes", is_flag=True, help="Take the defaults for everything no flag gives; never ask.")
def init(config_path: str, yes: bool, **flags: Any) -> None:
    """Write a starter flakeproxy.yaml for your own agent: listeners and targets for the LLM and tool APIs it
    calls, a starter contract that can fail a run, and a matrix of five scenarios (six with --stream). It validates
    as written.

    Then prints what to change in the agent (its base URLs, e.g. OPENAI_BASE_URL, or HTTPS_PROXY and the CA)
    and the next command. On a terminal it asks what no flag gave; with --yes, or in CI, it takes the
    defaults. Refuses to overwrite an existing file (exit 2).
    """
    if Path(config_path).exists():
        raise ConfigError(
            f"{config_path} already exists; flakeproxy init never overwrites: remove it, or pass -c NEW.yaml"
        )
    flags["callable"] = flags.pop("callable_")
    values = _answers(Asker(yes), flags)
    try:
        answers = Answers.model_validate(values)
    except ValidationError as e:
        first = e.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "llm_upstreams"  # the one check across fields
        got = f", got {first['input']!r}" if first["loc"] else ""
        option = OPTION_OF.get(field, field)
        raise ConfigError(f"{option}: {first['msg'].removeprefix('Value error, ')}{got}") from None
    made = write_starter(answers, config_path)
    click.echo("\n".join([made.summary, "", *made.advice]))
