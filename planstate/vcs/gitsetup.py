"""`planstate git install` and `uninstall`: planstate's lines in `.planning/.gitattributes` and this clone's config.

Storage layer. The attributes are shared (the file is committed); the git config that makes them
work is per clone (git never pushes or clones it), and git silently falls back to a text merge
when an attribute names a driver the clone has not configured: `unconfigured` finds that case
for `planstate check`. docs/cli.md and docs/git.md describe the commands.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
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


def command() -> str:
    """How git should run planstate: `planstate` when that name on PATH runs this very installation (so upgrades
    carry over), else this Python with `-m planstate` (absolute and shell-quoted: git runs it through `sh`)."""
    found = shutil.which("planstate")
    if found is not None and _runs_this(Path(found)):
        return "planstate"
    return f"{shlex.quote(sys.executable)} -m planstate"


def _runs_this(script: Path) -> bool:
    """Tell whether a `planstate` found on PATH is the program running now: the very script that was started, or a
    console script whose `#!` line names this Python (by its path, not its target: each venv links the same one)."""
    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    try:
        if started is not None and started.name == script.name and os.path.samefile(started, script):
            return True
        with script.open("rb") as handle:
            first = handle.readline(4096)
    except OSError:
        return False
    if not first.startswith(b"#!"):
        return False
    words = first[2:].decode("utf-8", errors="replace").split()
    return bool(words) and os.path.normpath(words[0]) == os.path.normpath(sys.executable)


def wanted_config(cmd: str | None = None) -> dict[str, str]:
    """The git config `install` sets (keys as git prints them, in lowercase), for the command `cmd` (`command()`)."""
    cmd = cmd or command()
    return {
        f"merge.{DRIVER}.name": NAME,
        f"merge.{DRIVER}.driver": f"{cmd} git merge-driver %O %A %B %L %P",
        f"diff.{DRIVER}.textconv": f"{cmd} git textconv",
        f"diff.{DRIVER}.cachetextconv": "true",
    }


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
        if self.action == "install" and self.attributes in ("created", "added", "replaced"):
            out.append(f"next: commit {self.file}; run `planstate git install` once in every other clone too")
        if not self.git:
            out.append("not inside a git work tree: no git config to remove")
        return "\n".join(line for line in out if line)


@dataclass
class Status:
    """Whether planstate's merge driver and textconv are installed in a workspace and this clone."""

    file: str
    attributes: str  # installed, edited or absent (see block_state)
    git: bool  # inside a git work tree
    config: dict[str, str]  # planstate's keys in this repository's own config
    wanted: dict[str, str]  # what `install` would set

    @property
    def installed(self) -> bool:
        """Whether `install` would change nothing."""
        return (
            self.attributes == "installed" and self.git and all(self.config.get(k) == v for k, v in self.wanted.items())
        )

    def to_dict(self) -> dict[str, Any]:
        """The status as JSON-ready data."""
        return {
            "installed": self.installed,
            "attributes": {"path": self.file, "state": self.attributes},
            "git": self.git,
            "config": self.config,
            "wanted": self.wanted,
        }


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
    report = Report("install", shown, "unchanged")
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
    """Whether planstate's lines are in `.planning/.gitattributes` and this clone's git config has the drivers."""
    _path, shown, before = _read_attributes(ctx)
    text = before.decode("utf-8", errors="surrogateescape") if before is not None else None
    inside = git.toplevel(ctx.root) is not None
    return Status(shown, block_state(text), inside, _local_config(ctx) if inside else {}, wanted_config())


# ---------------------------------------------------------------------------- for `planstate check`


def unconfigured(root: Path, listed: Callable[[], list[str]]) -> dict[str, list[str]]:
    """The planning files (those `listed()` gives, relative to the `.planning/` folder `root`) that git gives
    `merge=planstate` or `diff=planstate` while no git config of this clone (any scope) defines that driver, by
    attribute (`merge`, `diff`): git would silently merge them as text, or diff their raw text. Empty outside a git
    work tree. At most two git calls: the config, and only when a driver is missing, one `git check-attr` for every
    path (only then are the paths listed: 17,000 of them take a while); none when no `.git` is in sight."""
    if not git.maybe_in_work_tree(root):
        return {}
    config = git.config_values(root, CONFIG_PATTERN)
    if config is None:
        return {}
    missing = [attribute for attribute, keys in NEEDED.items() if not any(key in config for key in keys)]
    if not missing:
        return {}
    paths = listed()
    found = git.check_attr(root, missing, paths)
    if not found:
        return {}
    out: dict[str, list[str]] = {}
    for path in paths:
        for attribute in missing:
            if found.get(path, {}).get(attribute) == DRIVER:
                out.setdefault(attribute, []).append(path)
    return out


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
