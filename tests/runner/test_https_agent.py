"""An HTTP agent at an https:// endpoint: a contract run checks its certificate against the system's trust (a CA
trusted by SSL_CERT_FILE passes; one that is not fails the run with what failed and the fix, where the error's errno
was once read as the system's: "unreachable: Operation not permitted")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from aiohttp import web

from tests.support.loops import running_app
from tests.support.tls import make_ca


async def _chat(request: web.Request) -> web.Response:
    return web.json_response({"reply": "AAPL is 189.50; source: the exchange feed"})


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "untrusted"])
def test_a_contract_run_checks_an_https_agent_against_the_systems_trust(tmp_path: Path, trusted: bool) -> None:
    ca = make_ca(tmp_path / "ca")
    with running_app([web.post("/chat", _chat)], "https-agent", tls=ca.leaf(["localhost"])) as url:
        endpoint = url.replace("127.0.0.1", "localhost") + "/chat"
        config = {
            "version": "2.0",
            "agent": {"type": "http", "endpoint": endpoint, "request_template": {"message": "{prompt}"}},
            "golden_prompts": ["What is AAPL trading at?"],
            "contract": {"name": "tls", "invariants": [{"id": "cites", "type": "regex", "pattern": "source"}]},
            "chaos_matrix": [{"name": "calm"}],
        }
        (path := tmp_path / "flakeproxy.yaml").write_text(yaml.safe_dump(config))
        env = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
        if trusted:
            env["SSL_CERT_FILE"] = str(ca.cert_file)
        command = [sys.executable, "-m", "flakeproxy", "contract", "run", "-c", str(path), "-o", str(tmp_path / "out")]
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    if trusted:
        assert done.returncode == 0, done.stderr
        assert "PASS" in done.stdout
    else:
        assert done.returncode == 3, done.stdout + done.stderr
        assert (
            f"error: agent {endpoint}: its TLS certificate is not trusted here (unable to get local issuer "
            "certificate); if your own CA signed it, set SSL_CERT_FILE to a bundle that holds that CA\n"
        ) in done.stderr
