"""An agent's JSON settings file: read it safely, add or remove planstate's hooks and nothing else, write it back in
its own layout.

planstate's hooks are recognised by their command (`spec.PREFIX`), so other tools' hooks are never touched,
installing twice changes nothing, and removing them leaves no empty list or object behind.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planstate.agents.spec import PREFIX, Agent
from planstate.core.errors import UsageError
from planstate.core.files import atomic_write, read_bytes


@dataclass
class Settings:
    """A settings file as read: its bytes (None when absent), its data, and the indentation it uses."""

    path: Path
    shown: str
    original: bytes | None
    data: dict[str, Any]
    indent: str = "  "
    newline: bool = True  # whether the file ends with a line break
    crlf: bool = False
    bom: bool = False

    def dump(self, data: dict[str, Any]) -> bytes:
        """`data` as this file's JSON: its indentation, line breaks, byte-order mark and final newline."""
        text = json.dumps(data, indent=self.indent, ensure_ascii=False) + ("\n" if self.newline else "")
        if self.crlf:
            text = text.replace("\n", "\r\n")
        return ("\ufeff" if self.bom else "").encode("utf-8") + text.encode("utf-8")

    def write(self, data: bytes) -> None:
        """Replace the file atomically (refusing a symlink), creating its folder when needed."""
        refuse_symlink(self.path, self.shown)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create the folder: {exc.strerror}", file=self.shown) from None
        atomic_write(self.path, data, expected=self.original, shown=self.shown)

    def remove(self) -> None:
        """Delete the file (planstate's hooks were all it held), and its folder when that is left empty."""
        refuse_symlink(self.path, self.shown)
        try:
            self.path.unlink()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise UsageError(f"cannot remove: {exc.strerror}", file=self.shown) from None
        with contextlib.suppress(OSError):  # the folder holds other files: it stays
            self.path.parent.rmdir()


def refuse_symlink(path: Path, shown: str) -> None:
    """Refuse to read or write through a symlink: a hook file is replaced, never a file it points to."""
    if path.is_symlink():
        raise UsageError("is a symlink; planstate writes agent settings only to regular files", file=shown)


def read(path: Path, shown: str) -> Settings:
    """Read a settings file (absent is an empty one); refuse a symlink, a file that is not a JSON object."""
    refuse_symlink(path, shown)
    if not path.exists():
        return Settings(path, shown, None, {})
    raw = read_bytes(path, path.parent)
    try:
        text = raw.decode("utf-8-sig")
        data = json.loads(text) if text.strip() else {}
    except UnicodeDecodeError:
        raise UsageError("is not UTF-8 text", file=shown) from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"is not valid JSON: {exc.msg}", file=shown, line=exc.lineno, column=exc.colno) from None
    if not isinstance(data, dict):
        raise UsageError("holds JSON that is not an object", file=shown, line=1, column=1)
    found = re.search(r"\n([ \t]+)\S", text)
    return Settings(
        path,
        shown,
        raw,
        data,
        indent=found.group(1) if found else "  ",
        newline=text.endswith("\n"),
        crlf="\r\n" in text,
        bom=raw.startswith(b"\xef\xbb\xbf"),
    )


def ours(handler: Any) -> bool:
    """Whether a hook configuration is one planstate installed."""
    return isinstance(handler, dict) and str(handler.get("command", "")).startswith(PREFIX)


def our_commands(data: dict[str, Any]) -> dict[str, list[str]]:
    """planstate's commands in a settings file, by event (more than one under an event is a duplicate)."""
    found: dict[str, list[str]] = {}
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                if ours(handler):
                    found.setdefault(event, []).append(str(handler["command"]))
    return found


def without_ours(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    """A copy of `data` without planstate's hooks, and where the first of them was under each event (the index of
    its matcher group), so an install puts the new one back in the same place."""
    result = json.loads(json.dumps(data))
    hooks = result.get("hooks")
    places: dict[str, int] = {}
    if not isinstance(hooks, dict):
        return result, places
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept: list[Any] = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list) or not any(ours(h) for h in handlers):
                kept.append(group)
                continue
            places.setdefault(event, len(kept))
            rest = [h for h in handlers if not ours(h)]
            if rest:
                kept.append({**group, "hooks": rest})
        if event in places and not kept:
            del hooks[event]
        else:
            hooks[event] = kept
    if places and not hooks:
        del result["hooks"]
    return result, places


def with_ours(data: dict[str, Any], agent: Agent, shown: str) -> dict[str, Any]:
    """`data` with exactly planstate's hooks for `agent`: each in the place an earlier install left it, else last."""
    result, places = without_ours(data)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError("is not an object; planstate cannot add its hooks to it", file=shown, field="hooks")
    for hook in agent.hooks:
        groups = hooks.setdefault(hook.event, [])
        if not isinstance(groups, list):
            raise UsageError("is not a list", file=shown, field=f"hooks.{hook.event}")
        groups.insert(places.get(hook.event, len(groups)), agent.entry(hook))
    return result
