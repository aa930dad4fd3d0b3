"""A run stopped by an exception no one foresaw: one line for the user (exit 3), the traceback in a file."""

from __future__ import annotations

import contextlib
import traceback
from pathlib import Path

from flakeproxy.errors import InfrastructureError
from flakeproxy.safe_text import escape_surrogates


def crashed(error: BaseException, output: Path | None) -> InfrastructureError:
    """The one-line error (exit 3) for an exception no one foresaw; its traceback goes to output/crash.txt."""
    what = " ".join(f"{type(error).__name__}: {error}".split())[:300]
    where = ""
    if output is not None:
        with contextlib.suppress(OSError):  # the one line matters more than the file
            output.mkdir(parents=True, exist_ok=True)
            (output / "crash.txt").write_text("".join(traceback.format_exception(error)), "utf-8", "backslashreplace")
            where = f"; the results so far are in {output / 'results.json'}, the traceback in {output / 'crash.txt'}"
    return InfrastructureError(f"the run stopped on an unexpected error ({escape_surrogates(what)}){where}")
