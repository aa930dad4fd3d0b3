"""The exit codes of the commands that run a contract: one text, for `flakeproxy --help` and each command's own."""

from __future__ import annotations

#: click keeps the lines of a paragraph that starts with \b as they are.
EXIT_CODES = """\b
Exit codes: 0 pass, 1 the contract or a threshold failed, 2 the config or the
command line is wrong, 3 the infrastructure failed (agent or proxy unreachable,
an upstream failed every request of the calm scenario, or the agent answered
none of the calm scenario's episodes),
4 inconclusive (nothing failed, but a critical cell under the rate rule, or
compare, had too few replicas to pass),
5 the run budget was crossed (partial results written),
130 / 143 interrupted by Ctrl-C / SIGTERM (the results so far are written)."""
