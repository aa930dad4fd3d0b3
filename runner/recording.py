"""`contract run --record DIR`: one replay session file per episode, from the proxy's whole-exchange recording."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from flakeproxy.config.replays import Exchange, Session
from flakeproxy.errors import ConfigError
from flakeproxy.replay.export import fault_notes
from flakeproxy.replay.files import slug, write_session
from flakeproxy.results import Episode
from flakeproxy.runner.control import ControlClient

if TYPE_CHECKING:
    from flakeproxy.runner.engine import ContractRun


class RecordHook:
    """Turns the proxy's recording on; after each episode, writes its session (prompt, answer, exchanges)."""

    def __init__(self, control: ControlClient, folder: Path, contract: str | None) -> None:
        self.control, self.folder, self.contract = control, folder, contract
        self.written: list[Path] = []

    async def start(self) -> None:
        await self.control.record(True)

    async def begun(self, episode: Episode, cell: str) -> None:
        return None

    async def ended(self, episode: Episode) -> None:
        if episode.cell_id is None:
            return
        exchanges = await self.control.recorded(episode.cell_id)
        session = Session(
            id=slug(episode.label.replace(" | ", "-")),
            name=episode.label,
            source="flakeproxy contract run --record",
            input=episode.prompt,
            contract=self.contract,
            scenario=episode.scenario if episode.faults() else None,
            answer=episode.answer,
            turns=episode.turns,
            answers=[t.answer for t in episode.transcript] if episode.transcript is not None else None,
            exchanges=[Exchange.model_validate(x) for x in exchanges],
            notes=fault_notes(episode),
        )
        self.written.append(write_session(self.folder, session))


async def recording_hooks(run: ContractRun) -> list[RecordHook]:
    """The hook that records each episode, when the run was asked to (--record DIR)."""
    if run.record is None:
        return []
    if run.control is None:
        raise ConfigError(f"{run.config_path}: --record needs the proxy (proxy.listeners): it records on the wire")
    hook = RecordHook(run.control, run.record, run.config.contract.name if run.config.contract else None)
    await hook.start()
    return [hook]
