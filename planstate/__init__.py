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
    "Document": "planstate.text.document",
    "Workspace": "planstate.workspace",
    "State": "planstate.model.kinds",
    "ConflictError": "planstate.core.errors",
    "EditError": "planstate.core.errors",
    "LockTimeout": "planstate.core.errors",
    "ParseError": "planstate.core.errors",
    "PlanstateError": "planstate.core.errors",
    "UsageError": "planstate.core.errors",
    "ValidationError": "planstate.core.errors",
}

if TYPE_CHECKING:
    from planstate.core.errors import (
        ConflictError,
        EditError,
        LockTimeout,
        ParseError,
        PlanstateError,
        UsageError,
        ValidationError,
    )
    from planstate.model.kinds import State
    from planstate.text.document import Document
    from planstate.workspace import Workspace


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'planstate' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
