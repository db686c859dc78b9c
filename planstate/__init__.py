"""planstate: the execution state of software work in plain files under .planning/."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "ConflictError",
    "Document",
    "EditError",
    "LockTimeout",
    "ParseError",
    "PlanstateError",
    "State",
    "UsageError",
    "ValidationError",
    "Workspace",
]

# Attributes are loaded on first use: agents start planstate many times a session, and a
# command should import only what it needs.
_LAZY = {
    "Document": "planstate.document",
    "Workspace": "planstate.workspace",
    "State": "planstate.models",
    "ConflictError": "planstate.errors",
    "EditError": "planstate.errors",
    "LockTimeout": "planstate.errors",
    "ParseError": "planstate.errors",
    "PlanstateError": "planstate.errors",
    "UsageError": "planstate.errors",
    "ValidationError": "planstate.errors",
}

if TYPE_CHECKING:
    from planstate.document import Document
    from planstate.errors import (
        ConflictError,
        EditError,
        LockTimeout,
        ParseError,
        PlanstateError,
        UsageError,
        ValidationError,
    )
    from planstate.models import State
    from planstate.workspace import Workspace


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'planstate' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
