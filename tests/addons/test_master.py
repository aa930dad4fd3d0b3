"""mitmproxy's master as flakeproxy runs it (addons/master.py): two links in mitmproxy's chain, mitmproxy's addons
then flakeproxy's, each addon still found by its name and called for its hooks in order."""

from __future__ import annotations

from flakeproxy.addons.fault_addon import FaultAddon
from flakeproxy.addons.master import AddonGroup, OwnCaTlsConfig
from tests.support.http import fetch
from tests.support.proxy import config_for, running_proxy
from tests.support.upstream import RunningUpstream

TARGETS = {"quotes": {"listener": "tools", "path": "/v1/quotes*"}}


def test_the_chain_is_two_groups_and_every_addon_is_found_and_called() -> None:
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, TARGETS)) as proxy:
        master = proxy.server._master
        assert master is not None
        chain = master.addons.chain
        assert [type(link) for link in chain] == [AddonGroup, AddonGroup]
        assert [link.name for link in chain] == ["mitmproxy-addons", "flakeproxy-addons"]
        for name in ("core", "block", "proxyserver", "nextlayer", "disableh2c", "updatealtsvc", "errorcheck"):
            assert master.addons.get(name) is not None, name
        assert isinstance(master.addons.get("tlsconfig"), OwnCaTlsConfig)
        assert isinstance(master.addons.get("faultaddon"), FaultAddon)
        order = [type(a).__name__ for link in chain for a in link.addons]
        assert order.index("ForwardGuard") < order.index("FaultAddon") < order.index("Recorder")  # guard first
        seen = fetch(proxy.listeners["tools"], "/v1/quotes?symbol=AAPL")
        (entry,) = proxy.control.ok("GET", "/journal")["entries"]
    assert seen.status == 200 and entry["status"] == 200 and entry["targets"] == ["quotes"]  # hooks ran
