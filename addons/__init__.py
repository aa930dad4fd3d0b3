"""The mitmproxy side of flakeproxy: the addon that applies fault actions, and the control API.

Installed as ``flakeproxy.addons``; the only part of flakeproxy that imports mitmproxy.
"""

from flakeproxy.addons.lean_import import addons_package_without_its_init, aiohttp_without_its_init

addons_package_without_its_init()  # before anything imports mitmproxy.master, which imports mitmproxy.addons
aiohttp_without_its_init()  # before the control API imports aiohttp.web (a no-op where aiohttp is loaded already)
