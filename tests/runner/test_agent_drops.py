"""An HTTP agent that accepts the request and then drops the connection (closes it, cuts its answer, or
resets it) is one ERROR cell with a clear reason, not an aborted run (exit 3); an agent that is not there
at all still stops the run with exit 3."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.runner.world import cli, world
from tests.support.loops import LoopThread, free_port

ANSWER = json.dumps({"reply": "AAPL trades at $189.50 according to the exchange feed (source)."}).encode()


@contextmanager
def dropping_agent(how: str) -> Iterator[str]:
    """A raw-socket HTTP agent: it answers prompts normally, except a prompt containing 'drop', which it
    reads in full and then drops as `how` says."""
    port = free_port()
    thread = LoopThread("dropping-agent")

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                body = await reader.readexactly(length)
                if b"drop" not in body:
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
                    writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER))
                    await writer.drain()
                    continue
                if how == "partial":
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{")
                    await writer.drain()
                elif how == "reset":
                    sock = writer.get_extra_info("socket")
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.close()
                return
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = thread.run(asyncio.start_server(handle, "127.0.0.1", port))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        thread.run(server.wait_closed())
        thread.close()


def _agent(url: str) -> dict[str, object]:
    return {
        "type": "http",
        "endpoint": f"{url}/chat",
        "request_template": {"message": "{prompt}"},
        "response_path": "$.reply",
        "timeout_ms": 10000,
    }


@pytest.mark.timeout(90)
@pytest.mark.parametrize("how", ["close", "partial", "reset"])
def test_an_agent_dropping_the_connection_is_an_error_cell(tmp_path: Path, how: str) -> None:
    with dropping_agent(how) as url, world(tmp_path, matrix=[{"name": "no-chaos"}], agent_config=_agent(url)) as w:
        data = w.data
        data["golden_prompts"] = ["What is AAPL trading at?", "drop this one"]
        data["contract"]["invariants"] = [data["contract"]["invariants"][0]]
        w.config.write_text(json.dumps(data))
        out = cli(w.config)
    assert out.returncode == 1, out.stderr  # the run finished; the ERROR cell fails the contract
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["complete"] is True
    (cell,) = results["cells"]
    assert cell["outcome"] == "error"
    by_prompt = {e["prompt"]: e for e in results["episodes"] if e["id"] in cell["episodes"]}
    assert by_prompt["What is AAPL trading at?"]["error"] is None
    assert "according to the exchange feed" in by_prompt["What is AAPL trading at?"]["answer"]
    dropped = by_prompt["drop this one"]
    assert dropped["answer"] is None
    assert dropped["error"].startswith("agent closed the connection mid-request: "), dropped["error"]
    assert "ERROR" in out.stdout


def test_an_agent_that_is_not_there_stops_the_run(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens here
    with world(tmp_path, matrix=[{"name": "no-chaos"}], agent_config=_agent(url)) as w:
        out = cli(w.config)
    assert out.returncode == 3, out.stderr
    assert f"agent {url}/chat unreachable" in out.stderr
