"""A staging config names the real hosts: targets match by host (globs), the providers' hosts are their LLM
APIs without saying so, and the forward listener's TLS keys are checked at load, one line per mistake."""

from __future__ import annotations

import pytest
import yaml

from flakeproxy import parse_config
from flakeproxy.addons.server import target_specs
from flakeproxy.errors import ConfigError
from flakeproxy.wire.call import names_host, resolve


def config(targets: dict[str, object], **proxy: object) -> str:
    section = {"forward": "127.0.0.1:8080", **proxy}
    return yaml.safe_dump({"version": "2.0", "proxy": section, "targets": targets})


def test_the_providers_real_hosts_are_their_llm_apis() -> None:
    loaded = parse_config(
        config(
            {
                "openai": {"listener": "forward", "host": "api.openai.com"},
                "responses": {"listener": "forward", "host": "API.OpenAI.com", "path": "/v1/responses*"},
                "claude": {"listener": "forward", "host": "api.anthropic.com"},
                "files": {"listener": "forward", "host": "api.openai.com", "path": "/v1/files*", "api": None},
                "search": {"listener": "forward", "host": "*.example.com"},
            }
        )
    )
    apis = {name: t.api for name, t in loaded.targets.items()}
    assert apis == {
        "openai": "openai",
        "responses": "openai-responses",
        "claude": "anthropic",
        "files": None,  # an explicit api: null keeps a tool target on the provider's host
        "search": None,
    }
    assert loaded.targets["responses"].host == "api.openai.com"
    assert loaded.proxy.intercept == "targets" and loaded.proxy.ca_dir == "~/.mitmproxy"
    assert loaded.proxy.insecure_skip_upstream_verify is False and loaded.proxy.upstream_ca is None


def test_targets_match_by_host_and_path() -> None:
    loaded = parse_config(
        config(
            {
                "openai": {"listener": "forward", "host": "api.openai.com"},
                "quotes": {"listener": "forward", "host": "*.example.com", "path": "/v1/quotes*"},
            }
        )
    )
    specs = target_specs(loaded)

    def targets(url: str) -> tuple[str, ...]:
        path = "/" + url.split("/", 3)[3]
        return resolve(specs, "forward", "GET", url, path, {}, b"").targets

    assert targets("https://api.openai.com/v1/chat/completions") == ("openai",)
    assert targets("https://API.OPENAI.COM:443/v1/models") == ("openai",)
    assert targets("https://quotes.example.com/v1/quotes?s=1") == ("quotes",)
    assert targets("https://quotes.example.com/v1/other") == ()
    assert targets("https://api.openai.com.evil.test/v1/chat/completions") == ()
    assert resolve(specs, "llm", "GET", "https://api.openai.com/v1/x", "/v1/x", {}, b"").targets == ()
    assert names_host(specs, "forward", "api.openai.com") and names_host(specs, "forward", "a.example.com")
    assert not names_host(specs, "forward", "api.anthropic.com")
    # a forward target without host: names every host, so intercept: targets decrypts them all
    anywhere = target_specs(parse_config(config({"any": {"listener": "forward", "path": "/v1/*"}})))
    assert names_host(anywhere, "forward", "whatever.test")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            config({"t": {"listener": "forward", "host": "https://api.openai.com"}}),
            "line 5: targets.t.host: must be a bare host name or glob, e.g. api.openai.com or *.example.com "
            "(no scheme, no port); got 'https://api.openai.com'",
        ),
        (
            config({"t": {"listener": "forward", "host": "api.openai.com:443"}}),
            "(no scheme, no port); got 'api.openai.com:443'",
        ),
        (
            config({}, resolve={"api.openai.com": "10.0.0.1:443"}),
            "resolve: api.openai.com -> 10.0.0.1:443: only loopback addresses are allowed (this map is for tests)",
        ),
        (config({}, intercept="some"), "proxy.intercept"),
    ],
)
def test_mistakes_are_one_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_config(text, "staging.yaml")
    assert message in str(e.value) and "\n" not in str(e.value)
