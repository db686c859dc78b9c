"""Time every command of issue 14 on workspaces of 11, 2,000 and 17,000 records, with peak memory and goals.

Each command runs as an installed tool runs (a fresh process, compiled bytecode), in rounds that
interleave every command on every workspace, so machine noise hits them alike; the figure is the
median of the rounds. Floors are measured in the same run: Python loading one front matter
with PyYAML's C loader (what any Python tool pays to start), loading every planning file's
front matter that way (what a cold `check` or `validate` cannot beat by much), and one `lstat` of
every planning file (what a command pays to notice a hand edit behind its back: a row with a growth
goal also shows its growth less what the floor of the folders it scans grows: every planning file for `resume`,
`render` and the checks, one record folder for a command that reads one, measured per folder as
`floor, stat decisions` and the like). Peak memory is the
child's own maximum resident set and its CPU time the user and system time (os.wait4): a row also shows how its
CPU time grows, which a busy machine disturbs far less than the wall-clock time the goals are stated in.
Each row prints its goal and the growth from the smallest workspace to the largest.

    python benchmarks/scale.py FOLDER [--sizes 11,2000,17000] [--runs 5] [--slow-runs 1] [--json]
                                      [--only NAME,...] [--no-gsd] [--gsd-install FOLDER] [--git]

With --git, each workspace is a git repository as a user who followed the docs has one (`planstate git
install`, everything committed once, the benchmark's own writes left uncommitted), so the git calls of
`check` (the drivers' config) and `resume` (what changed since the last session) are measured too; give it
its own FOLDER, as the workspaces are changed in place.

After the table, the side-by-side run against GSD's node tool (benchmarks/gsd_side_by_side.py:
`get`/`status` against `gsd-tools state get/json`, `set`/`decision add` against its state update and
add-decision, interleaved) prints its own table with its goals, unless --no-gsd; it installs GSD
from npm, or says why it cannot.

Missing workspaces are built first (benchmarks/build_scale.py). Writes change the workspaces (each `decision add`
adds a decision), so later runs see a few more records. A command that needs something to act on gets it from a
setup step before each of its runs, not timed: `task done` a task started, `blocker resolve` a blocker added,
`blocker list` and `session list` a record of their kind written (a blocker added and resolved, a session started
and ended: a list runs right after a write to its folder, as `decision list` does in a round), `phase complete` a
phase added at the end (so a pending phase is always left to start and the initiative never completes; the current
phase is completed), `check, warm` and `validate, warm` a run of the same command (warm means nothing changed since
it last ran), `check, cold` and `validate, cold` the cache set aside (put back after the run: the rows after them
run with the store they had, as in use, not rebuilding it), `check, after a write` a `decision add`
(which changes STATE.md and one record folder: the check judges again only what changed). Every round then measures
the same thing, and the workspace stays as `planstate check` wants it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from build_scale import NOW, SIZES, build  # noqa: E402
from cli_latency import ENV, compile_package, planstate_command  # noqa: E402

FLOOR_ONE = "import sys, yaml\nyaml.load(open(sys.argv[1], 'rb').read().split(b'---', 2)[1], Loader=yaml.CSafeLoader)\n"
# What any command pays to know that no file changed behind its back: list every planning folder and lstat every
# entry through the folder's descriptor, as planstate's scan does (store/scan.py), reading nothing.
# With a second argument, that record folder only (not its subfolders), as a command over one kind scans it.
FLOOR_STAT = (
    "import os, sys\n"
    "folders = [os.path.join(*sys.argv[1:])]\n"
    "below = len(sys.argv) == 2\n"
    "while folders:\n"
    "    folder = folders.pop()\n"
    "    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)\n"
    "    names = [name for name in os.listdir(fd) if name != '.local']\n"
    "    infos = [os.lstat(name, dir_fd=fd) for name in names]\n"
    "    os.close(fd)\n"
    "    folders += [os.path.join(folder, n) for n, i in zip(names, infos) if below and (i.st_mode >> 12) == 4]\n"
)
FLOOR_ALL = (
    "import os, sys, yaml\n"
    "for top, _dirs, names in os.walk(sys.argv[1]):\n"
    "    if '.local' in top: continue\n"
    "    for name in names:\n"
    "        if name.endswith('.md'):\n"
    "            raw = open(os.path.join(top, name), 'rb').read().split(b'---', 2)[1]\n"
    "            yaml.load(raw, Loader=yaml.CSafeLoader)\n"
)

# name -> (goal kind, whether slow: run --slow-runs times only)
GOALS = {
    "floor": ("floor", False),
    "floor, all files": ("floor", False),
    "floor, stat all files": ("floor", False),
    "floor, stat decisions": ("floor", False),
    "floor, stat blockers": ("floor", False),
    "floor, stat sessions": ("floor", False),
    "get next_action": ("single", False),
    "status": ("page", False),
    "set next_action": ("single", False),
    "set title": ("single", False),
    "next": ("single", False),
    "decision add": ("single", False),
    "decision show": ("single", False),
    "task start": ("single", False),
    "task done": ("single", False),
    "blocker resolve": ("single", False),
    "phase complete": ("single", False),
    "decision list": ("page", False),
    "blocker list": ("page", False),
    "session list": ("page", False),
    "resume": ("page", False),
    "check, warm": ("warm", False),
    "check, after a write": ("warm", False),
    "validate, warm": ("warm", False),
    "check, cold": ("cold", True),
    "validate, cold": ("cold", True),
    "render": ("page", False),
}
GROWTH = {"single": 1.2, "page": 1.5}
# The stat floor of what each row with a growth goal scans to notice hand edits (counted with strace at 17k: a
# command over one kind lists and stats that folder; `status` stats the open blockers, at most every blocker).
# A row not named here stats no record folder: its growth is its own.
SCANS = {
    "status": "floor, stat blockers",
    "decision add": "floor, stat decisions",
    "decision list": "floor, stat decisions",
    "blocker list": "floor, stat blockers",
    "session list": "floor, stat sessions",
    "resume": "floor, stat all files",
    "render": "floor, stat all files",
}
ASIDE = "cache-set-aside"  # where a cold row keeps the cache while it runs without one (see `put_back`)
WARM_MS = 300
MEMORY_MIB = 100


# What runs before a command, untimed: None, or the words to put in its command line (`@ID@`, `@N@`).
Setup = Callable[[], dict[str, str] | None]


def commands(project: Path, show_id: str) -> dict[str, tuple[list[str], Setup | None]]:
    """Each benchmarked command line, and what to do before it (make the cache cold, make something to act on)."""
    ps = planstate_command()
    planning = project / ".planning"

    def cold() -> None:
        cache, aside = planning / ".local" / "cache", planning / ".local" / ASIDE
        shutil.rmtree(aside, ignore_errors=True)
        if cache.exists():
            cache.rename(aside)  # put back after the run (`put_back`): a cold row must not make the next rows cold

    def warmed(*words: str) -> Setup:
        def warm() -> None:  # "warm" means nothing changed since the command last ran: the run before is untimed
            setup([*ps, *words], project, exits=(0, 1))

        return warm

    def written() -> None:  # a record added (and STATE.md's regions rendered) just before: the memo's key changed
        words = ["--context", "bench", "--decision", "A decision before a check", "--reason", "measuring"]
        setup([*ps, "decision", "add", *words], project)

    def task() -> None:
        setup([*ps, "task", "start", "A task to finish"], project)

    def blocker() -> dict[str, str]:
        added = setup([*ps, "blocker", "add", "--description", "A blocker to resolve", "--json"], project)
        return {"@ID@": json.loads(added)["data"]["id"]}

    def blocker_written() -> None:
        found = blocker()["@ID@"]
        setup([*ps, "blocker", "resolve", found, "--resolution", "listed"], project)

    def session_written() -> None:
        setup([*ps, "session", "start", "--agent", "bench"], project)
        setup([*ps, "session", "end"], project)

    def phase() -> dict[str, str]:
        current = json.loads(setup([*ps, "get", "position.phase", "--json"], project))["data"]
        setup([*ps, "phase", "add", "A phase to complete"], project)
        return {"@N@": str(current)}

    return {
        "floor": ([sys.executable, "-c", FLOOR_ONE, str(planning / "STATE.md")], None),
        "floor, all files": ([sys.executable, "-c", FLOOR_ALL, str(planning)], None),
        "floor, stat all files": ([sys.executable, "-c", FLOOR_STAT, str(planning)], None),
        **{
            f"floor, stat {folder}": ([sys.executable, "-c", FLOOR_STAT, str(planning), folder], None)
            for folder in ("decisions", "blockers", "sessions")
        },
        "get next_action": ([*ps, "get", "next_action"], None),
        "status": ([*ps, "status"], None),
        "set next_action": ([*ps, "set", "next_action", "@TEXT@"], None),
        "set title": ([*ps, "set", "title", "@TEXT@"], None),
        "next": ([*ps, "next", "@TEXT@"], None),
        "decision add": (
            [*ps, "decision", "add", "--context", "bench", "--decision", "@TEXT@", "--reason", "measuring"],
            None,
        ),
        "decision show": ([*ps, "decision", "show", show_id], None),
        "task start": ([*ps, "task", "start", "@TEXT@"], None),
        "task done": ([*ps, "task", "done"], task),
        "blocker resolve": ([*ps, "blocker", "resolve", "@ID@", "--resolution", "@TEXT@"], blocker),
        "phase complete": ([*ps, "phase", "complete", "@N@"], phase),
        "decision list": ([*ps, "decision", "list"], None),
        "blocker list": ([*ps, "blocker", "list"], blocker_written),
        "session list": ([*ps, "session", "list"], session_written),
        "resume": ([*ps, "resume"], None),
        "check, warm": ([*ps, "check"], warmed("check")),
        "check, after a write": ([*ps, "check"], written),
        "validate, warm": ([*ps, "validate"], warmed("validate")),
        "check, cold": ([*ps, "check"], cold),
        "validate, cold": ([*ps, "validate"], cold),
        "render": ([*ps, "render"], None),
    }


def in_git(project: Path) -> None:
    """Make a workspace a git repository with planstate's git setup and everything committed (untimed), once."""
    if (project / ".git").exists():
        return
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    for cmd in (
        ["git", "init", "-q"],
        [*planstate_command(), "git", "install"],
        ["git", "add", "-A"],
        ["git", *identity, "commit", "-q", "-m", "the benchmark's workspace"],
    ):
        setup(cmd, project)


def put_back(project: Path) -> None:
    """The cache a cold row set aside, put back in place of the one its run made (untimed): the cold rows measure
    a command with no cache, and the commands after them run with the cache they had, as they would in use."""
    local = project / ".planning" / ".local"
    if (local / ASIDE).exists():
        shutil.rmtree(local / "cache", ignore_errors=True)
        (local / ASIDE).rename(local / "cache")


def setup(cmd: list[str], cwd: Path, exits: tuple[int, ...] = (0,)) -> bytes:
    """Run a setup command (untimed) that must exit with one of `exits`; its standard output."""
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, env=ENV, check=False)
    if done.returncode not in exits:
        raise SystemExit(f"{' '.join(cmd)} in {cwd} exited {done.returncode}: {done.stderr.decode()}")
    return done.stdout


def run_once(cmd: list[str], cwd: Path) -> tuple[float, float, float]:
    """Wall-clock milliseconds, peak resident MiB and CPU milliseconds (user and system) of one process run."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = (time.perf_counter() - start) * 1000
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode not in (0, 1):  # check exits 1 on findings; anything else is a broken run
        raise SystemExit(f"{' '.join(cmd)} in {cwd} exited {proc.returncode}: {err}")
    return elapsed, usage.ru_maxrss / 1024, (usage.ru_utime + usage.ru_stime) * 1000


def first_decision(project: Path) -> str:
    """The whole id of the oldest decision (its file name starts with it, then `-` and its title's slug): a prefix
    would be checked against every decision's id, as a short id must be."""
    names = sorted(p.name for p in (project / ".planning" / "decisions").iterdir() if p.suffix == ".md")
    return "-".join(names[0].split("-")[:2]).removesuffix(".md")


Figures = dict[str, dict[int, tuple[float, float, float]]]  # by command and size: wall ms, peak MiB, CPU ms


def measure(folder: Path, sizes: list[int], runs: int, slow_runs: int, names: list[str]) -> Figures:
    """Median milliseconds, the largest peak MiB and median CPU milliseconds of each named command on each
    workspace."""
    times: dict[str, dict[int, list[float]]] = {name: {s: [] for s in sizes} for name in names}
    cpus: dict[str, dict[int, list[float]]] = {name: {s: [] for s in sizes} for name in names}
    peaks: dict[str, dict[int, float]] = {name: dict.fromkeys(sizes, 0.0) for name in names}
    counter = 0
    for round_ in range(runs):
        for name in names:
            _goal, slow = GOALS[name]
            if slow and round_ >= slow_runs:
                continue
            for size in sizes:
                project = folder / str(size)
                table = commands(project, first_decision(project))
                cmd, before = table[name]
                counter += 1
                words = {"@TEXT@": f"Step {counter} of the benchmark", **((before() if before else None) or {})}
                for word, value in words.items():
                    cmd = [part.replace(word, value) for part in cmd]
                ms, mib, cpu = run_once(cmd, project)
                put_back(project)
                times[name][size].append(ms)
                cpus[name][size].append(cpu)
                peaks[name][size] = max(peaks[name][size], mib)
        print(f"round {round_ + 1} of {runs} done", file=sys.stderr)
    return {
        name: {
            s: (statistics.median(times[name][s]), peaks[name][s], statistics.median(cpus[name][s]))
            for s in sizes
            if times[name][s]
        }
        for name in names
    }


def chosen(only: str | None) -> list[str]:
    """The commands to measure: those named in ONLY (comma-separated) with the floors, or all of them."""
    if only is None:
        return list(GOALS)
    # Names such as "check, cold" hold a comma: two pieces that together make a name are that name.
    parts = [part.strip() for part in only.split(",")]
    wanted: set[str] = set()
    i = 0
    while i < len(parts):
        pair = f"{parts[i]}, {parts[i + 1]}" if i + 1 < len(parts) else ""
        if pair in GOALS:
            wanted.add(pair)
            i += 2
            continue
        if parts[i]:
            wanted.add(parts[i])
        i += 1
    unknown = sorted(wanted - set(GOALS))
    if unknown:
        raise SystemExit(f"scale.py: no command named {', '.join(unknown)}; the commands are: {', '.join(GOALS)}")
    return [name for name in GOALS if name in wanted or GOALS[name][0] == "floor"]


def verdict(name: str, row: dict[int, tuple[float, float, float]], floors: dict[int, float]) -> tuple[str, bool | None]:
    """The goal of a row, in words, and whether the largest workspace meets it (None: no goal)."""
    kind, _slow = GOALS[name]
    small, large = min(row), max(row)
    ms, mib, _cpu = row[large]
    memory_ok = mib < MEMORY_MIB
    if kind in GROWTH:
        limit = GROWTH[kind]
        return f"<= {limit}x", memory_ok and ms <= limit * row[small][0]
    if kind == "warm":
        return f"< {WARM_MS} ms", memory_ok and ms < WARM_MS
    if kind == "cold":
        return "<= 2x all-files floor", memory_ok and ms <= 2 * floors[large]
    return "", None


def report(figures: Figures, sizes: list[int]) -> str:
    """The figures as a markdown table: milliseconds (peak MiB) per size, the growth, the growth of CPU time (user
    and system: a busy machine stretches wall time far more), the goal and the verdict (by wall time, as the goals
    are stated), and for a row with a growth goal its growth once what its stat floor grows is taken away (what one
    `lstat` of each file the command scans adds from the smallest workspace to the largest, measured in the same
    run: the part of its growth that no scan which notices every hand edit can avoid; `SCANS`)."""
    floors = {s: figures["floor, all files"][s][0] for s in sizes}
    head = [
        "command",
        *(f"{s:,} records" for s in sizes),
        "growth",
        "CPU growth",
        "less the stat floor's",
        "goal",
        "met",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, row in figures.items():
        if not row:
            continue
        cells = [f"{row[s][0]:,.0f} ({row[s][1]:.0f} MiB)" if s in row else "" for s in sizes]
        small, large = min(row), max(row)
        growth = row[large][0] / row[small][0]
        cpu = f"{row[large][2] / row[small][2]:.2f}x" if row[small][2] else ""
        above = ""
        stat = figures.get(SCANS.get(name, ""), {})
        if GOALS[name][0] in GROWTH and small in stat and large in stat:
            above = f"{(row[large][0] - (stat[large][0] - stat[small][0])) / row[small][0]:.2f}x"
        goal, met = verdict(name, row, floors)
        shown = "" if met is None else ("yes" if met else "NO")
        lines.append("| " + " | ".join([name, *cells, f"{growth:.2f}x", cpu, above, goal, shown]) + " |")
    return "\n".join(lines)


def main() -> int:
    """Build what is missing, measure, print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated record counts")
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--slow-runs", type=int, default=1, help="rounds of the cold commands (default 1)")
    parser.add_argument("--only", help='commands to measure, comma-separated: "status,check, cold" (floors always run)')
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--no-gsd", action="store_true", help="skip the side-by-side run against GSD")
    parser.add_argument("--gsd-install", type=Path, help="a folder where get-shit-done-cc is installed already")
    parser.add_argument("--git", action="store_true", help="measure in git repositories set up as the docs say")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    ENV.update({"PLANSTATE_NOW": NOW, "PLANSTATE_ACTOR": "bench"})
    os.environ.update({"PLANSTATE_NOW": NOW, "PLANSTATE_ACTOR": "bench"})
    for size in sizes:
        if not (args.folder / str(size)).exists():
            build(args.folder / str(size), size)
        if args.git:
            in_git(args.folder / str(size))
    names = chosen(args.only)
    compile_package()
    figures = measure(args.folder, sizes, args.runs, args.slow_runs, names)
    if args.json:
        print(json.dumps({name: {str(s): v for s, v in row.items()} for name, row in figures.items()}, indent=2))
    else:
        print(report(figures, sizes))
    if not args.no_gsd:
        sys.stdout.flush()
        extra = ["--gsd", str(args.gsd_install)] if args.gsd_install else []
        subprocess.run(
            [sys.executable, str(HERE / "gsd_side_by_side.py"), "--runs", str(max(args.runs, 5)), *extra], check=False
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
