"""Importing only the parts of mitmproxy and aiohttp the proxy runs: the mitmproxy addons flakeproxy.addons.master
lists, and aiohttp's server without its client."""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import re
import sys
from pathlib import Path
from typing import Any

VERSION_LINE = re.compile(r"""__version__\s*=\s*["']([^"']+)["']""")


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
    package_without_its_init("aiohttp", {"__version__": _version_of("aiohttp")})


def _version_of(name: str) -> str:
    """A package's `__version__ = "..."` from the head of its __init__ (aiohttp's first line), else its installed
    metadata: importlib.metadata's look-up reads every installed distribution's folder name, ~10 ms of the proxy's
    start in an environment of a few hundred packages."""
    spec = importlib.util.find_spec(name)
    if spec is not None and spec.origin:
        with contextlib.suppress(OSError, UnicodeDecodeError), open(spec.origin, encoding="utf-8") as init:
            for line in itertools.islice(init, 40):
                if found := VERSION_LINE.match(line):
                    return found.group(1)
    from importlib.metadata import version

    return version(name)


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
