"""The few exceptions callers catch; each carries the CLI's exit code."""

from __future__ import annotations


class FlakeproxyError(Exception):
    """A user-facing error: printed as one line, no traceback."""

    exit_code = 1


class ConfigError(FlakeproxyError):
    """The config file or the command line is wrong (exit 2)."""

    exit_code = 2


class InfrastructureError(FlakeproxyError):
    """The agent or the proxy could not be reached, or died (exit 3)."""

    exit_code = 3


class BudgetCrossed(FlakeproxyError):
    """The run spent more than run.budget allows: it stopped, with its partial results and reports (exit 5)."""

    exit_code = 5
