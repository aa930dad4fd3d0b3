#!/usr/bin/env bash
# The quickstart in one command: set up .venv (scripts/bootstrap), then serve a fake LLM, a market-data
# API and a careful agent on loopback and run the quickstart contract through flakeproxy's proxy.
# Extra arguments go to run.py (e.g. -o DIR).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/bootstrap
exec .venv/bin/python examples/quickstart/run.py "$@"
