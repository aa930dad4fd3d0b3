"""What the runner says when an HTTP peer (the agent, a mock, the control API) cannot be reached."""

from __future__ import annotations

import os

import aiohttp


def why(e: aiohttp.ClientError) -> str:
    """The system's words for a refused or failed connect ("Connection refused"), not aiohttp's ("Cannot connect to
    host 127.0.0.1:8000 ssl:default [Connect call failed ('127.0.0.1', 8000)]", `ssl:default` on an http:// URL);
    aiohttp's text for anything else."""
    if isinstance(e, aiohttp.ClientConnectorError) and e.os_error.errno:
        return os.strerror(e.os_error.errno)
    return str(e)
