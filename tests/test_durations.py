"""Durations: one grammar for every option that takes one, one way of showing them, no overflow from huge values."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from conftest import Run

from planstate.core import durations
from planstate.core.errors import UsageError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("30m", 1800),
        ("2h", 7200),
        ("1d", 86400),
        ("1w", 604800),
        ("1h30m", 5400),
        ("1.5h", 5400),
        ("1h 30m", 5400),
        ("0.5m", 30),
        (" 2D ", 172800),
    ],
)
def test_the_one_grammar(text: str, seconds: int) -> None:
    assert durations.parse(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "30", "m", "30 m", "1y", "-1h", "0s", "h1", "1.h", ".5h", "1h-30m"])
def test_what_is_not_a_duration(text: str) -> None:
    with pytest.raises(UsageError, match="--stale-after"):
        durations.parse(text, "--stale-after")


@pytest.mark.parametrize("text", ["99999999d", "999999999999w", "5300w", "101" + "0" * 300 + "s"])
def test_huge_durations_are_refused_not_overflowed(text: str) -> None:
    with pytest.raises(UsageError, match="too long; durations are at most 100 years"):
        durations.parse(text, "--since")


def test_show_floors_to_minutes_and_shows_days_above_48_hours() -> None:
    cases = [0, 59.9, 60, 3599, 3600, 5400, 9000 + 59, 47 * 3600 + 59 * 60, 48 * 3600, 49 * 3600 + 120, 72 * 3600]
    assert [durations.show(s) for s in cases] == [
        "0s",
        "59s",
        "1m",
        "59m",
        "1h",
        "1h 30m",
        "2h 30m",
        "47h 59m",
        "2d",
        "2d 1h",
        "3d",
    ]
    assert durations.show(timedelta(hours=2, minutes=30)) == "2h 30m"
    assert durations.show(-5) == "0s"


def test_shown_durations_read_back_to_the_minute() -> None:
    for seconds in (60, 5400, 9000, 47 * 3600 + 60):
        assert durations.parse(durations.show(seconds)) == timedelta(seconds=seconds)


# ---------------------------------------------------------------------------- every option, the same grammar


@pytest.mark.parametrize("value", ["1h30m", "1.5h"])
def test_check_and_reap_take_the_same_durations(run: Run, project: Path, value: str) -> None:
    check = run("check", "--stale-after", value, cwd=project)
    assert check.returncode == 0, check.stderr
    reap = run("session", "reap", "--stale-after", value, "--dry-run", cwd=project)
    assert reap.returncode == 0, reap.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("check", "--stale-after", "999999999999w"),
        ("session", "reap", "--stale-after", "999999999999w"),
        ("decision", "list", "--since", "99999999d"),
        ("session", "list", "--since", "99999999d"),
    ],
)
def test_huge_durations_exit_2_in_one_line(run: Run, project: Path, args: tuple[str, ...]) -> None:
    result = run(*args, cwd=project)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "too long" in result.stderr and "Traceback" not in result.stderr


def test_a_bad_duration_names_its_option(run: Run, project: Path) -> None:
    result = run("check", "--stale-after", "soon", cwd=project)
    assert result.returncode == 2
    assert result.stderr == (
        "planstate: check: --stale-after 'soon' is not a duration; write numbers with units (s, m, h, d, w), "
        "e.g. 90s, 30m, 1.5h, 1h30m, 2d, 1w (see `planstate check --help`)\n"
    )
