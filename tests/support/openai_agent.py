"""A small HTTP agent on the official openai SDK, as a user would write one: POST /chat {"message"} -> {"reply"},
after a quote from its own tool API. Its base URLs are read from `urls` when a request comes in, so a test can
fill them in from what flakeproxy (init, or the docs) told it. Import after `pytest.importorskip("openai")`."""

from __future__ import annotations

from typing import Any

import aiohttp
import openai
from aiohttp import web


def agent_routes(urls: dict[str, str], careful: bool, stream: bool = False) -> list[web.RouteDef]:
    """POST /chat {"message"} -> {"reply"}: a quote from its tool API, then one chat completion (streamed: its
    deltas joined, as a chat UI shows them)."""

    async def chat(request: web.Request) -> web.Response:
        message = (await request.json())["message"]
        client = openai.AsyncOpenAI(base_url=urls["OPENAI_BASE_URL"], api_key="sk-test", timeout=20)
        quote: Any = None
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http,
                http.get(f"{urls['tool']}/quotes", params={"symbol": "AAPL"}) as r,
            ):
                r.raise_for_status()
                quote = await r.json()
        except (aiohttp.ClientError, TimeoutError):
            quote = "unavailable"
        try:
            messages: Any = [{"role": "user", "content": f"{message} (quote: {quote})"}]
            if stream:
                chunks = await client.chat.completions.create(model="gpt-4o-mini", messages=messages, stream=True)
                text = "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])
            else:
                reply = await client.chat.completions.create(model="gpt-4o-mini", messages=messages)
                text = reply.choices[0].message.content or ""
        except openai.APIError as e:
            if not careful:
                raise web.HTTPInternalServerError(text=str(e)) from e
            text = "Sorry, my language model is not answering right now; please try again in a minute."
        finally:
            await client.close()
        return web.json_response({"reply": text})

    return [web.post("/chat", chat)]
