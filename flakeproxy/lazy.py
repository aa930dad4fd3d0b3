"""A package's public names imported on first use (PEP 562 `__getattr__`): `import flakeproxy` and
`import flakeproxy.config` stay cheap, and importing one of their leaves runs no circle through them."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_names(package: str, names: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The package's `__getattr__`: each name of `names` (name -> the module defining it) imported when first
    asked for and kept in `namespace` (the package's globals()), so it is looked up once."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(names[name]), name)
        namespace[name] = value
        return value

    return __getattr__
