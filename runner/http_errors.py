"""What the runner says when an HTTP peer (the agent, a mock, the control API) cannot be reached."""

from __future__ import annotations

import os

import aiohttp


def why(e: aiohttp.ClientError) -> str:
    """The system's words for a refused or failed connect ("Connection refused"), not aiohttp's ("Cannot connect to
    host 127.0.0.1:8000 ssl:default [Connect call failed ('127.0.0.1', 8000)]", `ssl:default` on an http:// URL);
    aiohttp's text for anything else. A name that does not resolve is the resolver's words ("Name or service not
    known"), whose negative errno the system's table does not know."""
    if isinstance(e, aiohttp.ClientConnectorError) and e.os_error.errno:
        if e.os_error.errno > 0:
            return os.strerror(e.os_error.errno)
        if e.os_error.strerror:
            return f"{e.os_error.strerror} ({e.host})"
    return str(e)
