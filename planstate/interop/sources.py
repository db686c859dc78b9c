"""The importers by name (`planstate import SOURCE PATH`), each imported only when it runs."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from planstate.core.errors import UsageError

if TYPE_CHECKING:
    from planstate.interop.plan import Plan

SOURCES: dict[str, str] = {
    "gsd": "planstate.interop.gsd",
    "backlog": "planstate.interop.backlog",
    "workflow": "planstate.interop.workflow",
}


def read(source: str, path: str | Path) -> Plan:
    """Read the folder at `path` with the importer named `source`; UsageError for an unknown one or no folder."""
    from planstate.core.files import absolute
    from planstate.core.suggest import did_you_mean

    if source not in SOURCES:
        raise UsageError(f"unknown source {source!r}{did_you_mean(source, SOURCES)}; sources: {', '.join(SOURCES)}")
    import os

    folder = Path(os.path.normpath(absolute(path)))
    if not folder.is_dir():
        raise UsageError(f"{path} is not a folder")
    module = importlib.import_module(SOURCES[source])
    plan: Plan = module.read(folder)
    return plan
