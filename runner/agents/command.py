"""Any executable as the agent: the prompt on stdin (or in an argument holding {prompt}), the answer on
stdout; a non-zero exit is an agent error; a timeout kills the whole process group.

Conversations: one process per turn (FLAKEPROXY_SESSION names the episode's session), or with
conversation: one_process, one process per episode reading a turn per line and answering a line per turn."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass, field

from flakeproxy.config.agent import CommandAgent
from flakeproxy.errors import InfrastructureError
from flakeproxy.proxycore.redact import Redactor
from flakeproxy.runner.agents.base import Invocation, Reply, clip, telling_line
from flakeproxy.runner.ports import EpisodePort


async def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill the agent's whole process group (it runs in a session of its own, so a Ctrl-C at the terminal
    does not reach it) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()


#: The most of a one_process agent's error output kept (its tail), to say why it stopped.
STDERR_TAIL_BYTES = 16384


@dataclass
class Session:
    """A one_process agent's process for one episode, and the tail of what it wrote on stderr."""

    process: asyncio.subprocess.Process
    stderr: bytearray = field(default_factory=bytearray)
    drain: asyncio.Task[None] | None = None

    async def read_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(4096):
            self.stderr = (self.stderr + chunk)[-STDERR_TAIL_BYTES:]


class CommandAdapter:
    def __init__(self, config: CommandAgent) -> None:
        self.config = config
        self.sessions: dict[str, Session] = {}  # one_process: episode session id -> its process
        self.stopped: dict[str, str] = {}  # one_process: session id -> why its process is gone before the end

    @property
    def has_reset(self) -> bool:
        return self.config.reset_command is not None

    def ports(self, redactor: Redactor) -> list[EpisodePort]:
        """Its calls go through the proxy: no records of its own."""
        return []

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        """The run is over: a session still open is one an interrupted episode left (each episode ends its own),
        so its process group is killed at once."""
        for key in list(self.sessions):
            await self._end(key, kill=True)

    async def _spawn(self, args: list[str], how: Invocation) -> asyncio.subprocess.Process:
        """Start one process of the agent; with a slot, {slot} and {url:NAME} filled in and its URLs in the
        environment (FLAKEPROXY_SLOT, FLAKEPROXY_URL_<NAME>): the slot's instance of the agent."""
        own = {k: how.fill(v) for k, v in self.config.env.items()}
        env = {**os.environ, **own, **how.environment()}
        try:
            return await asyncio.create_subprocess_exec(
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

    async def _run(self, args: list[str], stdin: bytes | None, how: Invocation) -> tuple[int | None, bytes, bytes]:
        """Run one process of the agent to its end: (exit code, None on a timeout; stdout; stderr)."""
        process = await self._spawn(args, how)
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
        if self.config.conversation == "one_process":
            return await self._turn(prompt, run)
        args = [run.fill(a).replace("{prompt}", prompt) for a in self.config.command]  # the prompt is never filled
        start = time.monotonic()
        code, out, err = await self._run(args, prompt.encode() if on_stdin else b"", run)
        ms = (time.monotonic() - start) * 1000
        if code is None:
            why = f"agent command timed out after {self.config.timeout_ms} ms (process group killed)"
            return Reply(None, ms, why, lost=True)
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

    async def _turn(self, prompt: str, how: Invocation) -> Reply:
        """One turn of a one_process agent: the turn as one line on its stdin, its answer the next line of stdout
        (the process starts on the episode's first turn)."""
        key = how.session or how.cell or ""
        if key in self.stopped:  # a new process would not know the conversation: this turn has nowhere to go
            return Reply(None, 0.0, f"{self.stopped[key]}; turn {how.turn} was not sent", lost=True)
        start = time.monotonic()
        session = self.sessions.get(key)
        if session is None:
            process = await self._spawn([how.fill(a) for a in self.config.command], how)
            session = self.sessions[key] = Session(process)
            session.drain = asyncio.create_task(session.read_stderr())
        stdin, stdout = session.process.stdin, session.process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write((" ".join(prompt.splitlines()) + "\n").encode())
            await stdin.drain()
            line = await asyncio.wait_for(stdout.readline(), self.config.timeout_ms / 1000)
        except TimeoutError:
            await self._end(key, kill=True)
            why = f"agent command gave no answer line to turn {how.turn} within {self.config.timeout_ms} ms"
            self.stopped[key] = f"{why} (process group killed)"
            return Reply(None, (time.monotonic() - start) * 1000, self.stopped[key], lost=True)
        except (BrokenPipeError, ConnectionResetError):
            line = b""
        except BaseException as e:  # cancelled (Ctrl-C, SIGTERM, the run stopping): no 2 s of grace
            await self._end(key, kill=isinstance(e, asyncio.CancelledError))
            raise
        if not line:  # it exited (or closed its stdout) instead of answering
            code = await self._end(key)
            said = telling_line(bytes(session.stderr).decode(errors="replace"))
            self.stopped[key] = f"agent command exited {code} before answering turn {how.turn}: {clip(said)}"
            return Reply(None, (time.monotonic() - start) * 1000, self.stopped[key], lost=True)
        return Reply(line.decode("utf-8", errors="replace").rstrip("\r\n"), (time.monotonic() - start) * 1000)

    async def end_session(self, how: Invocation) -> None:
        """After an episode's last turn: a one_process agent's stdin is closed; it has 2 s to exit, then is killed."""
        key = how.session or how.cell or ""
        self.stopped.pop(key, None)
        await self._end(key)

    async def _end(self, key: str, kill: bool = False) -> int | None:
        """Close a session's process: stdin closed, 2 s to exit, then (or at once with kill) its group killed."""
        session = self.sessions.pop(key, None)
        if session is None:
            return None
        if session.process.stdin is not None and not session.process.stdin.is_closing():
            session.process.stdin.close()
        try:
            await asyncio.wait_for(session.process.wait(), 0 if kill else 2)
        except TimeoutError:
            await _kill(session.process)
        if session.drain is not None:
            await session.drain
        return session.process.returncode
