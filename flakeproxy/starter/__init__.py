"""A starter flakeproxy.yaml for your own agent: what `flakeproxy init` writes, asks and prints.

    from flakeproxy.starter import Answers, write_starter
    starter = write_starter(Answers(agent_type="http", providers=["openai"]), "flakeproxy.yaml")
    print("\\n".join(starter.advice))

The config has listeners (or a forward listener) and targets for the LLM APIs and tool APIs the agent
calls, a starter contract whose critical invariant and scoring.min_resilience can fail a run, and a
matrix of five scenarios (six when it streams); it validates before it is written, and nothing is ever overwritten.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from flakeproxy.config.loader import parse_config
from flakeproxy.errors import ConfigError
from flakeproxy.starter.advice import agent_changes, next_steps
from flakeproxy.starter.answers import DEFAULT_PROMPT, PROVIDERS, Answers, parse_tool_url
from flakeproxy.starter.layout import layout
from flakeproxy.starter.render import render_config

__all__ = ["DEFAULT_PROMPT", "PROVIDERS", "Answers", "Starter", "parse_tool_url", "starter", "write_starter"]


class Starter(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    text: str
    summary: str
    advice: list[str]


def starter(answers: Answers, path: str) -> Starter:
    """The config text for these answers (validated: a failure is a bug, raised as one), and what to print."""
    plan = layout(answers)
    text = render_config(answers, plan, path)
    config = parse_config(text, path)  # it must validate as written
    assert config.contract is not None
    summary = (
        f"wrote {path}: {answers.agent_type} agent, {len(plan.llm_targets)} LLM API(s), {len(plan.tool_targets)} "
        f"tool API(s); {len(config.contract.invariants)} invariants x {len(config.matrix)} scenarios; it validates"
    )
    advice = [*agent_changes(answers, plan, path), *next_steps(answers, path, len(config.matrix))]
    return Starter(text=text, summary=summary, advice=advice)


def write_starter(answers: Answers, path: str | Path) -> Starter:
    """Python equivalent of `flakeproxy init`: write the starter config to path, never over an existing file."""
    target = Path(path)
    if target.exists() or target.is_symlink():
        raise ConfigError(f"{target} already exists; flakeproxy init never overwrites: remove it, or pass -c NEW.yaml")
    made = starter(answers, str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with target.open("x", encoding="utf-8") as f:  # exclusive: a file made meanwhile is not overwritten
            f.write(made.text)
    except FileExistsError as e:
        raise ConfigError(f"{target} already exists; flakeproxy init never overwrites: remove it") from e
    return made
