"""Importing only the mitmproxy addons flakeproxy runs (flakeproxy.addons.master lists them)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any


def addons_package_without_its_init() -> None:
    """Make `mitmproxy.addons` importable without running its __init__, which imports all ~30 default addons and
    what they need (ldap3 for proxyauth, flask, werkzeug and jinja2 for onboarding: ~300 modules, 16 MiB of RSS
    and ~130 ms of start-up a fault proxy does not use). Submodules import as usual; the first time anything asks
    the package for a name it does not have yet (mitmdump's default_addons, say), its __init__ runs after all, so
    nothing in the same process sees a different package."""
    if "mitmproxy.addons" in sys.modules:
        return
    spec = importlib.util.find_spec("mitmproxy.addons")
    if spec is None or spec.loader is None:
        return
    package, loader = importlib.util.module_from_spec(spec), spec.loader
    submodules = {p.stem for folder in spec.submodule_search_locations or [] for p in Path(folder).glob("*.py")}

    def lazily(name: str) -> Any:
        if name in submodules:  # `from mitmproxy.addons import core` asks hasattr(package, "core") first
            return importlib.import_module(f"mitmproxy.addons.{name}")
        delattr(package, "__getattr__")  # anything else: the real __init__ defines it, run it once
        loader.exec_module(package)
        return getattr(package, name)

    setattr(package, "__getattr__", lazily)  # noqa: B010 (PEP 562: asked only for names the package lacks)
    sys.modules["mitmproxy.addons"] = package
