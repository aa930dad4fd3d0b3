"""Serve one piece of the demo world on its own, for the docker compose example:

  flakeproxy-demo-serve upstream --port 9100
  flakeproxy-demo-serve agent --kind careful --port 8000 \\
      --llm http://flakeproxy:8701 --tools http://flakeproxy:8702 --mcp http://flakeproxy:8703

--kind defaults to $FLAKEPROXY_DEMO_AGENT (careful or naive), else careful, so that a compose override can
swap the agent by its environment alone (compose overrides replace or append to a command, depending on
the tool, but merge environments).
"""

from __future__ import annotations

import argparse
import os

from aiohttp import web

from flakeproxy.runner.demo.agents import DemoAgent, Urls, agent_app
from flakeproxy.runner.demo.services import upstream_app

KIND_VARIABLE = "FLAKEPROXY_DEMO_AGENT"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="flakeproxy-demo-serve", description=__doc__)
    parser.add_argument("what", choices=["upstream", "agent"])
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--kind", choices=["careful", "naive"], default=os.environ.get(KIND_VARIABLE, "careful"))
    parser.add_argument("--llm", default="http://127.0.0.1:8701")
    parser.add_argument("--tools", default="http://127.0.0.1:8702")
    parser.add_argument("--mcp", default="http://127.0.0.1:8703")
    parser.add_argument(
        "--env-proxy", action="store_true", help="agent: honour HTTP(S)_PROXY and NO_PROXY, as SDK clients do"
    )
    args = parser.parse_args(argv)
    if args.kind not in ("careful", "naive"):
        parser.error(f"{KIND_VARIABLE}={args.kind!r}: choose careful or naive")
    if args.what == "upstream":
        app = upstream_app()
    else:
        app = agent_app(DemoAgent(args.kind == "careful", Urls(args.llm, args.tools, args.mcp), args.env_proxy))
    web.run_app(app, host=args.host, port=args.port, print=lambda line: None, access_log=None)


if __name__ == "__main__":
    main()
