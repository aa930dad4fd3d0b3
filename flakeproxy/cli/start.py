"""The `flakeproxy` program's first step (console script and `python -m flakeproxy`): a run command holds Ctrl-C
and SIGTERM from here, before the CLI's imports (click and the command layer, ~35 ms), so that one that comes
while the program starts is acted on once the run is under way, which then writes its record (cli/held.py), not
a KeyboardInterrupt traceback over the previous run's results. Nothing heavier than the signal module is imported
before that."""

from __future__ import annotations

import sys

from flakeproxy.cli.held import hold, is_run_command


def entry() -> None:
    if is_run_command(sys.argv[1:]):
        hold()
    from flakeproxy.cli.main import entry as run

    run()
