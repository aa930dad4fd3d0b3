"""The real proxy (mitmproxy + flakeproxy addon + control API) on free loopback ports, and a synchronous control
client for the tests: `call` sends any method and path (the tests of the HTTP surface pin its wire paths);
`send` and the helpers use flakeproxy.control_api's routes and bodies, as the runner's client does."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import yaml

from flakeproxy import control_api as api
from flakeproxy import parse_config
from flakeproxy.addons.server import ProxyServer
from tests.support.loops import LoopThread, free_port

T = TypeVar("T")


@dataclass
class Control:
    url: str
    token: str | None = None

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if body is not None:
            request.add_header("content-type", "application/json")
        if token or self.token:
            request.add_header("authorization", f"Bearer {token or self.token}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def ok(self, method: str, path: str, body: Any = None) -> Any:
        status, data = self.call(method, path, body)
        assert status in (200, 201), (status, data)
        return data

    def send(self, route: api.Route, body: api.Body | None = None, episode: str | None = None) -> Any:
        """A route of flakeproxy.control_api that must succeed, the body as the runner's client sends it."""
        data = None if body is None else body.model_dump(mode="json", exclude_unset=True)
        return self.ok(route.method, route.path(episode), data)

    def scenario(self, name: str | None = None, seed: int = 0, **inline: Any) -> Any:
        if inline:
            inline_scenario = {"name": name or "inline", **inline}
            return self.send(api.SCENARIO_PUT, api.ScenarioSet(scenario=inline_scenario, seed=seed))
        return self.send(api.SCENARIO_PUT, api.ScenarioSet(name=name, seed=seed))

    @contextmanager
    def scenario_on(self, name: str | None = None, **inline: Any) -> Iterator[None]:
        """The scenario (by name, or inline sections) active inside the block, and none after it, whatever it raised."""
        self.scenario(name, **inline)
        try:
            yield
        finally:
            self.scenario(None)

    def in_episode(
        self, act: Callable[[str], T], scenario: str | None = None, label: str | None = None, **inline: Any
    ) -> tuple[T, list[dict[str, Any]]]:
        """act(episode id) inside one episode of the scenario: what act returned, and the episode's journal."""
        with self.scenario_on(scenario, **inline):
            episode = self.begin(label)
            try:
                done = act(episode)
            finally:
                journal = self.end(episode)
        return done, journal

    def begin(self, label: str | None = None) -> str:
        return api.EpisodeView.model_validate(self.send(api.EPISODE_BEGIN, api.EpisodeBegin(label=label))).id

    def end(self, episode: str) -> list[dict[str, Any]]:
        return api.EpisodeEnded.model_validate(self.send(api.EPISODE_END, episode=episode)).journal

    def journal(self) -> list[dict[str, Any]]:
        return api.JournalPage.model_validate(self.send(api.JOURNAL)).entries


@dataclass
class Proxy:
    control: Control
    listeners: dict[str, str]  # name -> base URL
    server: ProxyServer


def config_for(upstreams: dict[str, str], targets: dict[str, Any], extra: dict[str, Any] | None = None) -> str:
    """A config text with one listener per upstream (on a free port) and the given targets."""
    listeners = [{"name": n, "listen": f"127.0.0.1:{free_port()}", "upstream": u} for n, u in upstreams.items()]
    data = {
        "version": "2.0",
        "proxy": {"admin": f"127.0.0.1:{free_port()}", "listeners": listeners},
        "targets": targets,
        **(extra or {}),
    }
    return yaml.safe_dump(data, sort_keys=False)


@contextmanager
def running_proxy(config_text: str, token: str | None = None) -> Iterator[Proxy]:
    config = parse_config(config_text, "test.yaml")
    server = ProxyServer(config, token=token)
    thread = LoopThread("proxy")
    ready = threading.Event()
    future = thread.submit(server.run(on_ready=lambda _line: ready.set(), handle_signals=False))
    try:
        while not ready.wait(0.05):
            if future.done():
                future.result()  # raises what stopped it
                raise AssertionError("the proxy stopped before it was ready")
        listeners = {lst.name: f"http://{lst.listen}" for lst in config.proxy.listeners}
        yield Proxy(Control(f"http://{server.admin}", token), listeners, server)
    finally:
        server.shutdown()
        future.result(timeout=15)
        thread.close()
