"""aiohttp's client with its CA reading deferred (runner/client_trust.py, issue 23): the contexts it builds at import
end up exactly as aiohttp builds them, and a contract run checks an HTTPS agent's certificate against the system's
trust as before: a CA trusted by SSL_CERT_FILE passes, one that is not fails the episode."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from aiohttp import web

from flakeproxy.runner import client_trust
from tests.support.loops import running_app
from tests.support.tls import make_ca

#: in a fresh interpreter (this one imported aiohttp long ago): defer, then load; the CA counts of aiohttp's two
#: contexts at each step, and those of contexts built the way aiohttp builds them
PROBE = """\
import asyncio, json, ssl
from flakeproxy.runner import client_trust
client_trust.defer()
from aiohttp import connector
def counts():
    both = (connector._SSL_CONTEXT_VERIFIED, connector._SSL_CONTEXT_UNVERIFIED)
    return [c.cert_store_stats()["x509_ca"] for c in both]
deferred, before = client_trust.deferred(), counts()
asyncio.run(client_trust.loaded())
plain = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
plain.set_default_verify_paths()
expected = [ssl.create_default_context().cert_store_stats()["x509_ca"], plain.cert_store_stats()["x509_ca"]]
print(json.dumps({"deferred": deferred, "before": before, "after": counts(), "expected": expected,
                  "left": client_trust.deferred(), "patched": "set_default_verify_paths" in ssl.SSLContext.__dict__}))
"""


def test_aiohttp_contexts_are_whole_once_loaded(tmp_path: Path) -> None:
    ca = make_ca(tmp_path / "ca")  # a bundle of one CA, so the counts are known whatever the machine holds
    env = {**os.environ, "SSL_CERT_FILE": str(ca.cert_file)}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["deferred"] is True and seen["before"] == [0, 0]
    assert seen["after"] == seen["expected"] == [1, 1]
    assert seen["left"] is False and seen["patched"] is False


def test_only_the_importing_threads_readings_wait(tmp_path: Path) -> None:
    ca = make_ca(tmp_path / "ca")
    elsewhere: list[ssl.SSLContext] = []
    with client_trust._noting(threading.get_ident()):
        here = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        here.load_verify_locations(ca.cert_file)  # not a default reading: done now
        noted = ssl.create_default_context()
        other = threading.Thread(target=lambda: elsewhere.append(ssl.create_default_context()))
        other.start()
        other.join()
    try:
        assert here.cert_store_stats()["x509_ca"] == 1
        assert noted.cert_store_stats()["x509_ca"] == 0
        assert elsewhere[0].cert_store_stats() == ssl.create_default_context().cert_store_stats()
        assert client_trust.deferred()
    finally:
        client_trust.load_now()
    assert not client_trust.deferred()
    assert noted.cert_store_stats() == ssl.create_default_context().cert_store_stats()


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
