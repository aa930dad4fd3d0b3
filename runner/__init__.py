"""The runner: agent adapters, the cell scheduler and the proxy's control-API client.

Installed as ``flakeproxy.runner``; it reaches the proxy only through the control API.
"""
