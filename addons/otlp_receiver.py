"""The OTLP/HTTP receiver at proxy.otlp, on the proxy's own loop: the agent exports its spans here (POST
/v1/traces, protobuf or JSON, gzip-compressed or not), and they are kept by trace id (flakeproxy.telemetry.store)
for the runner to fetch with its episode (GET /spans on the control API). Logs and metrics sent to the same
endpoint are accepted and dropped, so an agent pointing all of OTEL_EXPORTER_OTLP_ENDPOINT here logs no errors.

A mitmproxy addon for its lifecycle only (`running` starts the listener, `done` stops it); it sees no flow.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

from aiohttp import web

from flakeproxy.config.proxy import split_host_port
from flakeproxy.proxycore.redact import Redactor
from flakeproxy.telemetry import extra, otlp_json, otlp_proto
from flakeproxy.telemetry.otlp_json import BadExport
from flakeproxy.telemetry.spans import AgentSpan
from flakeproxy.telemetry.store import SpanStore

#: The largest export read, compressed or not (the SDKs send batches of at most 512 spans).
MAX_EXPORT_BYTES = 16 * 1024 * 1024
PROTOBUF, JSON = "application/x-protobuf", "application/json"
log = logging.getLogger(__name__)
Decoder = Callable[[bytes, Redactor], list[AgentSpan]]
DECODERS: dict[str, Decoder] = {PROTOBUF: otlp_proto.decode, JSON: otlp_json.decode}


def _status(code: int, message: str, kind: str) -> web.Response:
    """An error as OTLP/HTTP answers it: a google.rpc.Status in the request's encoding."""
    if kind == PROTOBUF:
        from google.rpc.status_pb2 import Status  # type: ignore[import-untyped]

        body = Status(code=code, message=message).SerializeToString()
        return web.Response(status=400 if code == 3 else 413, body=body, content_type=PROTOBUF)
    return web.json_response({"code": code, "message": message}, status=400 if code == 3 else 413)


def _success(kind: str, rejected: int, why: str) -> web.Response:
    if kind == PROTOBUF:
        return web.Response(body=otlp_proto.response(rejected, why), content_type=PROTOBUF)
    partial = {"partialSuccess": {"rejectedSpans": str(rejected), "errorMessage": why}} if rejected else {}
    return web.Response(body=json.dumps(partial), content_type=JSON)


class OtlpReceiver:
    def __init__(self, address: str, store: SpanStore, redactor: Redactor) -> None:
        extra.require("proxy.otlp")
        self.address, self.store, self.redactor = address, store, redactor
        self.app = web.Application(client_max_size=MAX_EXPORT_BYTES)
        self.app.add_routes(
            [web.post("/v1/traces", self.traces), web.post("/v1/logs", self.drop), web.post("/v1/metrics", self.drop)]
        )
        self.runner: web.AppRunner | None = None

    async def running(self) -> None:
        host, port = split_host_port(self.address)
        self.runner = web.AppRunner(self.app, access_log=None)
        await self.runner.setup()
        await web.TCPSite(self.runner, host, port).start()

    async def done(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    @staticmethod
    def _kind(request: web.Request) -> str:
        if request.content_type not in DECODERS:
            raise web.HTTPUnsupportedMediaType(text=f"send {PROTOBUF} or {JSON}, not {request.content_type!r}")
        return request.content_type

    async def _body(self, request: web.Request, kind: str) -> bytes | web.Response:
        """The body, its content-encoding (gzip, deflate) undone by aiohttp as it reads, at most MAX_EXPORT_BYTES."""
        try:
            return await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _status(8, f"the export is larger than {MAX_EXPORT_BYTES} bytes; send smaller batches", kind)
        except Exception as e:  # a body its content-encoding does not describe (not gzip, br's decoder failing)
            encoding = request.headers.get("content-encoding", "none")[:40]
            why = " ".join(str(e).split())[:200] or type(e).__name__
            return _status(3, f"the body could not be read as content-encoding {encoding} ({why})", kind)

    async def traces(self, request: web.Request) -> web.Response:
        kind = self._kind(request)
        body = await self._body(request, kind)
        if isinstance(body, web.Response):
            return body
        try:
            spans = await asyncio.to_thread(DECODERS[kind], body, self.redactor)
        except BadExport as e:
            return _status(3, str(e), kind)
        kept = self.store.add(spans)
        why = "the span store's per-trace limit was reached" if kept < len(spans) else ""
        return _success(kind, len(spans) - kept, why)

    async def drop(self, request: web.Request) -> web.Response:
        kind = self._kind(request)
        await request.read()
        return web.Response(body=b"" if kind == PROTOBUF else b"{}", content_type=kind)
