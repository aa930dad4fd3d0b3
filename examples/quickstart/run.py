"""One command, end to end: serve the quickstart world and agent on loopback, then run
`flakeproxy contract run` on flakeproxy.yaml beside this file (it starts the proxy), print the
invariant x scenario matrix and exit with the run's exit code (0 pass, 1 fail, 2 config, 3 infra).

    python examples/quickstart/run.py [-o OUTPUT_DIR]     (with flakeproxy installed in that Python)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import sys
from pathlib import Path

from aiohttp import web

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from agent import agent_app  # noqa: E402
from world import world_app  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def serve(app: web.Application, port: int) -> web.AppRunner:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


def flakeproxy_command() -> list[str]:
    """The flakeproxy console command beside this Python (a venv's bin), else the one on PATH."""
    beside = Path(sys.executable).parent / "flakeproxy"
    found = str(beside) if beside.exists() else shutil.which("flakeproxy")
    if found is None:
        sys.exit("error: no flakeproxy command found; run bash examples/quickstart/run.sh, or pip install . first")
    return [found]


async def main(output: str | None) -> int:
    ports = {name: free_port() for name in ("WORLD", "AGENT", "LLM", "TOOLS", "ADMIN")}
    env = {**os.environ, **{f"QUICKSTART_{name}_PORT": str(port) for name, port in ports.items()}}
    world = await serve(world_app(), ports["WORLD"])
    # the agent's base URLs are the proxy's listeners, not the world itself
    agent = await serve(
        agent_app(f"http://127.0.0.1:{ports['TOOLS']}", f"http://127.0.0.1:{ports['LLM']}"), ports["AGENT"]
    )
    try:
        args = [*flakeproxy_command(), "contract", "run", "-c", str(HERE / "flakeproxy.yaml")]
        child = await asyncio.create_subprocess_exec(*args, *(["-o", output] if output else []), env=env)
        return await child.wait()
    finally:
        await agent.cleanup()
        await world.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", help="folder for results.json (default: flakeproxy-results/quickstart)")
    sys.exit(asyncio.run(main(parser.parse_args().output)))
