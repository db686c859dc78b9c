"""Running a function with Python's cyclic garbage collector paused, for code that makes many objects and no cycles.

In a process that ends with its command (`freezing`), what a paused function made is frozen when it returns
(`gc.freeze`): else the collector, enabled again, would walk those objects two or three times over as they age
(a tenth of `resume`'s work over 17,000 records). A long-lived process (the watcher, the MCP server) does not
freeze: cyclic garbage frozen with them would never be freed.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
_FREEZING = [False]  # set by `freezing`, for the process's command


def freezing(on: bool) -> None:
    """Say whether this process ends with the command it runs (the CLI says so of every command but `watch` and
    `mcp`): then what a paused function made is frozen when it returns."""
    _FREEZING[0] = on


def without_collector(function: Callable[P, R]) -> Callable[P, R]:
    """`function`, run with the cyclic garbage collector off: a function that makes tens of thousands of small
    objects and no cycles (a summary, a stat identity or a kept row per record) would have the collector walk every
    live object several times over while they are made (about a tenth of the work at 10,000 records), for nothing.
    Objects without cycles are freed as ever when the last reference goes."""

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        collecting = gc.isenabled()
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            if collecting:
                if _FREEZING[0]:
                    gc.freeze()
                gc.enable()

    return run
