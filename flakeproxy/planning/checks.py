"""What a contract run will do, decided from the config alone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.errors import ConfigError
from flakeproxy.planning.plan import plan_episodes


@dataclass(frozen=True)
class ContractPlan:
    name: str
    invariants: int
    scenarios: int
    cells: int
    not_applicable: int
    episodes: int  # episodes the run will make (one reset each)
    invocations: int  # agent invocations: a conversation's episode makes one per turn
    stateful_checks: int = 0  # episodes outside the matrix that tell whether an agent with no reset keeps state


def plan_contract(config: FlakeproxyConfig, source: str = "flakeproxy.yaml") -> ContractPlan:
    """Check the config can run a contract (everything `contract run` checks before it starts anything: a
    contract, a non-empty matrix, an agent, prompts) and count its cells."""
    if config.contract is None:
        raise ConfigError(f"{source}: contract: missing; add a contract: section with name and invariants")
    if not config.matrix:
        raise ConfigError(
            f"{source}: chaos_matrix: missing; add at least one scenario, e.g. chaos_matrix: [{{name: no-chaos}}]"
        )
    if config.agent is None:
        raise ConfigError(
            f"{source}: agent: missing; contract run needs the agent to drive (type http, command or python)"
        )
    if not config.golden_prompts and not all(i.probes for i in config.contract.invariants):
        raise ConfigError(f"{source}: golden_prompts: empty; add at least one prompt (or probes on every invariant)")
    invariants = config.contract.invariants
    cells = [(inv, s) for inv in invariants for s in config.matrix]
    not_applicable = sum(1 for inv, s in cells if not inv.judged_in(s))
    if not_applicable == len(cells):
        raise ConfigError(
            f"{source}: contract.invariants: no invariant applies to any scenario (check `when`); "
            "nothing would be judged"
        )
    missing_module(config, source)
    missing_command(config, source)
    episodes = plan_episodes(config, has_reset(config)).episodes
    invocations = sum(len(e.turns) if e.turns else 1 for e in episodes)
    return ContractPlan(
        config.contract.name,
        len(invariants),
        len(config.matrix),
        len(cells),
        not_applicable,
        len(episodes),
        invocations,
        sum(1 for e in episodes if e.purpose == "stateful_check"),
    )


def has_reset(config: FlakeproxyConfig) -> bool:
    """Whether the agent can be reset before each episode (reset_endpoint, reset_command or reset_function)."""
    agent = config.agent
    return agent is not None and any(
        getattr(agent, name, None) for name in ("reset_endpoint", "reset_command", "reset_function")
    )


def resolve_paths(config: FlakeproxyConfig, config_path: str) -> FlakeproxyConfig:
    """The config with run.workspace made absolute: a relative one is relative to the config file."""
    workspace = config.run.workspace
    if workspace is None or Path(workspace).is_absolute():
        return config
    run = config.run.model_copy(update={"workspace": str(Path(config_path).resolve().parent / workspace)})
    return config.model_copy(update={"run": run})


def missing_command(config: FlakeproxyConfig, source: str) -> None:
    """A command agent whose program is neither on PATH nor a file where the run starts it: ConfigError naming it
    (a trial's `nodex` validated, and the run then stopped with exit 3). Left to the run where it cannot be told
    here: a program or cwd with a placeholder ({slot}, {url:NAME}), or a PATH of the agent's own env."""
    import os
    import shutil
    from pathlib import Path

    agent = config.agent
    if agent is None or agent.type != "command" or "PATH" in agent.env:
        return
    program = agent.command[0]
    if "{" in program or (agent.cwd is not None and "{" in agent.cwd):
        return
    if os.sep in program:
        where = Path(agent.cwd or ".") / program
        if not where.exists():
            raise ConfigError(
                f"{source}: agent.command: {program!r} is not there (from {Path(agent.cwd or '.').resolve()}, where "
                "the run starts it); fix the path, or set agent.cwd"
            )
        return
    if shutil.which(program) is None:
        raise ConfigError(
            f"{source}: agent.command: {program!r} is not a command on PATH; install it, or give its path"
        )


def missing_module(config: FlakeproxyConfig, source: str) -> None:
    """A python agent's callable, tools, registry or reset function in a module that cannot be found (from the
    config's folder and the working directory, where the run imports them): ConfigError naming it. Found without
    importing anything (the user's code runs at the run's start, not here), so a missing attribute is the run's to
    say; a dotted module is looked up by its top package (finding a submodule would run the package)."""
    import importlib.machinery
    import importlib.util
    import sys
    from pathlib import Path

    agent = config.agent
    if agent is None or agent.type != "python":
        return
    paths = [("callable", agent.callable), ("reset_function", agent.reset_function)]
    paths += [("tool_registry", agent.tool_registry), *((f"tools[{i}]", t) for i, t in enumerate(agent.tools))]
    folders = [str(Path(source).resolve().parent), str(Path.cwd())]
    for key, path in paths:
        top = path.partition(":")[0].split(".")[0] if path else ""
        if not top or top in sys.modules:
            continue
        spec = next((s for f in folders if (s := importlib.machinery.PathFinder.find_spec(top, [f]))), None)
        if spec is None and importlib.util.find_spec(top) is None:
            raise ConfigError(
                f"{source}: agent.{key}: no module named {top!r} in {folders[0]}, the working directory or the "
                f"installed packages; check the name in {path!r}, or put {top}.py beside the config"
            )
