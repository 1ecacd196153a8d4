"""Packages whose public names load on first use (PEP 562), so a command, or `anonsql --help`,
pays only for the modules it runs (pandas, scipy, scikit-learn load where used: issue 11)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any


def exports(package: str, modules: Sequence[str], names: Sequence[str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: a public name in `names` is looked up in the
    `modules` (relative names, in order), which are imported the first time one is asked for."""
    public = frozenset(names)

    def __getattr__(name: str) -> Any:
        if name in public:
            for module in modules:
                found = importlib.import_module(module, package)
                if hasattr(found, name):
                    return getattr(found, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
