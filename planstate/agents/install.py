"""Installing, removing and inspecting planstate's hooks in an agent's settings (Cursor: its rule file)."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planstate.agents import launch, settings
from planstate.agents.spec import NAMES, Agent, agent
from planstate.core.errors import UsageError
from planstate.core.files import atomic_write, read_bytes


@dataclass
class Change:
    """What `hooks install` or `hooks uninstall` did (or, with dry_run, would do) to one file."""

    agent: str
    action: str  # "install" or "uninstall"
    scope: str  # "project" or "global"
    path: Path
    shown: str
    before: bytes | None
    after: bytes | None
    dry_run: bool = False
    events: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    instructions: Change | None = None  # the planstate block of the agent's instructions file, when it was asked for

    @property
    def changed(self) -> bool:
        """Whether the file's bytes change."""
        return self.before != self.after

    def to_dict(self) -> dict[str, Any]:
        """The change as JSON-ready data (`planstate hooks install --json`)."""
        return {
            "action": self.action,
            "agent": self.agent,
            "scope": self.scope,
            "path": self.shown,
            "changed": self.changed,
            "dry_run": self.dry_run,
            "events": self.events,
            "notes": self.notes,
            "instructions": None
            if self.instructions is None
            else {"path": self.instructions.shown, "changed": self.instructions.changed},
        }

    def diff(self) -> str:
        """A unified diff of the file's change, for `--dry-run`."""
        old = (self.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = (self.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
        name = self.shown
        lines = difflib.unified_diff(old, new, f"a/{name}" if self.before is not None else "/dev/null", f"b/{name}")
        return "".join(lines)

    def to_text(self) -> str:
        """One line saying what happened, then the notes (and with dry_run, the diff)."""
        what = ", ".join(self.events) if self.events else "its rule"
        if not self.changed:
            what = "cursor rule" if self.agent == "cursor" else f"{self.agent} hooks"
            state = "already in" if self.action == "install" else "not in"
            head = (
                f"planstate's {what} {'is' if self.agent == 'cursor' else 'are'} {state} {self.shown}; nothing changed"
            )
        else:
            verb = {"install": "installed", "uninstall": "removed"}[self.action]
            if self.dry_run:
                verb = {"install": "would install", "uninstall": "would remove"}[self.action]
            where = "in" if self.action == "install" else "from"
            head = f"{verb} planstate's {self.agent} hooks ({what}) {where} {self.shown}"
            if self.agent == "cursor":
                head = f"{verb} planstate's cursor rule {self.shown}"
        parts = [head, *self.notes]
        if self.dry_run and self.changed:
            parts.append(self.diff().rstrip("\n"))
        block = self.instructions
        if block is not None:
            verb = {"install": "added", "uninstall": "removed"}[self.action]
            if not block.changed:
                parts.append(
                    f"planstate's block is {'already in' if self.action == 'install' else 'not in'} {block.shown}"
                )
            else:
                verb = {"install": "would add", "uninstall": "would remove"}[self.action] if self.dry_run else verb
                parts.append(f"{verb} planstate's block {'in' if self.action == 'install' else 'from'} {block.shown}")
                if self.dry_run:
                    parts.append(block.diff().rstrip("\n"))
        return "\n".join(parts) + "\n"


def project_root(start: Path) -> Path:
    """The project an install writes to: the git work tree holding `start`, else `start` itself."""
    from planstate.core.git import toplevel

    return toplevel(start) or start


def _target(a: Agent, root: Path, home: Path, global_: bool) -> tuple[Path, str, str]:
    """The settings file of `a` for a scope: its path, how it is shown, and the scope."""
    if global_:
        if a.global_file is None:
            raise UsageError(
                f"{a.title} keeps no user-wide rules in a file planstate can write; install it in each project: "
                "leave out global_=True",
                argument="global_",
            )
        return home / a.global_file, f"~/{a.global_file}", "global"
    return root / a.project_file, a.project_file, "project"


def install(
    name: str,
    root: Path,
    *,
    home: Path | None = None,
    global_: bool = False,
    dry_run: bool = False,
    instructions: bool = False,
) -> Change:
    """Add planstate's hooks for agent `name` to its settings (the project's, or with `global_` the user's); other
    hooks are kept, an install that is already there changes nothing. With `instructions`, also put planstate's
    block in the agent's instructions file (CLAUDE.md, AGENTS.md, GEMINI.md). Refused, with nothing written, when
    the agent's shell cannot run `planstate` (launch.py has the rule)."""
    a = agent(name)
    home = home or Path.home()
    if instructions and a.instructions is None:
        raise UsageError(
            f"{a.title} has no instructions file planstate writes to (its rule says it all); leave out "
            "instructions=True",
            argument="instructions",
        )
    path, shown, scope = _target(a, root, home, global_)
    reach = launch.verdict()
    if reach.problem is not None:
        raise UsageError(reach.problem)
    if a.name == "cursor":
        change = _rule(a, path, shown, scope, "install", dry_run)
        change.notes.extend(reach.notes)
        return change
    current = settings.read(path, shown)
    after = current.dump(settings.with_ours(current.data, a, shown))
    change = Change(a.name, "install", scope, path, shown, current.original, after, dry_run, [h.event for h in a.hooks])
    if current.original is not None and change.changed and current.dump(current.data) != current.original:
        change.notes.append(
            f"{shown} was rewritten in its indentation; other spacing is not kept (uninstall will not bring it back)"
        )
    change.notes.extend(reach.notes)
    change.notes.extend(_advice(a, scope, root))
    if instructions:
        change.instructions = _block(a, root, home, global_, "install", dry_run)
    if change.changed and not dry_run:
        current.write(after)
    if change.instructions is not None and change.instructions.changed and not dry_run:
        _write_block(change.instructions)
    return change


def uninstall(
    name: str, root: Path, *, home: Path | None = None, global_: bool = False, dry_run: bool = False
) -> Change:
    """Remove planstate's hooks for agent `name` and nothing else (and planstate's block from the agent's
    instructions file, when there is one); a file left with nothing is removed."""
    a = agent(name)
    home = home or Path.home()
    path, shown, scope = _target(a, root, home, global_)
    if a.name == "cursor":
        return _rule(a, path, shown, scope, "uninstall", dry_run)
    current = settings.read(path, shown)
    data, places = settings.without_ours(current.data)
    events = list(places)
    if not places:
        after = current.original
    elif data == {}:
        after = None
    else:
        after = current.dump(data)
    change = Change(a.name, "uninstall", scope, path, shown, current.original, after, dry_run, events)
    try:
        block = _block(a, root, home, global_, "uninstall", dry_run) if a.instructions is not None else None
    except UsageError as exc:  # a CLAUDE.md symlinked to AGENTS.md, say: planstate never writes through it
        change.notes.append(f"left alone: {exc}")
        block = None
    if block is not None and block.before is not None:
        change.instructions = block
    if change.changed and not dry_run:
        if after is None:
            current.remove()
        else:
            current.write(after)
    if change.instructions is not None and change.instructions.changed and not dry_run:
        _write_block(change.instructions)
    return change


def _block(a: Agent, root: Path, home: Path, global_: bool, action: str, dry_run: bool) -> Change:
    """The change planstate's block makes to the agent's instructions file (not yet written)."""
    from planstate.agents import instructions

    assert a.instructions is not None
    relative = a.instructions[1] if global_ else a.instructions[0]
    path, shown = (home / relative, f"~/{relative}") if global_ else (root / relative, relative)
    settings.refuse_symlink(path, shown)
    before = read_bytes(path, path.parent) if path.exists() else None
    try:
        text = (before or b"").decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError("is not UTF-8 text", file=shown) from None
    edited = instructions.with_block(text) if action == "install" else instructions.without_block(text)
    if edited == text:
        after = before
    elif action == "uninstall" and not edited:
        after = None  # it held the block alone: planstate made it
    else:
        after = edited.encode("utf-8")
    scope = "global" if global_ else "project"
    return Change(a.name, action, scope, path, shown, before, after, dry_run)


def _write_block(change: Change) -> None:
    """Write (or, when it is left empty, delete) the instructions file of a block change."""
    if change.after is None:
        settings.Settings(change.path, change.shown, change.before, {}).remove()
        return
    change.path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(change.path, change.after, expected=change.before, shown=change.shown)


def _rule(a: Agent, path: Path, shown: str, scope: str, action: str, dry_run: bool) -> Change:
    """Write or remove Cursor's rule file; a file of the same name that planstate did not write is refused."""
    from planstate.agents.cursor import RULE

    settings.refuse_symlink(path, shown)
    before = read_bytes(path, path.parent) if path.exists() else None
    rule = RULE.encode("utf-8")
    if before is not None and before != rule:
        raise UsageError(
            "exists and is not planstate's rule; planstate leaves it alone (remove it to let planstate write it)",
            file=shown,
        )
    after = rule if action == "install" else None
    change = Change(a.name, action, scope, path, shown, before, after, dry_run)
    if change.changed and not dry_run:
        if after is None:
            settings.Settings(path, shown, before, {}).remove()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, after, shown=shown)
    return change


def _advice(a: Agent, scope: str, root: Path) -> list[str]:
    """What the person still has to do for the hooks to run."""
    if a.name != "codex":
        return []
    notes = ["Codex runs new or changed hooks only once trusted: open /hooks in Codex and trust planstate's hooks"]
    if scope == "project" and not codex_trusts(root):
        notes.append(
            f"Codex loads a project's hooks only in a trusted project: trust {root} when Codex asks "
            '(or set its trust_level = "trusted" under [projects] in ~/.codex/config.toml)'
        )
    return notes


def codex_home() -> Path:
    """Codex's folder: $CODEX_HOME, else ~/.codex."""
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def codex_trusts(root: Path) -> bool:
    """Whether Codex's config.toml marks the project trusted (only then does it load the project's hooks)."""
    import tomllib

    try:
        config = tomllib.loads((codex_home() / "config.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    projects = config.get("projects")
    if not isinstance(projects, dict):
        return False
    for key in (str(root), str(root.resolve())):
        entry = projects.get(key)
        if isinstance(entry, dict) and entry.get("trust_level") == "trusted":
            return True
    return False


@dataclass
class Status:
    """What `hooks status` found: per agent and file, planstate's hooks and what is wrong with them."""

    executable: str | None
    files: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The status as JSON-ready data (`planstate hooks status --json`)."""
        return {"executable": self.executable, "installed": self.files, "problems": self.problems, "notes": self.notes}

    def to_text(self) -> str:
        """One line per file with planstate's hooks, then one per problem, then the notes."""
        lines = [f"planstate: {self.executable}" if self.executable else "planstate: not found on PATH"]
        if not self.files:
            lines.append("no planstate hooks installed (planstate hooks install <claude|codex|gemini|cursor>)")
        for entry in self.files:
            events = ", ".join(entry["events"]) or "its rule"
            lines.append(f"{entry['agent']} ({entry['scope']}): {entry['path']}: {events}")
        lines.extend(f"problem: {problem}" for problem in self.problems)
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines) + "\n"


def status(root: Path, *, home: Path | None = None) -> Status:
    """Every settings file of every agent, in the project and the home folder, with planstate's hooks: duplicates,
    outdated entries, an untrusted Codex project and a `planstate` the agent's shell cannot run (the verdict
    install acts on) are problems."""
    home = home or Path.home()
    reach = launch.verdict()
    found = Status(reach.executable, notes=list(reach.notes))
    if reach.problem is not None:
        found.problems.append(reach.problem)
    for name in NAMES:
        a = agent(name)
        places = [(root / a.project_file, a.project_file, "project")]
        places += [(root / other, other, "project") for other in a.other_files]
        if a.global_file is not None:
            places.append((home / a.global_file, f"~/{a.global_file}", "global"))
        _agent_status(a, places, root, found)
    return found


def _agent_status(a: Agent, places: list[tuple[Path, str, str]], root: Path, found: Status) -> None:
    """Add one agent's files and problems to `found`."""
    from planstate.agents.cursor import RULE

    installed = []
    for path, shown, scope in places:
        if a.name == "cursor":
            try:
                held = read_bytes(path, path.parent) if path.exists() and not path.is_symlink() else None
            except UsageError as exc:
                found.problems.append(str(exc))
                continue
            if held is not None:
                found.files.append({"agent": a.name, "scope": scope, "path": shown, "events": []})
                if held != RULE.encode("utf-8"):
                    found.problems.append(f"{shown} differs from planstate's rule (edited by hand?)")
            continue
        try:
            current = settings.read(path, shown)
        except UsageError as exc:
            found.problems.append(str(exc))
            continue
        commands = settings.our_commands(current.data)
        if not commands:
            continue
        installed.append(shown)
        found.files.append({"agent": a.name, "scope": scope, "path": shown, "events": list(commands)})
        for event, listed in commands.items():
            if len(listed) > 1:
                found.problems.append(f"{shown}: {len(listed)} planstate hooks for {event} (duplicates)")
        if current.data != settings.with_ours(current.data, a, shown):
            found.problems.append(
                f"{shown}: planstate's {a.name} hooks are outdated; run `planstate hooks install "
                f"{a.name}{' --global' if scope == 'global' else ''}`"
            )
        if a.name == "codex" and scope == "project" and not codex_trusts(root):
            found.problems.append(f"{shown}: Codex does not trust {root}, so it does not run the project's hooks")
    if len(installed) > 1:
        found.problems.append(f"{a.name} hooks are installed in {' and '.join(installed)}: each runs (duplicates)")
