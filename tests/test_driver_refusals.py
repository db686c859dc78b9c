"""The merge driver refuses what it cannot merge, in git's words, and never truncates our side."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Run

OURS = b"---\ntitle: Ours\n---\nbody\n"
BASE = b"---\ntitle: Base\n---\nbody\n"


@pytest.mark.parametrize("binary", ["base", "ours", "theirs"])
def test_a_binary_side_is_refused_and_ours_kept(run: Run, tmp_path: Path, binary: str) -> None:
    sides = {"base": BASE, "ours": OURS, "theirs": b"---\ntitle: Theirs\n---\nbody\n"}
    sides[binary] = b"PK\x03\x04\x00\x00binary"
    for name, data in sides.items():
        (tmp_path / name).write_bytes(data)
    done = run("git", "merge-driver", "base", "ours", "theirs", "7", ".planning/STATE.md")
    assert done.returncode == 2
    assert done.stderr == (
        f"planstate: .planning/STATE.md: cannot merge binary files ({binary} has NUL bytes); "
        "our side is kept as it is\n"
    )
    assert (tmp_path / "ours").read_bytes() == sides["ours"]


def test_a_missing_side_is_refused_and_ours_kept(run: Run, tmp_path: Path) -> None:
    (tmp_path / "base").write_bytes(BASE)
    (tmp_path / "ours").write_bytes(OURS)
    done = run("git", "merge-driver", "base", "ours", "gone", "7", ".planning/STATE.md")
    assert done.returncode == 2
    assert done.stderr == "planstate: gone: cannot be read: No such file or directory; nothing was merged\n"
    assert (tmp_path / "ours").read_bytes() == OURS
