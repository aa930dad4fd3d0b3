"""SIGTERM and SIGINT held while a run command starts (its imports, its config, its proxy child): a signal then is
remembered, not raised in the middle of an import, and run_until_signal (cli/running.py) stops the run with it as
soon as the run is under way, so the run writes its record as any stopped run does (a trial's Ctrl-C 0.2-0.6 s after
launch left the previous run's results.json in place). entry() holds them for the run commands (RUN_COMMANDS) as
the process starts; a run command asks for the same hold with `hold()`. Only `signal` is imported here."""

from __future__ import annotations

import signal
from types import FrameType

#: the commands whose early signals are held: they write a record of the run, which an early stop must replace
RUN_COMMANDS = (("contract", "run"), ("ci",))


class HeldSignals:
    def __init__(self) -> None:
        self.pending: list[str] = []
        self.mark = 0  # where hold_again() started holding again
        self._before = {sig: signal.signal(sig, self._hold) for sig in (signal.SIGTERM, signal.SIGINT)}

    def _hold(self, signum: int, frame: FrameType | None) -> None:
        self.pending.append(signal.Signals(signum).name)

    def hold_again(self) -> None:
        """Hold them again, once an event loop that handled them while the run ran has given the defaults back:
        the run's files are written after it (a signal then would kill the process, or raise in the middle of
        writing them). `late()` is what comes from now on."""
        self.mark = len(self.pending)
        for sig in self._before:
            signal.signal(sig, self._hold)

    def late(self) -> list[str]:
        """The signals held since hold_again()."""
        return self.pending[self.mark :]

    def release(self) -> None:
        """The handlers as they were (a signal still pending is run_until_signal's to act on)."""
        global _current
        for sig, handler in self._before.items():
            signal.signal(sig, handler)
        if _current is self:
            _current = None


_current: HeldSignals | None = None


def hold() -> HeldSignals:
    """The signals held for this run command: since the process started (entry()), else from now."""
    global _current
    if _current is None:
        _current = HeldSignals()
    return _current


def is_run_command(argv: list[str]) -> bool:
    """argv (without the program) names one of RUN_COMMANDS."""
    words = [a for a in argv if not a.startswith("-")]
    return any(tuple(words[: len(command)]) == command for command in RUN_COMMANDS)
