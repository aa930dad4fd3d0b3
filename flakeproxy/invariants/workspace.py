"""Paths of file checks, resolved inside run.workspace."""

from __future__ import annotations

from pathlib import Path


def in_workspace(workspace: str | None, path: str) -> Path | None:
    """The path under the workspace (absolute paths are taken as they are); None without a workspace."""
    if workspace is None and not Path(path).is_absolute():
        return None
    return Path(workspace or "/") / path
