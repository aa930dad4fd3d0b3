"""The mitmproxy side of flakeproxy: the addon that applies fault actions, and the control API.

Installed as ``flakeproxy.addons``; the only part of flakeproxy that imports mitmproxy.
"""
