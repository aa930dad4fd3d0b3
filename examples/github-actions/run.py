"""shards.yml on this machine: the workflow's own flakeproxy steps, run as its jobs would run them.

It serves the quickstart's world and agent (examples/quickstart: what the workflow's ./start-my-agent.sh
stands for), writes flakeproxy.yaml beside this file into OUTPUT with every loopback port swapped for a free
one, then, in OUTPUT, runs each `run:` step of the shard job that calls flakeproxy once per matrix shard
(${{ matrix.shard }} filled in) and the merge job's, and prints the merged summary. Exits with the merge's
exit code (0 pass, 1 fail, 2 config, 3 infrastructure).

    python examples/github-actions/run.py [-o OUTPUT_DIR]     (with flakeproxy installed in that Python)
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shlex
import shutil
import socket
import sys
from pathlib import Path

import yaml
from aiohttp import web

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "quickstart"))

from agent import agent_app  # noqa: E402
from world import world_app  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def flakeproxy_command() -> str:
    """The flakeproxy console command beside this Python (a venv's bin), else the one on PATH."""
    beside = Path(sys.executable).parent / "flakeproxy"
    found = str(beside) if beside.exists() else shutil.which("flakeproxy")
    if found is None:
        sys.exit("error: no flakeproxy command found; pip install flakeproxy (or . from a clone) first")
    return found


def local_config(output: Path) -> dict[int, int]:
    ports: dict[int, int] = {}

    def swap(m: re.Match[str]) -> str:
        return f"127.0.0.1:{ports.setdefault(int(m[1]), free_port())}"

    text = re.sub(r"127\.0\.0\.1:(\d+)", swap, (HERE / "flakeproxy.yaml").read_text())
    output.mkdir(parents=True, exist_ok=True)
    (output / "flakeproxy.yaml").write_text(text)
    return ports


def flakeproxy_steps(job: dict[str, object]) -> list[str]:
    steps = job["steps"]
    assert isinstance(steps, list)
    return [s["run"] for s in steps if str(s.get("run", "")).startswith("flakeproxy ")]


async def step(command: str, cwd: Path) -> int:
    args = shlex.split(command)
    print(f"$ {command}", flush=True)
    child = await asyncio.create_subprocess_exec(flakeproxy_command(), *args[1:], cwd=cwd)
    return await child.wait()


async def main(output: Path) -> int:
    flow = yaml.safe_load((HERE / "shards.yml").read_text())
    shard_job, merge_job = flow["jobs"]["shard"], flow["jobs"]["merge"]
    ports = local_config(output)
    world = web.AppRunner(world_app(), access_log=None)
    agent = web.AppRunner(agent_app(f"http://127.0.0.1:{ports[8702]}", f"http://127.0.0.1:{ports[8701]}"))
    for app, port in ((world, 9100), (agent, 8000)):
        await app.setup()
        await web.TCPSite(app, "127.0.0.1", ports[port]).start()
    try:
        for shard in shard_job["strategy"]["matrix"]["shard"]:
            for command in flakeproxy_steps(shard_job):
                code = await step(command.replace("${{ matrix.shard }}", str(shard)), output)
                if code != 0:
                    return code
        code = 0
        for command in flakeproxy_steps(merge_job):
            code = await step(command, output)
    finally:
        await agent.cleanup()
        await world.cleanup()
    summary = output / "flakeproxy-results" / "summary.md"
    if summary.exists():
        print(f"\n{summary} (the job summary):\n{summary.read_text()}")
    return code


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", default="flakeproxy-results/github-actions", help="folder for the runs")
    sys.exit(asyncio.run(main(Path(parser.parse_args().output))))
