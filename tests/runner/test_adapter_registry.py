"""A new agent adapter is one config model and one module, tied by the registry (runner/agents/__init__.py):
here a toy agent that echoes, run through a whole contract run with nothing else of the runner told about it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest

from flakeproxy import ConfigError, parse_config
from flakeproxy.config.agent import AgentBase
from flakeproxy.proxycore.redact import Redactor
from flakeproxy.runner.agents import ADAPTERS, make_agent, register_adapter
from flakeproxy.runner.agents.base import Invocation, Reply
from flakeproxy.runner.engine import run_contract_async
from flakeproxy.runner.ports import EpisodePort


# -- the config model --------------------------------------------------------------------------------------------
class ToyAgent(AgentBase):
    """An agent that answers with a fixed text in front of the prompt."""

    type: Literal["toy"] = "toy"
    prefix: str


# -- the adapter module ------------------------------------------------------------------------------------------
class ToyAdapter:
    def __init__(self, config: ToyAgent) -> None:
        self.config = config
        self.invocations: list[Invocation | None] = []

    @property
    def has_reset(self) -> bool:
        return False

    def ports(self, redactor: Redactor) -> list[EpisodePort]:
        return []

    async def start(self) -> None:
        return None

    async def invoke(self, prompt: str, how: Invocation | None = None) -> Reply:
        self.invocations.append(how)
        return Reply(f"{self.config.prefix} {prompt}", 1.0)

    async def reset(self, how: Invocation | None = None) -> None:
        return None

    async def close(self) -> None:
        return None


CONFIG = """\
version: "2.0"
agent: {type: command, command: ["true"]}
golden_prompts: ["what is up?"]
contract:
  name: toy
  invariants:
    - {id: says-toy, type: regex, pattern: "^toy: what is up\\\\?$", severity: critical}
chaos_matrix:
  - name: no-chaos
"""


@pytest.fixture
def registered() -> Iterator[list[ToyAdapter]]:
    made: list[ToyAdapter] = []

    def factory(config: AgentBase, near: Path | None) -> ToyAdapter:
        assert isinstance(config, ToyAgent)
        made.append(ToyAdapter(config))
        return made[-1]

    register_adapter(ToyAgent, factory)  # what runner/agents/__init__.py does for the built-in kinds
    try:
        yield made
    finally:
        del ADAPTERS[ToyAgent]


def test_a_toy_adapter_runs_a_contract_through_the_registry(registered: list[ToyAdapter], tmp_path: Path) -> None:
    (tmp_path / "toy.yaml").write_text(CONFIG)
    config = parse_config(CONFIG, "toy.yaml")
    config = config.model_copy(update={"agent": ToyAgent(prefix="toy:")})  # the union of built-in types stays
    result = asyncio.run(run_contract_async(config, str(tmp_path / "toy.yaml"), tmp_path / "out"))
    assert result.episodes and {e.answer for e in result.episodes} == {"toy: what is up?"}
    assert [(c.invariant, c.outcome) for c in result.cells] == [("says-toy", "pass")]
    assert len(registered) == 1 and len(registered[0].invocations) == len(result.episodes)


def test_an_agent_config_no_adapter_is_registered_for_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no adapter is registered for agent config ToyAgent; known: "):
        make_agent(ToyAgent(prefix="toy:"))
