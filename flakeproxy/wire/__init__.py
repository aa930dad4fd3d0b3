"""What faults do to bytes on the wire: actions, SSE, provider shapes, MCP. Pure; imports no mitmproxy."""
