"""The safe fixes (check/fixes.py): one repair for each code `check --fix` repairs, and no other."""

from __future__ import annotations

from planstate.check.findings import FIXABLE
from planstate.check.fixes import REPAIRS


def test_every_fixable_code_has_one_repair() -> None:
    # conflict-marker is fixable only when its finding says so: a conflict that lies inside generated regions
    assert sorted(REPAIRS) == sorted([*FIXABLE, "conflict-marker"])
