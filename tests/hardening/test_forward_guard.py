"""The forward listener never relays to the proxy itself, and to loopback or private addresses only for hosts
the config names (issue 21 item 1).

Before, `curl -x http://127.0.0.1:FWD -X PUT http://127.0.0.1:ADMIN/scenario -d '{"name": null}'` answered 200
and switched the faults off, with intercept: targets and all; the forward listener relayed to any loopback port
too. Now both answer a 403 the agent can read, through a plain request and through a CONNECT tunnel, and the
scenario stays on. curl is the client, as in the attack."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from flakeproxy import parse_config
from flakeproxy.wire.forward_policy import ForwardPolicy, Own
from tests.hardening.hostile import hostile_upstream
from tests.support.loops import free_port
from tests.support.proxy import Proxy, config_for, running_proxy

MATRIX = [{"name": "down", "tool_faults": [{"tool": "quotes", "mode": "error", "error_code": 503}]}]


def curl(forward: str, *args: str) -> tuple[int, str]:
    """curl through the forward listener: (HTTP status, body), status 0 when curl itself failed."""
    out = subprocess.run(
        ["curl", "-sS", "--max-time", "10", "-x", f"http://{forward}", "-o", "-", "-w", "\n%{http_code}", *args],
        capture_output=True,
        text=True,
        timeout=20,
        env={"PATH": "/usr/bin:/bin"},  # no proxy variables from the environment
    )
    body, _, code = out.stdout.rpartition("\n")
    return int(code or 0), body + out.stderr


@pytest.fixture(scope="module", params=["targets", "all"])
def world(request: pytest.FixtureRequest) -> Iterator[tuple[Proxy, str, str]]:
    with hostile_upstream() as up:
        forward = f"127.0.0.1:{free_port()}"
        extra: dict[str, Any] = {"chaos_matrix": MATRIX}
        text = yaml.safe_load(config_for({"tools": up}, {"quotes": {"listener": "tools", "path": "/v1/*"}}, extra))
        text["proxy"].update(forward=forward, intercept=request.param)
        with running_proxy(yaml.safe_dump(text)) as proxy:
            yield proxy, forward, up


@pytest.mark.timeout(60)
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_the_control_api_is_out_of_reach_through_the_forward_listener(world: tuple[Proxy, str, str], host: str) -> None:
    proxy, forward, _ = world
    proxy.control.scenario("down")
    admin = proxy.control.url.removeprefix("http://").replace("127.0.0.1", host)
    status, body = curl(forward, "-X", "PUT", f"http://{admin}/scenario", "-d", '{"name": null}')
    assert status == 403 and "is flakeproxy's own control API" in body, body
    status, body = curl(forward, "-p", f"http://{admin}/scenario", "-X", "PUT", "-d", '{"name": null}')  # tunnel
    assert "CONNECT tunnel failed, response 403" in body, body
    assert proxy.control.ok("GET", "/scenario")["scenario"] == "down", "the faults are still on"


@pytest.mark.timeout(60)
def test_its_own_listeners_are_out_of_reach_too(world: tuple[Proxy, str, str]) -> None:
    proxy, forward, _ = world
    tools = proxy.listeners["tools"].removeprefix("http://")
    status, body = curl(forward, f"http://{tools}/v1/quotes")
    assert status == 403 and "is flakeproxy's own listener" in body, body
    status, body = curl(forward, f"http://{forward}/v1/quotes")
    assert status == 403 and "own listener" in body, body


@pytest.mark.timeout(60)
def test_other_loopback_ports_only_when_the_config_names_them(world: tuple[Proxy, str, str]) -> None:
    proxy, forward, up = world
    status, body = curl(forward, f"{up}/v1/quotes")
    assert status == 403 and "is a loopback address (127.0.0.1), and no forward target names" in body, body
    journal = proxy.control.journal()
    assert journal[-1]["status"] == 403 and journal[-1]["listener"] == "forward", "the refusal is journaled"


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "section, targets",
    [
        ({"forward_allow": ["127.0.0.1"]}, {}),
        ({"forward_allow": ["127.0.0.0/8"]}, {}),
        ({}, {"quotes": {"listener": "forward", "host": "127.0.0.1", "path": "/v1/*"}}),
    ],
    ids=["forward_allow-address", "forward_allow-network", "a-target-names-it"],
)
def test_a_named_loopback_host_is_relayed(section: dict[str, Any], targets: dict[str, Any]) -> None:
    with hostile_upstream() as up:
        forward = f"127.0.0.1:{free_port()}"
        data = yaml.safe_load(config_for({}, targets))
        data["proxy"].update(forward=forward, **section)
        with running_proxy(yaml.safe_dump(data)):
            assert curl(forward, f"{up}/v1/quotes")[0] == 200


def test_listeners_on_every_interface_are_recognised_at_any_local_address() -> None:
    """Tests listen on 127.0.0.1 only, so the 0.0.0.0 case is the pure policy's: an address of this host
    (one it can bind to) with the port of a listener bound to 0.0.0.0 is the proxy itself."""
    policy = ForwardPolicy({}, is_local=lambda ip: str(ip) == "10.1.2.3")
    own = [Own("0.0.0.0", 8790, "control API"), Own("127.0.0.1", 8701, "listener 'llm'")]
    assert policy.refusal("sidecar", 8790, ["10.1.2.3"], own) == "sidecar:8790 is flakeproxy's own control API"
    assert policy.refusal("h", 8790, ["::ffff:127.0.0.1"], own) == "h:8790 is flakeproxy's own control API"
    assert policy.refusal("h", 8701, ["127.0.0.2"], own) == "h:8701 is flakeproxy's own listener 'llm'"
    assert policy.refusal("metadata", 80, ["169.254.169.254"], own) is not None
    assert policy.refusal("api.example.com", 443, ["93.184.216.34"], own) is None


def test_validate_warns_when_forward_listens_beyond_loopback_without_a_token(tmp_path: Any) -> None:
    config = tmp_path / "flakeproxy.yaml"
    config.write_text('version: "2.0"\nproxy: {forward: "0.0.0.0:8080"}\n')
    out = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "validate", "-c", str(config)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "warning: proxy.forward 0.0.0.0:8080 listens beyond loopback and proxy.token is not set" in out.stderr


def test_the_documented_staging_example_is_safe() -> None:
    from flakeproxy.config.warnings import config_warnings
    from tests.conftest import REPO

    page = (REPO / "docs" / "staging.md").read_text()
    block = page.split("## HTTPS through the forward proxy", 1)[1].split("```yaml\n", 1)[1].split("```")[0]
    config = parse_config('version: "2.0"\n' + block, "docs/staging.md", {"FLAKEPROXY_TOKEN": "t"})
    assert config.proxy.forward == "0.0.0.0:8080" and config.proxy.token == "t"
    assert [w for w in config_warnings(config) if "forward" in w] == []


def test_forward_allow_is_in_the_schema_and_checked_at_load() -> None:
    from flakeproxy.errors import ConfigError
    from flakeproxy.schema import config_schema

    assert "forward_allow" in json.dumps(config_schema())
    with pytest.raises(ConfigError, match=r"proxy.forward_allow: 'http://x:80' is not a host name or glob"):
        parse_config('version: "2.0"\nproxy: {forward_allow: ["http://x:80"]}\n', "t.yaml")
