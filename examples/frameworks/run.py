"""The LangGraph example, end to end: serve the world (fake LLM + market-data API) and the LangGraph agent
on loopback, then run `flakeproxy contract run` on flakeproxy.yaml beside this file (it starts the proxy),
print the matrix and exit with the run's exit code (0 pass, 1 fail, 2 config, 3 infra). Every loopback port
of the config is swapped for a free one; the config run is OUTPUT/flakeproxy.yaml.

    pip install langgraph langchain-openai
    python examples/frameworks/run.py [-o OUTPUT_DIR] [--no-stream] [-c CONFIG]
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

try:
    from langgraph_agent import agent_app
except ImportError as e:  # the framework is the user's to install, not a dependency of flakeproxy
    sys.exit(f"error: this example needs LangGraph ({e.name} is missing): pip install langgraph langchain-openai")


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
        sys.exit("error: no flakeproxy command found; pip install flakeproxy (or . from a clone) first")
    return [found]


def local_config(config: Path, output: Path) -> dict[int, int]:
    """Write the config with each 127.0.0.1 port swapped for a free one; return the mapping."""
    ports: dict[int, int] = {}

    def swap(m: re.Match[str]) -> str:
        return f"127.0.0.1:{ports.setdefault(int(m[1]), free_port())}"

    text = re.sub(r"127\.0\.0\.1:(\d+)", swap, config.read_text())
    text = re.sub(r"output: [^}\n]+", f"output: {output.resolve()}", text)
    output.mkdir(parents=True, exist_ok=True)
    (output / "flakeproxy.yaml").write_text(text)
    return ports


async def main(config: Path, output: Path, stream: bool) -> int:
    ports = local_config(config, output)
    world = await serve(world_app(), ports[9200])
    # the agent's base URLs are the proxy's listeners (8712 tools, 8711 llm), not the world itself
    app = agent_app(f"http://127.0.0.1:{ports[8712]}", f"http://127.0.0.1:{ports[8711]}", stream=stream)
    agent = await serve(app, ports[8100])
    try:
        args = [*flakeproxy_command(), "contract", "run", "-c", str(output / "flakeproxy.yaml")]
        child = await asyncio.create_subprocess_exec(*args)
        return await child.wait()
    finally:
        await agent.cleanup()
        await world.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", default="flakeproxy-results/frameworks", help="folder for results.json")
    parser.add_argument("-c", "--config", default=str(HERE / "flakeproxy.yaml"), help="the config to run")
    parser.add_argument("--no-stream", action="store_true", help="ChatOpenAI without streaming")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(Path(args.config), Path(args.output), stream=not args.no_stream)))
