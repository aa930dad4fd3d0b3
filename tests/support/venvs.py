"""Python packages a test runs in a process of its own because they cannot share the dev venv (too big, like
Arize Phoenix, or pinning what the dev tools need newer, like LlamaIndex's openai<3): installed once from the
package registry into a cached venv (CACHE_ROOT/folder, under a file lock, so parallel workers install it once).
A test skips, with pip's reason, only when the registry cannot be reached; any other failed install fails it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.npm import CACHE_ROOT
from tests.support.shared import locked

#: pip's words for a registry it cannot reach (anything else that fails an install is a failure, not a skip)
UNREACHABLE = (
    "NewConnectionError",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "No matching distribution found",
    "Could not find a version",
    "ConnectTimeout",
    "ProxyError",
)


def cached_venv(folder: str, *specs: str, timeout_s: float = 900) -> Path:
    """The python of CACHE_ROOT/folder, a venv holding specs (installed now, under the lock, unless a finished
    install of the same specs is there: its .installed file lists them)."""
    cache = CACHE_ROOT / folder
    python, done, wanted = cache / "bin" / "python", cache / ".installed", "\n".join(specs)
    with locked(CACHE_ROOT / f"{folder}.lock"):
        if done.exists() and done.read_text() == wanted:
            return python
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(cache)], check=True, timeout=120)
        install = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *specs],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        if install.returncode != 0:
            said = install.stderr.strip().splitlines() or ["no output"]
            if any(word in install.stderr for word in UNREACHABLE):
                pytest.skip(f"pip could not reach the registry to install {' '.join(specs)}: {said[-1]}")
            raise AssertionError(f"pip install {' '.join(specs)} failed: {' | '.join(said[-5:])}")
        done.write_text(wanted)
    return python
