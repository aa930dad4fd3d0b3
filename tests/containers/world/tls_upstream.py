"""The demo world's upstream (an OpenAI-shaped LLM, the quote API, the MCP server) served over HTTPS, as the
real hosts a forward-mode agent calls (api.openai.com, quotes.example.com) in the container tests.

    python tls_upstream.py CHAIN_PEM PORT      # CHAIN_PEM: key and certificate, signed by the test's CA
"""

import ssl
import sys

from aiohttp import web

from flakeproxy.runner.demo.services import upstream_app

context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
context.load_cert_chain(sys.argv[1])


def ready(_: str) -> None:
    print("tls upstream ready", flush=True)


web.run_app(upstream_app(), port=int(sys.argv[2]), ssl_context=context, print=ready, access_log=None)
