"""One command, end to end: serve the quickstart world and agent on loopback, then run
`flakeproxy contract run` on flakeproxy.yaml beside this file (it starts the proxy), print the
invariant x scenario matrix and exit with the run's exit code (0 pass, 1 fail, 2 config, 3 infra).
Every loopback port of the config is swapped for a free one; the config run is OUTPUT/flakeproxy.yaml.

    python examples/quickstart/run.py [-o OUTPUT_DIR]     (with flakeproxy installed in that Python)
"""

from __future__ import annotations

import argparse
import asyncio
import re
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


def local_config(output: Path) -> dict[int, int]:
    """Write flakeproxy.yaml with each 127.0.0.1 port swapped for a free one; return the mapping."""
    ports: dict[int, int] = {}

    def swap(m: re.Match[str]) -> str:
        return f"127.0.0.1:{ports.setdefault(int(m[1]), free_port())}"

    text = re.sub(r"127\.0\.0\.1:(\d+)", swap, (HERE / "flakeproxy.yaml").read_text())
    text = re.sub(r"output: [^}\n]+", f"output: {output.resolve()}", text)
    output.mkdir(parents=True, exist_ok=True)
    (output / "flakeproxy.yaml").write_text(text)
    return ports


async def main(output: Path) -> int:
    ports = local_config(output)
    world = await serve(world_app(), ports[9100])
    # the agent's base URLs are the proxy's listeners (8702 tools, 8701 llm), not the world itself
    agent = await serve(agent_app(f"http://127.0.0.1:{ports[8702]}", f"http://127.0.0.1:{ports[8701]}"), ports[8000])
    try:
        args = [*flakeproxy_command(), "contract", "run", "-c", str(output / "flakeproxy.yaml")]
        child = await asyncio.create_subprocess_exec(*args)
        return await child.wait()
    finally:
        await agent.cleanup()
        await world.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", default="flakeproxy-results/quickstart", help="folder for results.json")
    sys.exit(asyncio.run(main(Path(parser.parse_args().output))))
