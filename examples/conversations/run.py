"""The conversations example end to end: serve its world (world.py, a fake LLM that needs the history) on
loopback, then run `flakeproxy contract run` on flakeproxy.yaml beside this file; flakeproxy starts the proxy
and, for each episode, one `node chat_agent.mjs` process that reads the conversation's turns on stdin, a line
each. Every loopback port of the config is swapped for a free one and chat_agent.mjs's path made absolute; the
config run and results.json land in OUTPUT (default flakeproxy-results/conversations). Exits with the run's
exit code.

    python examples/conversations/run.py [-o OUTPUT_DIR]   (with flakeproxy installed in that Python, and node)
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

from world import world_app  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def flakeproxy_command() -> list[str]:
    """The flakeproxy console command beside this Python (a venv's bin), else the one on PATH."""
    beside = Path(sys.executable).parent / "flakeproxy"
    found = str(beside) if beside.exists() else shutil.which("flakeproxy")
    if found is None:
        sys.exit("error: no flakeproxy command found; pip install flakeproxy (or . from a clone) first")
    return [found]


def local_config(output: Path) -> dict[int, int]:
    """Write flakeproxy.yaml into output with free ports, chat_agent.mjs by its absolute path; return the ports."""
    ports: dict[int, int] = {}

    def swap(m: re.Match[str]) -> str:
        return f"127.0.0.1:{ports.setdefault(int(m[1]), free_port())}"

    text = re.sub(r"127\.0\.0\.1:(\d+)", swap, (HERE / "flakeproxy.yaml").read_text())
    text = text.replace('"examples/conversations/chat_agent.mjs"', f'"{HERE / "chat_agent.mjs"}"')
    text = re.sub(r"output: [^}\n]+", f"output: {output.resolve()}", text)
    output.mkdir(parents=True, exist_ok=True)
    (output / "flakeproxy.yaml").write_text(text)
    return ports


async def main(output: Path) -> int:
    if shutil.which("node") is None:
        sys.exit("error: node is not installed; the chat agent needs Node.js 18 or later (for fetch)")
    ports = local_config(output)
    runner = web.AppRunner(world_app(), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", ports[9100]).start()
    try:
        args = [*flakeproxy_command(), "contract", "run", "-c", str(output / "flakeproxy.yaml")]
        child = await asyncio.create_subprocess_exec(*args)
        return await child.wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", default="flakeproxy-results/conversations", help="folder for results.json")
    sys.exit(asyncio.run(main(Path(parser.parse_args().output))))
