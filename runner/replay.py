"""Replay sessions through the agent: each session one episode, its recording served by the proxy per cell.

The proxy gets the session with the episode's cell (control_api.REPLAY_LOAD) before the agent is invoked, and
says afterwards what it served and which requests no recording matched. The contract's invariants judge each
replayed answer (flakeproxy.replay.score). Used by `flakeproxy replay run` and by ci's replay pillar.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.config.replays import ReplayOptions, ReplayPlan, Session
from flakeproxy.errors import ConfigError
from flakeproxy.replay.files import load_sessions
from flakeproxy.replay.score import Replayed, judge_session, judging_scenario, replay_result
from flakeproxy.results import Episode, ReplayResult, RunResult, episode_id
from flakeproxy.runner.control import ControlClient
from flakeproxy.runner.engine import ContractRun, Progress
from flakeproxy.runner.episodes import EpisodeRunner

Found = list[tuple[Session, str]]


def gather_sessions(config: FlakeproxyConfig, config_path: str, paths: tuple[str, ...] = ()) -> Found:
    """The sessions to replay: PATHs given on the command line (relative to the working directory) if any,
    else the config's replays: sessions (inline) and sources (relative to the config file)."""
    if paths:
        return load_sessions(paths, Path.cwd())
    if config.replays is None:
        raise ConfigError(f"{config_path}: replays: missing; add replays: {{sources: [sessions/]}} or pass PATH...")
    found: Found = [(s, "config") for s in config.replays.sessions]
    found += load_sessions(config.replays.sources, Path(config_path).resolve().parent)
    if not found:
        raise ConfigError(f"{config_path}: replays: no sessions found in sources {config.replays.sources}")
    return found


def check_replay(config: FlakeproxyConfig, source: str, sessions: Found) -> None:
    if config.agent is None:
        raise ConfigError(f"{source}: agent: missing; replay sends each session's input to the agent")
    if not config.proxy.listeners and not config.proxy.forward and config.proxy.admin_url is None:
        raise ConfigError(f"{source}: proxy.listeners: empty; replay serves recordings through the proxy")
    for session, origin in sessions:
        unknown = sorted({r.tool for r in session.tool_responses} - set(config.targets))
        if unknown:
            raise ConfigError(
                f"{origin}: session {session.id!r}: tool_responses tool {unknown[0]!r} is not a target; "
                f"valid: {', '.join(sorted(config.targets)) or 'none (add targets:)'}"
            )


class ReplayHook:
    """Loads each replay episode's session into its proxy cell, and reads back what the proxy served."""

    def __init__(self, control: ControlClient, options: ReplayOptions) -> None:
        self.control, self.options = control, options
        self.sessions: dict[str, Session] = {}
        self.replayed: dict[str, Replayed] = {}

    async def begun(self, episode: Episode, cell: str) -> None:
        session = self.sessions.get(episode.id)
        if session is not None:
            await self.control.load_replay(cell, ReplayPlan(session=session, options=self.options))

    async def ended(self, episode: Episode) -> None:
        if episode.id in self.sessions and episode.cell_id is not None:
            report = await self.control.end_replay(episode.cell_id)
            self.replayed[episode.id] = Replayed(report.served, report.unused, report.unmatched, report.inexact)


async def run_replays(
    run: ContractRun, runner: EpisodeRunner, new: Callable[..., Episode], sessions: Found
) -> ReplayResult:
    """Every session once, under replays.scenario (or calm: each episode carries its scenario into the proxy),
    as many at once as the run's attribution allows; judged and scored."""
    config = run.config
    options = ReplayOptions.model_validate(
        config.replays.model_dump(include=set(ReplayOptions.model_fields)) if config.replays else {}
    )
    if run.control is None:
        raise ConfigError(f"{run.config_path}: replay needs the proxy; configure proxy.listeners")
    name = config.replays.scenario if config.replays else None
    scenario = config.scenario(name) if name else None
    hook = ReplayHook(run.control, options)
    runner.hooks.append(hook)
    episodes = []
    for n, (session, _) in enumerate(sessions):
        episode = new(
            scenario=name,
            prompt=session.input,
            turns=session.turns,
            prompt_index=n,
            purpose="replay",
            label=f"replay | {session.id}",
        )
        hook.sessions[episode.id] = session
        episodes.append(episode)
    run.progress(f"replay: {len(sessions)} sessions (match {options.match}, unmatched {options.unmatched})")
    await run._episodes(runner, episodes, run._concurrency(), len(episodes))
    runner.hooks.remove(hook)
    judged = [
        judge_session(
            config, s, origin, run.done[e.id], hook.replayed.get(e.id, Replayed()), options,
            judging_scenario(config, s, scenario),
        )
        for (s, origin), e in zip(sessions, episodes, strict=True)
    ]  # fmt: skip
    return replay_result(judged, options)


class ReplayRun(ContractRun):
    def __init__(
        self, config: FlakeproxyConfig, config_path: str, output: Path | None, progress: Progress, sessions: Found
    ) -> None:
        super().__init__(config, config_path, output, progress)
        self.sessions = sessions
        self._next_id = 0

    def _new(self, **fields: object) -> Episode:
        self._next_id += 1
        return Episode.model_validate({"id": episode_id(self._next_id), **fields})

    async def _steps(self, runner: EpisodeRunner, limit: int) -> None:
        self.result.replay = await run_replays(self, runner, self._new, self.sessions)


async def run_replay_async(
    config: FlakeproxyConfig,
    config_path: str,
    output: Path | None = None,
    progress: Progress = lambda line: None,
    paths: tuple[str, ...] = (),
) -> RunResult:
    """Python equivalent of `flakeproxy replay run`: results.json with a `replay` section."""
    sessions = gather_sessions(config, config_path, paths)
    check_replay(config, config_path, sessions)
    return await ReplayRun(config, config_path, output, progress, sessions).run()
