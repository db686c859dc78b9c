"""Running a function with Python's cyclic garbage collector paused, for code that makes many objects and no cycles."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


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
                gc.enable()

    return run
