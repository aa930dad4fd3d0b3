"""Any executable as the agent: the prompt on stdin (or in an argument holding {prompt}), the answer on
stdout; a non-zero exit is an agent error; a timeout kills the whole process group."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time

from flakeproxy.config.agent import CommandAgent
from flakeproxy.errors import InfrastructureError
from flakeproxy.runner.agents.base import Invocation, Reply, clip, telling_line
from flakeproxy.runner.ports import EpisodePort


async def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill the agent's whole process group (it runs in a session of its own, so a Ctrl-C at the terminal
    does not reach it) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()


class CommandAdapter:
    def __init__(self, config: CommandAgent) -> None:
        self.config = config

    @property
    def has_reset(self) -> bool:
        return self.config.reset_command is not None

    def ports(self) -> list[EpisodePort]:
        """Its calls go through the proxy: no records of its own."""
        return []

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def _run(self, args: list[str], stdin: bytes | None, how: Invocation) -> tuple[int | None, bytes, bytes]:
        """Run one process of the agent; with a slot, {slot} and {url:NAME} filled in and its URLs in the
        environment (FLAKEPROXY_SLOT, FLAKEPROXY_URL_<NAME>): the slot's instance of the agent."""
        own = {k: how.fill(v) for k, v in self.config.env.items()}
        env = {**os.environ, **own, **how.environment()}
        try:
            process = await asyncio.create_subprocess_exec(
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=how.fill(self.config.cwd) if self.config.cwd else None,
                env=env,
                start_new_session=True,
            )
        except OSError as e:
            raise InfrastructureError(f"cannot start the agent command {args[0]!r}: {e.strerror}") from e
        try:
            out, err = await asyncio.wait_for(process.communicate(stdin), self.config.timeout_ms / 1000)
        except TimeoutError:
            await _kill(process)
            return None, b"", b""
        except BaseException:  # cancelled (Ctrl-C, SIGTERM, a sibling failed): the agent must not outlive the run
            await _kill(process)
            raise
        return process.returncode, out, err

    async def invoke(self, prompt: str, how: Invocation | None = None) -> Reply:
        on_stdin = self.config.prompt_on_stdin
        run = how or Invocation()
        args = [run.fill(a).replace("{prompt}", prompt) for a in self.config.command]  # the prompt is never filled
        start = time.monotonic()
        code, out, err = await self._run(args, prompt.encode() if on_stdin else b"", run)
        ms = (time.monotonic() - start) * 1000
        if code is None:
            return Reply(None, ms, f"agent command timed out after {self.config.timeout_ms} ms (process group killed)")
        if code != 0:
            said = telling_line(err.decode(errors="replace")) or telling_line(out.decode(errors="replace"))
            return Reply(None, ms, f"agent command exited {code}: {clip(said)}")
        return Reply(out.decode("utf-8", errors="replace").strip(), ms)

    async def reset(self, how: Invocation | None = None) -> None:
        assert self.config.reset_command
        run = how or Invocation()  # before the episode opens: its slot and URLs, no cell or trace yet
        code, _out, err = await self._run([run.fill(a) for a in self.config.reset_command], b"", run)
        if code != 0:
            raise InfrastructureError(f"agent reset_command exited {code}: {clip(err.decode(errors='replace'))}")
