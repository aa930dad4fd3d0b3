"""No listener forwards the control API's own token.

A runner whose proxy.admin_url points at a listener instead of the control API sends its /healthz probes there,
token and all: a trial's went through the listener to its LLM's host. A request on any listener that carries the
control token as its bearer is answered here, 403, saying where the control API is; it never goes upstream.
"""

from __future__ import annotations

import hmac
import json

from mitmproxy import http

from flakeproxy.control_api import NOT_THE_CONTROL_API


class TokenGuard:
    def __init__(self, token: str | None, admin: str) -> None:
        self.bearer = f"Bearer {token}".encode() if token else None
        self.admin = admin

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if self.bearer is None or flow.response is not None:
            return
        sent = flow.request.headers.get("authorization", "").encode()
        if hmac.compare_digest(sent, self.bearer):
            message = (
                f"{NOT_THE_CONTROL_API} (that is at {self.admin}): the control token is never sent upstream; "
                "point proxy.admin_url at the control API"
            )
            body = json.dumps({"error": message}).encode()
            flow.response = http.Response.make(403, body, {"content-type": "application/json"})
