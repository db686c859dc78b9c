"""`planstate git install`, `uninstall` and `status`: planstate's lines in `.planning/.gitattributes` and this
clone's config.

Storage layer. The attributes are shared (the file is committed); the git config that makes them
work is per clone (git never pushes or clones it), and git silently falls back to a text merge
when an attribute names a driver the clone has not configured: `survey` finds that case
for `planstate check`. Git runs the configured commands through `sh` from whatever shell started
it, so they name this Python by its absolute path and fall back to git's own diff and merge when
it cannot run planstate; `status` runs them from a plain shell, and `fragile` tells `check` of
one that may not run, without running it. docs/cli.md and docs/git.md describe the commands.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core import git
from planstate.core.errors import UsageError
from planstate.core.files import atomic_write, read_bytes, real_target

if TYPE_CHECKING:
    from planstate.store.context import Context

ATTRIBUTES = ".gitattributes"  # inside .planning/: a deeper .gitattributes wins over the root one
DRIVER = "planstate"  # the name in `merge=planstate diff=planstate`, and the config subsection
BEGIN = "# planstate git install: begin (`planstate git uninstall` removes these lines)"
END = "# planstate git install: end"
RULES = ("*.md merge=planstate diff=planstate", "history.jsonl merge=planstate")
BLOCK = (BEGIN, *RULES, END)
NAME = "planstate field-level merge of .planning files"
SECTIONS = (f"merge.{DRIVER}", f"diff.{DRIVER}")
CONFIG_PATTERN = rf"^(merge|diff)\.{DRIVER}\."
# The config a clone needs for each attribute; a diff driver works with a textconv or a whole diff command.
NEEDED = {"merge": (f"merge.{DRIVER}.driver",), "diff": (f"diff.{DRIVER}.textconv", f"diff.{DRIVER}.command")}

_BEGIN = re.compile(r"#\s*planstate git install:\s*begin\b")
_END = re.compile(r"#\s*planstate git install:\s*end\b")


def command(python: str | None = None) -> str:
    """How git runs planstate: this Python (or `python`) by its absolute path with `-m planstate`, shell-quoted (git
    runs its drivers through `sh`). Never a bare `planstate`: that runs only where this installation is on PATH, not
    in another terminal, an IDE's git, a GUI client or a teammate's hook."""
    return f"{shlex.quote(python or sys.executable)} -m planstate"


WHY = (
    "this installation's Python by its absolute path, so git finds it from any shell, with or without its virtual "
    "environment on PATH"
)
FALLBACK = "where it cannot run, `git diff` shows the raw text and a merge is git's own, with conflict markers"
CANNOT_RUN = "planstate could not run"  # the start of the line the fallbacks print on stderr


def wanted_config(python: str | None = None) -> dict[str, str]:
    """The git config `install` sets (keys as git prints them, in lowercase), for this Python (or `python`): each
    command runs planstate, and falls back to what git does without planstate when planstate cannot run."""
    py = shlex.quote(python or sys.executable)
    run = command(python)
    # The driver's own exit 1 means "conflict", and a Python that cannot import planstate exits 1 too: a probe first
    # tells "cannot run" (then git's own merge-file marks the conflicts) from a conflict planstate marked.
    driver = (
        f"if {py} -c 'import planstate.vcs.driver' 2>/dev/null; then {run} git merge-driver %O %A %B %L %P; "
        f"else echo planstate: merge: %P: {CANNOT_RUN}, merged by git merge-file instead >&2; "
        f"{git.MERGE_FILE}; fi"
    )
    # git appends the file's name to the command (`"$@"`), so a function takes it. textconv writes nothing before it
    # is done: when it fails (no such Python, no planstate in it) there is nothing to mix with the raw text.
    textconv = (
        f'planstate_textconv() {{ {run} git textconv "$1" 2>/dev/null || '
        f'{{ echo planstate: textconv: "$1": {CANNOT_RUN}, showing the raw text >&2; cat "$1"; }}; }}; '
        "planstate_textconv"
    )
    return {
        f"merge.{DRIVER}.name": NAME,
        f"merge.{DRIVER}.driver": driver,
        f"diff.{DRIVER}.textconv": textconv,
        f"diff.{DRIVER}.cachetextconv": "true",
    }


COMMANDS = {f"merge.{DRIVER}.driver": "merge-driver", f"diff.{DRIVER}.textconv": "textconv"}  # key: subcommand
# What git does when a configured command cannot run and has no fallback (what the issue calls data loss).
WITHOUT = {
    "merge-driver": "`git merge` keeps only our side of a file both sides changed, without conflict markers",
    "textconv": "`git diff` fails (exit 128), `git show` and `git log -p` show no diff",
}
# What git does instead when a configured command with a fallback cannot run planstate.
FALLEN_BACK = {
    "merge-driver": "git merges planning files as text, with conflict markers, as without planstate",
    "textconv": "`git diff` shows planning files' raw text, as without planstate",
}
PLAIN_PATH = "/usr/bin:/bin"  # the PATH of a shell without any virtual environment (a GUI client, a fresh terminal)
_RESERVED = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "exec", "command"}
_OPERATOR = frozenset("();<>|&")


def planstate_program(value: str, subcommand: str) -> str | None:
    """How a configured command runs planstate (`planstate`, `'/venv/bin/python' -m planstate`): the words before
    `git SUBCOMMAND` in the first simple command that has them, shell-quoted; None when none has."""
    lexer = shlex.shlex(value, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words: list[str] = []
    try:
        for token in lexer:
            if token and set(token) <= _OPERATOR:
                words = []
                continue
            words.append(token)
            if words[-2:] == ["git", subcommand]:
                program = words[:-2]
                while program and program[0] in _RESERVED:
                    program = program[1:]
                return shlex.join(program) if program else None
    except ValueError:  # an unclosed quote: not a command sh would run
        return None
    return None


def has_fallback(value: str) -> bool:
    """Whether a configured command does something else when planstate fails (`||`, or an `if` with an `else`)."""
    return bool(re.search(r"\|\||\belse\b", value))


def fragile(value: str, subcommand: str) -> str | None:
    """Why a configured command may not run planstate from another shell, and what git does then, told without
    running anything (for `planstate check`): it names its program alone (found only where PATH has it) with no
    fallback, or by a path that is not there; None when neither (or when it runs no planstate command at all)."""
    program = planstate_program(value, subcommand)
    if program is None:
        return None
    first = shlex.split(program)[0]
    if "/" not in first and not has_fallback(value):
        why = f"runs `{program}` by its name alone: in a shell without it on PATH (an IDE, a GUI client)"
    elif os.path.isabs(first) and not os.access(first, os.X_OK):
        why = f"runs {first}, which is not there (a virtual environment moved or removed?): meanwhile"
    else:
        return None
    return f"{why} {(FALLEN_BACK if has_fallback(value) else WITHOUT)[subcommand]}"


# ---------------------------------------------------------------------------- planstate's lines in .gitattributes


def _lines(text: str) -> list[str]:
    """The lines of a text, each with its line break (only `\\n` breaks a line, as git reads .gitattributes)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _rule(line: str) -> bool:
    """Tell whether a line is one of planstate's rules (spacing aside)."""
    return " ".join(line.split()) in RULES


def block_spans(lines: list[str]) -> list[tuple[int, int]]:
    """Where planstate's lines are, as [start, stop) line index ranges: each begin marker through its end marker
    (whatever lies between: the markers say those lines are planstate's); a begin without an end, with the rules
    right after it; an end without a begin, with the rules right before it. Every other line is someone else's."""
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        if _BEGIN.match(line):
            span = _from_begin(lines, index)
        elif _END.match(line):
            span = _to_end(lines, index, spans[-1][1] if spans else 0)
        else:
            index += 1
            continue
        spans.append(span)
        index = span[1]
    return spans


def _from_begin(lines: list[str], begin: int) -> tuple[int, int]:
    """The span a begin marker starts: through the next end marker, unless another begin comes first; without an
    end, the begin and the rules right after it."""
    stop = begin + 1
    while stop < len(lines) and not _BEGIN.match(lines[stop].strip()) and not _END.match(lines[stop].strip()):
        stop += 1
    if stop < len(lines) and _END.match(lines[stop].strip()):
        return begin, stop + 1
    stop = begin + 1
    while stop < len(lines) and _rule(lines[stop]):
        stop += 1
    return begin, stop


def _to_end(lines: list[str], end: int, floor: int) -> tuple[int, int]:
    """The span of an end marker without a begin: the rules right before it (not before `floor`) and the end."""
    start = end
    while start > floor and _rule(lines[start - 1]):
        start -= 1
    return start, end + 1


def with_block(text: str) -> str:
    """`text` with exactly one canonical block of planstate's lines: an existing (even edited or partial) block is
    replaced where it stands, so lines after it still override it; without one, the block is appended. The
    text's line breaks (`\\n` or `\\r\\n`) are kept."""
    lines = _lines(text)
    spans = block_spans(lines)
    if not spans:
        newline = "\r\n" if "\r\n" in text else "\n"
        lead = text if not text or text.endswith("\n") else text + newline
        return lead + "".join(line + newline for line in BLOCK)
    newline = "\r\n" if lines[spans[0][0]].endswith("\r\n") else "\n"  # the old block's own line breaks
    block = [line + newline for line in BLOCK]
    out: list[str] = []
    cursor = 0
    for number, (start, stop) in enumerate(spans):
        out.extend(lines[cursor:start])
        if number == 0:
            out.extend(block)
        cursor = stop
    out.extend(lines[cursor:])
    return "".join(out)


def without_block(text: str) -> str:
    """`text` without planstate's lines (every block, edited or partial); every other line is kept as it is."""
    lines = _lines(text)
    drop = {index for start, stop in block_spans(lines) for index in range(start, stop)}
    return "".join(line for index, line in enumerate(lines) if index not in drop)


def block_state(text: str | None) -> str:
    """`installed` (exactly the canonical block, once), `edited` (planstate's lines, but not exactly those), or
    `absent` (none, or no file: None)."""
    if text is None:
        return "absent"
    lines = _lines(text)
    spans = block_spans(lines)
    if not spans:
        return "absent"
    if len(spans) == 1:
        start, stop = spans[0]
        if [line.rstrip("\r\n") for line in lines[start:stop]] == list(BLOCK):
            return "installed"
    return "edited"


# ---------------------------------------------------------------------------- reports


@dataclass
class Report:
    """What `install` or `uninstall` changed: the attributes file, and each git config key set or removed."""

    action: str  # install or uninstall
    file: str  # .planning/.gitattributes, as shown
    attributes: str  # created, added, replaced, unchanged, removed, deleted (emptied, so removed) or absent
    lines: int = 0  # lines added (install) or removed (uninstall)
    config_set: dict[str, tuple[str | None, str]] = field(default_factory=dict)  # key: (old value, new value)
    config_removed: dict[str, str] = field(default_factory=dict)  # key: the value it had
    git: bool = True  # inside a git work tree (uninstall outside one touches no config)
    command: str | None = None  # install: how git runs planstate (`command()`)

    @property
    def changed(self) -> bool:
        """Whether anything was written."""
        return self.attributes not in ("unchanged", "absent") or bool(self.config_set or self.config_removed)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "action": self.action,
            "changed": self.changed,
            "attributes": {"path": self.file, "change": self.attributes, "lines": self.lines},
            "config": {
                "set": [{"key": key, "value": new, "was": old} for key, (old, new) in self.config_set.items()],
                "unset": [{"key": key, "was": value} for key, value in self.config_removed.items()],
            },
            "git": self.git,
            "command": {"runs": self.command, "why": WHY, "fallback": FALLBACK} if self.command else None,
        }

    def to_text(self) -> str:
        """One line per change, or one line saying there was nothing to do."""
        if not self.changed:
            state = "already installed" if self.action == "install" else "not installed"
            tail = "" if self.git else " (not inside a git work tree: no git config to look at)"
            return f"{state}: nothing to do{tail}"
        out: list[str] = []
        count = f"{self.lines} line{'s' if self.lines != 1 else ''}"
        out.append(
            {
                "created": f"created {self.file} with {count}",
                "added": f"added {count} to {self.file}",
                "replaced": f"replaced planstate's edited lines in {self.file} with the {count} it writes",
                "removed": f"removed {count} from {self.file}",
                "deleted": f"removed {count} from {self.file}, and the file, which held nothing else",
            }.get(self.attributes, "")
        )
        for key, (old, new) in self.config_set.items():
            out.append(f"set {key} = {new}" + (f" (was {old})" if old is not None else ""))
        for key, value in self.config_removed.items():
            out.append(f"unset {key} (was {value})")
        if self.command and self.config_set:
            out.append(f"git runs planstate as {self.command}: {WHY}; {FALLBACK}")
        if self.action == "install" and self.attributes in ("created", "added", "replaced"):
            out.append(f"next: commit {self.file}; run `planstate git install` once in every other clone too")
        if not self.git:
            out.append("not inside a git work tree: no git config to remove")
        return "\n".join(line for line in out if line)


@dataclass
class Runs:
    """Whether one configured command (the merge driver's, the textconv's) runs planstate from a plain shell."""

    key: str  # merge.planstate.driver or diff.planstate.textconv
    program: str | None  # how it runs planstate (`planstate`, `'/venv/bin/python' -m planstate`); None: it does not
    fallback: bool  # whether it does what git does without planstate when planstate cannot run
    problem: str | None = None  # why it does not run from a plain shell (None: it does)

    def to_dict(self) -> dict[str, Any]:
        """The command's check as JSON-ready data."""
        return {
            "key": self.key,
            "program": self.program,
            "runs": self.problem is None,
            "fallback": self.fallback,
            "problem": self.problem,
        }


@dataclass
class Status:
    """Whether planstate's merge driver and textconv are installed in a workspace and this clone, and whether the
    commands configured run from a plain shell (no virtual environment on PATH)."""

    file: str
    attributes: str  # installed, edited or absent (see block_state)
    git: bool  # inside a git work tree
    config: dict[str, str]  # planstate's keys in this repository's own config
    wanted: dict[str, str]  # what `install` would set
    commands: list[Runs] = field(default_factory=list)  # the configured commands, checked

    @property
    def installed(self) -> bool:
        """Whether `install` would change nothing."""
        return (
            self.attributes == "installed" and self.git and all(self.config.get(k) == v for k, v in self.wanted.items())
        )

    @property
    def problems(self) -> list[str]:
        """One line per thing that is wrong: missing lines or config, a command that does not run from a plain shell."""
        out: list[str] = []
        if not self.git:
            out.append("not inside a git work tree: git runs no driver here")
            return out
        if self.attributes != "installed":
            out.append(f"{self.file}: planstate's lines are {self.attributes}; run `planstate git install`")
        for key in self.wanted:
            if key not in self.config:
                out.append(f"{key} is not set; run `planstate git install`")
        out.extend(f"{check.key}: {check.problem}" for check in self.commands if check.problem)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The status as JSON-ready data."""
        return {
            "installed": self.installed,
            "attributes": {"path": self.file, "state": self.attributes},
            "git": self.git,
            "config": self.config,
            "wanted": self.wanted,
            "commands": [check.to_dict() for check in self.commands],
            "problems": self.problems,
        }

    def to_text(self) -> str:
        """The attributes' state, each key as configured and how its command runs, then one line per problem."""
        lines = [f"{self.file}: {self.attributes}"]
        checked = {check.key: check for check in self.commands}
        for key, value in self.wanted.items():
            current = self.config.get(key)
            said = "not set" if current is None else "as install writes it" if current == value else "set"
            line = f"{key}: {said}"
            check = checked.get(key)
            if check is not None and check.program is not None:
                verdict = "runs" if check.problem is None else "does not run"
                line += f"; {check.program} {verdict} from a plain shell"
                line += ", git's own as the fallback" if check.fallback else ", no fallback"
            lines.append(line)
        lines.extend(f"problem: {problem}" for problem in self.problems)
        if self.installed and not self.problems:
            lines.append("installed: git diff and git merge run planstate from any shell")
        return "\n".join(lines)


# ---------------------------------------------------------------------------- install, uninstall, status


def _read_attributes(ctx: Context) -> tuple[Path, str, bytes | None]:
    """The attributes file (its real path once links are checked), how it is shown, and its bytes (None: no file)."""
    path = ctx.root / ATTRIBUTES
    shown = ctx.display(path)
    if not path.exists() and not path.is_symlink():
        return path, shown, None
    return real_target(path, ctx.root, ctx.root.parent), shown, read_bytes(path, ctx.root, ctx.root.parent)


def _local_config(ctx: Context) -> dict[str, str]:
    """planstate's keys in this repository's own git config (the last value of a key set several times)."""
    found = git.config_values(ctx.root, CONFIG_PATTERN, local=True) or {}
    return {key: values[-1] for key, values in found.items()}


def install(ctx: Context) -> Report:
    """Write planstate's lines into `.planning/.gitattributes` and set this clone's git config for the merge driver
    and the textconv; change only what differs. Outside a git work tree nothing is written (UsageError)."""
    if git.toplevel(ctx.root) is None:
        raise UsageError(
            f"{ctx.root.parent} is not inside a git work tree (or git is not installed): run `git init` (or clone) "
            "first, then `planstate git install` again; nothing was written"
        )
    path, shown, before = _read_attributes(ctx)
    text = before.decode("utf-8", errors="surrogateescape") if before is not None else ""
    state = block_state(text if before is not None else None)
    after = with_block(text)
    report = Report("install", shown, "unchanged", command=command())
    if after != text:
        atomic_write(path, after.encode("utf-8", errors="surrogateescape"), expected=before, shown=shown)
        report.attributes = "created" if before is None else "added" if state == "absent" else "replaced"
        report.lines = len(BLOCK)
    current = _local_config(ctx)
    for key, value in wanted_config().items():
        if current.get(key) != value:
            git.config_set(ctx.root, key, value)
            report.config_set[key] = (current.get(key), value)
    return report


def uninstall(ctx: Context) -> Report:
    """Remove planstate's lines from `.planning/.gitattributes` (the file too when nothing else is left in it) and
    the `merge.planstate` and `diff.planstate` sections of this clone's git config; nothing else."""
    path, shown, before = _read_attributes(ctx)
    report = Report("uninstall", shown, "absent" if before is None else "unchanged")
    if before is not None:
        _remove_block(path, shown, before, report)
    report.git = git.toplevel(ctx.root) is not None
    if report.git:
        _remove_config(ctx, report)
    return report


def _remove_block(path: Path, shown: str, before: bytes, report: Report) -> None:
    """Take planstate's lines out of the attributes file, deleting the file when nothing else is left."""
    text = before.decode("utf-8", errors="surrogateescape")
    after = without_block(text)
    if after == text:
        return
    report.lines = len(_lines(text)) - len(_lines(after))
    if after:
        atomic_write(path, after.encode("utf-8", errors="surrogateescape"), expected=before, shown=shown)
        report.attributes = "removed"
    else:
        path.unlink()
        report.attributes = "deleted"


def _remove_config(ctx: Context, report: Report) -> None:
    """Remove the `merge.planstate` and `diff.planstate` sections this clone's own git config has."""
    current = git.config_values(ctx.root, CONFIG_PATTERN, local=True) or {}
    for section in SECTIONS:
        keys = {key: values[-1] for key, values in current.items() if key.startswith(section + ".")}
        if keys:
            git.config_remove_section(ctx.root, section)
            report.config_removed.update(keys)


def status(ctx: Context) -> Status:
    """Whether planstate's lines are in `.planning/.gitattributes` and this clone's git config has the drivers, and
    whether each configured command runs planstate from a plain shell (it is run: one process per command)."""
    _path, shown, before = _read_attributes(ctx)
    text = before.decode("utf-8", errors="surrogateescape") if before is not None else None
    top = git.toplevel(ctx.root)
    config = _local_config(ctx) if top is not None else {}
    found = Status(shown, block_state(text), top is not None, config, wanted_config())
    for key, subcommand in COMMANDS.items():
        if key in config and top is not None:
            found.commands.append(_runs(key, config[key], subcommand, top))
    return found


def _runs(key: str, value: str, subcommand: str, top: Path) -> Runs:
    """Run the planstate part of a configured command (`PROGRAM -V`) as git would from a plain shell: through
    `sh`, at the work tree's top, PATH only the system's folders, no virtual environment."""
    import subprocess

    program = planstate_program(value, subcommand)
    check = Runs(key, program, has_fallback(value))
    if program is None:
        check.problem = f"it does not run `planstate git {subcommand}`; `planstate git install` writes one that does"
        return check
    env = {name: text for name, text in os.environ.items() if name not in ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH")}
    env["PATH"] = PLAIN_PATH
    try:
        done = subprocess.run(
            ["sh", "-c", f"{program} -V"],
            cwd=top,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=git.TIMEOUT * 3,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        said, ok = str(exc), False
    else:
        said = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        ok = done.returncode == 0 and done.stdout.startswith("planstate ")
    if not ok:
        effect = (FALLEN_BACK if check.fallback else WITHOUT)[subcommand]
        check.problem = (
            f"{program} does not run from a plain shell (PATH={PLAIN_PATH}, no virtual environment: {said}), so "
            f"{effect}; run `planstate git install` again"
        )
    return check


# ---------------------------------------------------------------------------- for `planstate check`


def survey(root: Path, listed: Callable[[], list[str]]) -> tuple[dict[str, list[str]], dict[str, tuple[str, str]]]:
    """What `planstate check` says about the drivers: the planning files (those `listed()` gives, relative to the
    `.planning/` folder `root`) that git gives `merge=planstate` or `diff=planstate` while no git config of this
    clone (any scope) defines that driver, by attribute (`merge`, `diff`: git would silently merge them as text, or
    diff their raw text), and each configured command that may not run planstate from another shell (key: (attribute,
    why), see `fragile`). Empty outside a git work tree. At most two git calls: the config, and only when a driver is
    missing, one `git check-attr` for every path (only then are the paths listed: 17,000 of them take a while);
    none when no `.git` is in sight. Nothing else is run."""
    if not git.maybe_in_work_tree(root):
        return {}, {}
    config = git.config_values(root, CONFIG_PATTERN)
    if config is None:
        return {}, {}
    weak: dict[str, tuple[str, str]] = {}
    for key, subcommand in COMMANDS.items():
        why = fragile(config[key][-1], subcommand) if config.get(key) else None
        if why is not None:
            weak[key] = (key.split(".", 1)[0], why)
    missing = [attribute for attribute, keys in NEEDED.items() if not any(key in config for key in keys)]
    if not missing:
        return {}, weak
    paths = listed()
    found = git.check_attr(root, missing, paths)
    if not found:
        return {}, weak
    out: dict[str, list[str]] = {}
    for path in paths:
        for attribute in missing:
            if found.get(path, {}).get(attribute) == DRIVER:
                out.setdefault(attribute, []).append(path)
    return out, weak


def attribute_line(root: Path, attribute: str) -> tuple[Path, int] | None:
    """The first line that gives `attribute=planstate`, in the attributes file nearest to `root` (the `.planning/`
    folder; then each folder above it, up to the work tree's top, then `.git/info/attributes`); None when no such
    file names it (a global attributes file may)."""
    pattern = re.compile(rf"(?:^|\s){attribute}={DRIVER}(?:\s|$)")
    folder = root
    candidates: list[Path] = []
    while True:
        candidates.append(folder / ATTRIBUTES)
        if (folder / ".git").exists() or folder.parent == folder:
            candidates.append(folder / ".git" / "info" / "attributes")
            break
        folder = folder.parent
    for candidate in candidates:
        try:
            text = candidate.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.lstrip().startswith("#") and pattern.search(line):
                return candidate, number
    return None
