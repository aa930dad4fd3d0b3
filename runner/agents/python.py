"""A Python callable as the agent (sync or async). Tool faults apply by wrapping the configured tool
callables (or a ToolRegistry mapping), with the same fault decisions the proxy makes."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import importlib
import inspect
import json
import sys
import threading
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flakeproxy.config.agent import PythonAgent
from flakeproxy.config.scenario import Scenario
from flakeproxy.errors import ConfigError
from flakeproxy.proxycore.injector import Injector
from flakeproxy.proxycore.redact import DEFAULT, Redactor
from flakeproxy.runner.agents.base import Invocation, Reply
from flakeproxy.runner.agents.otel import otel_context
from flakeproxy.runner.ports import EpisodePort, Opening, Records
from flakeproxy.wire.applying import Applying, Close
from flakeproxy.wire.call import CURRENT_CELL, CURRENT_URLS, IN_PROCESS, Call, TargetSpec
from flakeproxy.wire.coverage import Coverage
from flakeproxy.wire.record import fault_json
from flakeproxy.wire.trace import CURRENT_TRACE


async def in_daemon_thread(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """fn(*args, **kwargs) in a daemon thread of its own, in a copy of this context (as asyncio.to_thread runs it).
    A call a timeout gave up on keeps running, but nothing waits for it: asyncio.to_thread's executor threads are
    joined when the loop shuts down and when the interpreter exits, so an agent whose tool hung held a finished run
    for minutes, before its reports, with Ctrl-C and SIGTERM held too (a trial)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    threading.Thread(target=_work, args=(loop, [future], call), name="flakeproxy-agent-call", daemon=True).start()
    try:
        return await future
    finally:
        del future  # an exception's traceback holds this frame: not its future too (a cycle only gc breaks)


def _work(loop: asyncio.AbstractEventLoop, handed: list[asyncio.Future[Any]], call: Callable[[], Any]) -> None:
    """The thread: the call, and its result or exception handed to the loop. An exception's traceback holds this
    frame, so nothing that holds the exception may stay named here (the future, the exception itself): that would be
    a cycle only gc breaks, and the sockets of an urllib HTTPError the agent raised closed in a later gc.collect()."""
    future = handed.pop()
    try:
        result = call()
    except BaseException as e:  # the agent's own: the awaiting side gets it
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody is waiting
            loop.call_soon_threadsafe(_settle, future, None, e)
        del future
        return
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(_settle, future, result, None)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # given up on (timed out, cancelled)
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class ToolFaultError(RuntimeError):
    """What a wrapped tool raises when a fault answers with an error status."""


#: Whether import_object has run: this process then holds the user's code (an agent, its tools, a reset function),
#: whose objects may count on the interpreter's teardown at exit (cli/running.py end_unless_user_code).
imported_user_code = False


def import_object(path: str, near: Path | None = None) -> Any:
    """MODULE:ATTRIBUTE (attribute may be dotted); the config's folder and the cwd are importable."""
    global imported_user_code
    imported_user_code = True
    for folder in filter(None, [near, Path.cwd()]):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    module_name, _, attr = path.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"cannot import {path}: {e}; check the module is on the path and the name is right") from e
    return obj


def _json_or_text(text: str) -> Any:
    """A reply or a rewritten answer as the tool gives it back: its JSON if it is JSON, else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def apply_to_result(applying: Applying, name: str, result: Any) -> Any:
    """What a tool returns (or raises) under a fault's action; the applying notes what it changed (the same
    notion of "applied" as the proxy's)."""
    stop = applying.stop()
    if isinstance(stop, Close):
        raise ConnectionResetError(f"flakeproxy fault: connection to tool {name} reset")
    if stop is not None:
        body = stop.body.decode("utf-8", errors="replace")
        if stop.status >= 400:
            raise ToolFaultError(f"tool {name} failed: HTTP {stop.status}: {body}")
        return _json_or_text(body)
    if not applying.unstreamed():  # a tool's answer is never an event stream
        return result
    new = applying.answer((result if isinstance(result, str) else json.dumps(result)).encode())
    if new is None:
        return result
    out = new.body.decode("utf-8", errors="replace")
    return out if isinstance(result, str) else _json_or_text(out)


def _applied(applying: Applying | None, name: str, result: Any) -> Any:
    """The tool's result under the action; the coverage notes whether it changed anything."""
    if applying is None:
        return result
    try:
        return apply_to_result(applying, name, result)
    finally:
        applying.coverage.finish()


@dataclass
class ToolCall:
    """One wrapped tool call as the journal keeps it: the entry, and the fault decided on it with its coverage."""

    entry: dict[str, Any]
    decided: dict[str, Any] | None = None
    coverage: Coverage | None = None

    def to_json(self) -> dict[str, Any]:
        fault = fault_json(self.decided, self.coverage) if self.decided is not None else None
        return {**self.entry, "fault": fault}


class ToolPort:
    """The wrapped tools of a python agent as an episode port: their own injector opens the episode with its
    scenario; their journal entries (each redacted as its call was recorded) are the episode's records, and the
    secret values those calls carried are scrubbed from the texts it is handed at the end."""

    def __init__(self, adapter: PythonAdapter) -> None:
        self.adapter = adapter

    async def begin(self, opening: Opening) -> str | None:
        self.adapter.open_episode(opening.id, opening.label, opening.scenario, opening.seed)
        return None

    async def turn(self, episode: str, turn: int) -> None:
        assert self.adapter.injector is not None
        if episode in self.adapter.injector.episodes:
            self.adapter.injector.set_turn(episode, turn)

    async def end(self, episode: str, texts: list[str | None]) -> Records:
        secrets = self.adapter.take_secrets(episode)
        scrubbed = [None if t is None else self.adapter.redactor.literals(t, secrets) for t in texts]
        return Records(self.adapter.episode_journal(episode), texts=scrubbed, secrets=secrets)


#: what a python agent's callable may ask for by name besides the prompt (PythonAdapter._conversation_arguments)
OFFERED = ("history", "session", "turn")


def _check_parameters(fn: Callable[..., Any], path: str) -> None:
    """A callable whose parameters flakeproxy cannot fill is a config error now, not a TypeError on every turn."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # no readable signature: called with the prompt alone
        return
    required = [
        p.name
        for p in parameters[1:]
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in OFFERED
    ]
    if not parameters or required:
        what = f"parameter {required[0]!r}" if required else "no parameter for the prompt"
        raise ConfigError(
            f"agent.callable {path}: {what} flakeproxy cannot fill; it passes the prompt first, then by name any "
            f"of {', '.join(OFFERED)} (give other parameters a default)"
        )


class PythonAdapter:
    def __init__(self, config: PythonAgent, near: Path | None = None) -> None:
        self.config = config
        self.near = near
        self.fn: Callable[..., Any] | None = None
        self.injector: Injector | None = None
        self.journal: list[ToolCall] = []
        self.redactor = DEFAULT  # the config's, once the engine asked for the ports
        #: episode -> the secret values its tool calls carried (in memory only, until the episode ends)
        self.secrets: dict[str, set[str]] = {}
        self._recording = threading.Lock()  # sync tools record from the agent's worker threads

    @property
    def has_reset(self) -> bool:
        return False

    async def start(self) -> None:
        self.fn = import_object(self.config.callable, self.near)
        _check_parameters(self.fn, self.config.callable)
        names = self._wrap_tools()
        self.injector = Injector({name: TargetSpec("python") for name in names})

    def _wrap_tools(self) -> list[str]:
        names = []
        for path in self.config.tools:
            module_name, _, attr = path.partition(":")
            owner = import_object(f"{module_name}:{attr.rsplit('.', 1)[0]}") if "." in attr else None
            owner = owner or importlib.import_module(module_name)
            name = attr.rsplit(".", 1)[-1]
            setattr(owner, name, self._wrap(name, getattr(owner, name)))
            names.append(name)
        if self.config.tool_registry:
            registry = import_object(self.config.tool_registry, self.near)
            if not isinstance(registry, MutableMapping):
                raise ConfigError(f"tool_registry {self.config.tool_registry} must be a mapping of name -> callable")
            for name in list(registry):
                registry[name] = self._wrap(name, registry[name])
                names.append(name)
        return names

    def _wrap(self, name: str, tool: Callable[..., Any]) -> Callable[..., Any]:
        if getattr(tool, "__flakeproxy_wrapped__", False):
            return tool

        def decide(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Applying | None:
            assert self.injector is not None
            body = json.dumps({"args": args, "kwargs": kwargs}, default=str).encode()
            call = Call("python", "CALL", f"{IN_PROCESS}{name}", name, {}, body, (name,))
            cell = CURRENT_CELL.get()
            decision = self.injector.decide(call, cell)
            turn = self.injector.turn_of(cell)
            entry = self._redacted(
                cell,
                {
                    "episode": cell,
                    **({"turn": turn} if turn is not None else {}),
                    "targets": [name],
                    "method": "CALL",
                    "url": call.url,
                    "request_body": body.decode(),
                    "started_at": time.time(),
                    "response_headers": {},
                    "latency_ms": 0.0,
                },
            )
            coverage = Coverage(decision.kind) if decision else None
            self.journal.append(ToolCall(entry, decision.record() if decision else None, coverage))
            return Applying(decision.action, coverage) if decision and coverage else None

        if inspect.iscoroutinefunction(tool):

            @functools.wraps(tool)
            async def async_wrapped(*args: Any, **kwargs: Any) -> Any:
                applying = decide(args, kwargs)
                if applying is not None and (delay_ms := applying.delay_ms()):
                    await asyncio.sleep(delay_ms / 1000)
                result = None if applying is not None and not applying.forwards else await tool(*args, **kwargs)
                return _applied(applying, name, result)

            async_wrapped.__flakeproxy_wrapped__ = True  # type: ignore[attr-defined]
            return async_wrapped

        @functools.wraps(tool)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            applying = decide(args, kwargs)
            if applying is not None and (delay_ms := applying.delay_ms()):
                time.sleep(delay_ms / 1000)  # as the slow tool would: a sync agent's thread, or an async one's loop
            result = None if applying is not None and not applying.forwards else tool(*args, **kwargs)
            return _applied(applying, name, result)

        wrapped.__flakeproxy_wrapped__ = True  # type: ignore[attr-defined]
        return wrapped

    def ports(self, redactor: Redactor) -> list[EpisodePort]:
        """The wrapped tools keep a journal of their own: one port. Each call's entry is redacted with `redactor`
        (the config's) as the call is recorded, so no raw secret is kept."""
        self.redactor = redactor
        return [ToolPort(self)]

    def _redacted(self, episode: str | None, entry: dict[str, Any]) -> dict[str, Any]:
        """A tool call's entry redacted once, where it is made: also scrubbed of the secrets its episode's earlier
        calls carried; those it carries join them (in memory, until the episode ends)."""
        with self._recording:
            found = self.secrets.setdefault(episode, set()) if episode is not None else set()
            return self.redactor.entry(entry, found)

    def take_secrets(self, episode: str) -> frozenset[str]:
        """The secret values an episode's tool calls carried; forgotten here (its port hands them over at its end)."""
        with self._recording:
            return frozenset(self.secrets.pop(episode, ()))

    def episode_journal(self, episode: str) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.journal if c.entry["episode"] == episode]

    def open_episode(self, episode: str, label: str, scenario: Scenario | None = None, seed: int = 0) -> None:
        """The episode's own scenario for the wrapped tools, fault counters (after_calls, times) per episode;
        label seeds its decisions as in the proxy."""
        assert self.injector is not None
        self.injector.episodes.pop(episode, None)
        self.take_secrets(episode)  # an id used again starts with none
        self.injector.begin_episode(label=label, episode_id=episode, scenario=scenario, seed=seed)

    async def invoke(self, prompt: str, how: Invocation | None = None) -> Reply:
        assert self.fn is not None
        assert self.injector is not None
        run = how or Invocation()
        cell = run.cell
        if cell is not None and cell not in self.injector.episodes:
            self.injector.begin_episode(label=cell, episode_id=cell)  # counters (after_calls, times) per episode
        # copied into the worker thread's context by in_daemon_thread (and into the task of an async agent)
        CURRENT_CELL.set(cell)
        CURRENT_TRACE.set(run.trace)
        CURRENT_URLS.set(dict(run.urls))
        start = time.monotonic()
        try:
            with otel_context(run.trace):
                extra = self._conversation_arguments(run)
                if inspect.iscoroutinefunction(self.fn):
                    result = await asyncio.wait_for(self.fn(prompt, **extra), self.config.timeout_ms / 1000)
                else:
                    call = in_daemon_thread(self.fn, prompt, **extra)
                    result = await asyncio.wait_for(call, self.config.timeout_ms / 1000)
        except TimeoutError:
            ms = (time.monotonic() - start) * 1000
            return Reply(None, ms, self._timed_out(ms), lost=True)
        except Exception as e:  # the agent's own exception is its error outcome, with its message
            return Reply(None, (time.monotonic() - start) * 1000, f"agent raised {type(e).__name__}: {e}")
        ms = (time.monotonic() - start) * 1000
        if self._late(ms):  # an async agent that held its loop past the bound, then answered
            return Reply(None, ms, self._timed_out(ms), late=True)  # as any agent's late answer is: it finished
        if result is None:  # no answer: not the text "null", which completes and output_not_empty would pass
            return Reply(None, ms, "agent returned None, not an answer (the callable must return its answer's text)")
        return Reply(result if isinstance(result, str) else json.dumps(result), ms)

    def _late(self, ms: float) -> bool:
        """Past timeout_ms by more than the loop's own lag: something held the event loop."""
        return ms > self.config.timeout_ms + 500

    def _timed_out(self, ms: float) -> str:
        """The timeout, and, when it could act only long after it was due, why: the agent held the event loop."""
        said = f"agent timed out after {self.config.timeout_ms} ms"
        if self._late(ms):
            said += (
                f" (only seen after {ms:.0f} ms: something blocked the event loop, such as time.sleep or a blocking "
                "call in an async agent or its tools)"
            )
        return said

    def _conversation_arguments(self, run: Invocation) -> dict[str, Any]:
        """What the callable asks for besides the prompt, by the names of its parameters: `history` (the earlier
        turns as a list of {role, content} messages, [] on the first), `session` (the episode's session id, fresh
        per episode) and `turn` (1 = the first). A one-argument callable gets the prompt alone, as always."""
        assert self.fn is not None
        try:
            names = set(inspect.signature(self.fn).parameters)
        except (TypeError, ValueError):  # a builtin or C callable without a readable signature
            return {}
        offered: dict[str, Any] = {"history": [dict(m) for m in run.history], "session": run.session, "turn": run.turn}
        assert set(offered) == set(OFFERED)
        return {name: value for name, value in offered.items() if name in names}

    async def reset(self, how: Invocation | None = None) -> None:
        return None

    async def close(self) -> None:
        return None
