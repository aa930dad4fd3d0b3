"""An upstream's scripted error statuses, as providers and tool APIs give them to a bad key, a wrong path, a used-up
quota or an outage: the status of each request in turn (the script starts over at its end), 200 meaning the usual
answer of tests.support.upstream, any other status the error body OpenAI gives with it (the key of a 401 echoed,
as OpenAI does)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

MESSAGES = {
    401: "Incorrect API key provided: {key}. You can find your API key at https://platform.openai.com/account/api-keys.",
    403: "You are not allowed to sample from this model",
    404: "The model `gpt-4o-mini` does not exist or you do not have access to it.",
    429: "You exceeded your current quota, please check your plan and billing details.",
    500: "The server had an error while processing your request. Sorry about that!",
    503: "The server is overloaded or not ready yet.",
}
CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "insufficient_quota"}


def error_body(status: int, key: str = "") -> dict[str, Any]:
    """OpenAI's error JSON for `status` (`key`: the API key the request sent)."""
    message = MESSAGES.get(status, f"HTTP {status}").format(key=key)
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": CODES.get(status)}}


class Script:
    """Call it with each request: None (answer as usual) or the error response of the next status in turn.
    `body`: the JSON of every error (a tool API's), instead of OpenAI's; `retry_after_ms`: sent with a 429, as
    OpenAI's retry-after-ms (the SDKs' wait)."""

    def __init__(self, statuses: list[int], body: Any = None, retry_after_ms: int = 10) -> None:
        self.statuses, self.body, self.retry_after_ms, self.given = statuses, body, retry_after_ms, 0

    def __call__(self, request: web.Request) -> web.Response | None:
        status = self.statuses[self.given % len(self.statuses)]
        self.given += 1
        if status == 200:
            return None
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        headers = {"retry-after-ms": str(self.retry_after_ms)} if status == 429 else {}
        body = error_body(status, key) if self.body is None else self.body
        return web.json_response(body, status=status, headers=headers)
