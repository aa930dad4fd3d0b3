"""Importing only the parts of mitmproxy and aiohttp the proxy runs: the mitmproxy addons flakeproxy.addons.master
lists, and aiohttp's server without its client."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any


def addons_package_without_its_init() -> None:
    """Make `mitmproxy.addons` importable without running its __init__, which imports all ~30 default addons and
    what they need (ldap3 for proxyauth, flask, werkzeug and jinja2 for onboarding: ~300 modules, 16 MiB of RSS
    and ~130 ms of start-up a fault proxy does not use)."""
    package_without_its_init("mitmproxy.addons")


def aiohttp_without_its_init() -> None:
    """Make `aiohttp` importable without running its __init__, which imports the HTTP client (the proxy only serves
    with aiohttp: the control API, the OTLP receiver): its connector builds two client SSL contexts at import,
    reading the system CA bundle twice (68 ms of the proxy's ~0.5 s start-up). `aiohttp.web` and the other
    submodules import as usual; aiohttp's own modules read only `__version__` from the package, set here."""
    from importlib.metadata import version

    package_without_its_init("aiohttp", {"__version__": version("aiohttp")})


def package_without_its_init(name: str, preset: dict[str, Any] | None = None) -> None:
    """`name` importable without running its __init__: submodules import as usual; the first time anything asks
    the package for a name it does not have (`preset` it has), its __init__ runs after all, so nothing in the same
    process sees a different package. Nothing is done when the package is imported already."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return
    package, loader = importlib.util.module_from_spec(spec), spec.loader
    submodules = {p.stem for folder in spec.submodule_search_locations or [] for p in Path(folder).glob("*.py")}
    package.__dict__.update(preset or {})

    def lazily(attribute: str) -> Any:
        if attribute in submodules:  # `from aiohttp import web` asks hasattr(package, "web") first
            return importlib.import_module(f"{name}.{attribute}")
        delattr(package, "__getattr__")  # anything else: the real __init__ defines it, run it once
        loader.exec_module(package)
        return getattr(package, attribute)

    setattr(package, "__getattr__", lazily)  # noqa: B010 (PEP 562: asked only for names the package lacks)
    sys.modules[name] = package
