"""A command agent (agent.type: command) with no OpenTelemetry: it reads TRACEPARENT (and BAGGAGE) from its
environment, as the runner sets them, and sends them on its call to the quote API; prints the answer."""

from __future__ import annotations

import os
import sys
import urllib.request

headers = {"traceparent": os.environ["TRACEPARENT"]}
if os.environ.get("SEND_BAGGAGE") == "1":
    headers["baggage"] = os.environ["BAGGAGE"]
else:  # the trace id alone must be enough
    assert "BAGGAGE" in os.environ
request = urllib.request.Request(f"{os.environ['TOOLS_URL']}/v1/quotes?symbol=AAPL", headers=headers)
try:
    with urllib.request.urlopen(request, timeout=10) as response:
        print(f"{sys.argv[1]}: {response.read().decode()} (source: exchange feed)")
except urllib.error.HTTPError as e:
    print(f"{sys.argv[1]}: the quote API answered HTTP {e.code}, no price")
