"""Bodies go through byte-exact both ways, streamed when no fault needs them, buffered when one does."""

from __future__ import annotations

import gzip
import hashlib
import os
from collections.abc import Iterator

import pytest
from aiohttp import web

from flakeproxy.addons import buffering
from tests.support.http import fetch
from tests.support.loops import running_app
from tests.support.proxy import Proxy, config_for, running_proxy

SIZE = 8 * 1024 * 1024 + 17  # several MB, not a multiple of any chunk size
BLOB = os.urandom(SIZE)


async def upload(request: web.Request) -> web.Response:
    digest, size = hashlib.sha256(), 0
    async for chunk in request.content.iter_any():
        digest.update(chunk)
        size += len(chunk)
    return web.json_response({"bytes": size, "sha256": digest.hexdigest()})


GZIPPED = gzip.compress(b'{"symbol": "AAPL", "price": 189.5}')


async def gzipped(request: web.Request) -> web.Response:
    return web.Response(body=GZIPPED, headers={"content-type": "application/json", "content-encoding": "gzip"})


async def download(request: web.Request) -> web.Response:
    return web.Response(body=BLOB, content_type="application/octet-stream")


async def sized(request: web.Request) -> web.Response:
    return web.Response(body=BLOB[: int(request.query["bytes"])], content_type="application/octet-stream")


async def chunked(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"content-type": "application/octet-stream"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    await response.write(BLOB[:100])
    await response.write_eof()
    return response


@pytest.fixture(scope="module")
def proxy() -> Iterator[Proxy]:
    routes = [web.post("/upload", upload), web.get("/download", download), web.get("/gzip", gzipped)]
    routes += [web.get("/sized", sized), web.get("/chunked", chunked)]
    targets = {"files": {"listener": "files", "path": "/download"}}
    with running_app(routes, "files") as url, running_proxy(config_for({"files": url}, targets)) as p:
        yield p


@pytest.mark.parametrize("scenario", [None, "faults elsewhere"])
def test_a_large_body_passes_byte_exact_both_ways(proxy: Proxy, scenario: str | None) -> None:
    if scenario:  # a fault on another path: this request cannot match it, so it streams
        proxy.control.scenario("s", tool_faults=[{"tool": "files", "mode": "error"}])
    else:
        proxy.control.scenario(None)
    up = fetch(proxy.listeners["files"], "/upload", "POST", BLOB, timeout=60)
    assert up.status == 200, up
    assert up.body == (b'{"bytes": %d, "sha256": "%s"}' % (SIZE, hashlib.sha256(BLOB).hexdigest().encode()))
    proxy.control.scenario(None)
    down = fetch(proxy.listeners["files"], "/download", timeout=60)
    assert down.status == 200 and len(down.body) == SIZE and down.body == BLOB
    sent, got = proxy.control.journal()[-2:]
    assert sent["request_bytes"] == SIZE and sent["request_body"] == BLOB[:65536].decode("utf-8", "replace")
    assert (got["response_bytes"], got["streamed"], got["body_truncated"]) == (SIZE, True, True)
    assert got["response_body"] == BLOB[:65536].decode("utf-8", "replace")


def test_a_rewrite_buffers_the_body_and_applies(proxy: Proxy) -> None:
    proxy.control.scenario("s", tool_faults=[{"tool": "files", "mode": "truncated", "keep_fraction": 0.5}])
    cell = proxy.control.begin()
    seen = fetch(proxy.listeners["files"], "/download", timeout=60)
    [entry] = proxy.control.end(cell)
    assert seen.body == BLOB[: SIZE // 2] and seen.error  # cut short under the original length
    assert entry["streamed"] is False and entry["fault"]["applied"] is True


def test_a_compressed_body_goes_as_it_came_and_is_journaled_readable(proxy: Proxy, body_path: str) -> None:
    """Responses stream by default (buffering.BUFFER_RESPONSES); either way it is not decoded."""
    proxy.control.scenario(None)
    seen = fetch(proxy.listeners["files"], "/gzip", headers={"accept-encoding": "gzip"})
    assert seen.body == GZIPPED and seen.headers["content-encoding"] == "gzip"
    entry = proxy.control.journal()[-1]
    assert entry["streamed"] is True
    assert entry["response_body"] == '{"symbol": "AAPL", "price": 189.5}'
    assert entry["response_bytes"] == len(GZIPPED)


@pytest.mark.parametrize(
    ("path", "size", "streamed"),
    [
        ("/sized?bytes=1000", 1000, False),
        (f"/sized?bytes={buffering.BUFFER_BELOW_BYTES - 1}", buffering.BUFFER_BELOW_BYTES - 1, False),
        (f"/sized?bytes={buffering.BUFFER_BELOW_BYTES}", buffering.BUFFER_BELOW_BYTES, True),
        ("/chunked", 100, True),
    ],
)
def test_an_answer_of_a_known_length_under_the_bound_is_read_whole(
    proxy: Proxy, path: str, size: int, streamed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23, with response buffering on: buffered when small and its length is known (cheaper in mitmproxy),
    streamed when large or chunked (memory stays bounded); byte-exact either way."""
    monkeypatch.setattr(buffering, "BUFFER_RESPONSES", True)
    proxy.control.scenario(None)
    seen = fetch(proxy.listeners["files"], path)
    assert seen.status == 200 and seen.body == BLOB[:size]
    entry = proxy.control.journal()[-1]
    assert (entry["streamed"], entry["response_bytes"]) == (streamed, size)
