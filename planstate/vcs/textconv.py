"""The canonical view of a planning file for `git diff` (textconv): one line per field, so diffs show meaning.

`textconv` runs once per file per `git diff`, `git log -p` or `git show`, and git shows nothing
useful when it fails, so it never raises: a file it cannot read as a planning file (bad YAML,
conflict markers, binary data, another kind of markdown) comes out as its raw text, unchanged.

The view of STATE.md or a record: each field on its own line as `path: value`, fields in the
models' order and unknown keys after them (sorted), paths in planstate's one notation (dotted, a phase
by its number: `phases.2.status`), lists of strings one line per item (`key[]: item`), other lists by index,
mappings by sorted key, multi-line strings as `key: |` with the text indented below, timestamps
as ISO 8601 UTC (`2026-11-22T08:00:00Z`). Then a separator line and the body, with the volatile
attributes (`sha=`, `in=`) of generated-region begin markers removed, so re-renders don't churn.
history.jsonl: one line per entry, oldest first.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from typing import Any

from planstate.core.clock import parse_datetime
from planstate.core.layout import ARCHIVE, STATE_FILE
from planstate.model.schema import ListOf, MapOf, Model, Nested
from planstate.model.types import DateTime, Kind, Nullable
from planstate.text.paths import PHASES, format_path, shown_path

BODY_SEPARATOR = "--- body ---"
_VOLATILE = re.compile(r"[ \t]+(?:sha|in)=[^\s>]*")
_BEGIN = re.compile(r"[ \t]*<!--[ \t]*planstate:begin[ \t]")
_HISTORY_KEYS = ("at", "from", "to", "trigger", "reason", "by")


def textconv(data: bytes, path: str) -> str:
    """The canonical view of a planning file's bytes (see the module docstring); its raw text when it is not one."""
    try:
        view = _view(data, path)
    except Exception:  # git diff must always get text: anything unexpected shows the file as it is
        view = None
    return view if view is not None else raw_text(data)


def raw_text(data: bytes) -> str:
    """A file's bytes as text, undecodable bytes kept (surrogate escapes) so writing them back gives the same bytes."""
    return data.decode("utf-8", errors="surrogateescape")


def kind_of(data: dict[str, Any], path: str) -> str | None:
    """Which planning file `data` is the front matter of: state, decision, blocker, session; None for none.

    git hands textconv a temporary copy of an old version (`/tmp/XXXXXX_STATE.md`), so the
    content decides first and the folder (`decisions/`, ...) only when the content does not.
    """
    return _kind_by_content(data) or _kind_by_path(path)


# The record kind an id's prefix names, and the keys only one kind of file has (first match wins).
_ID_PREFIXES = (("dec-", "decision"), ("blk-", "blocker"), ("ses-", "session"), ("tsk-", "task"))
_SIGNATURES = (
    ("decision", ("decision", "context")),
    ("blocker", ("identified",)),
    ("blocker", ("description", "status")),
    ("session", ("agent", "started")),
    ("task", ("title", "created", "depends_on")),
)


def _kind_by_content(data: dict[str, Any]) -> str | None:
    """The kind the keys say: a STATE.md block without an id, an id's prefix, else a kind's own keys."""
    if "id" not in data and any(key in data for key in ("lifecycle", "phases", "structure")):
        return "state"
    record_id = data.get("id")
    if isinstance(record_id, str):
        for prefix, kind in _ID_PREFIXES:
            if record_id.startswith(prefix):
                return kind
    return next((kind for kind, keys in _SIGNATURES if all(key in data for key in keys)), None)


def _kind_by_path(path: str) -> str | None:
    """The kind the file's folder (`decisions/` ...) or name (`STATE.md`, or git's `XXXXXX_STATE.md`) says."""
    from planstate.model.kinds import RECORD_KINDS

    parts = path.replace("\\", "/").split("/")
    if len(parts) > 2 and parts[-2] == ARCHIVE:  # an archived record: `decisions/archive/x.md`
        parts = parts[:-2] + parts[-1:]
    folder = parts[-2] if len(parts) > 1 else ""
    state = parts[-1] == STATE_FILE or parts[-1].endswith("_" + STATE_FILE)
    return RECORD_KINDS.get(folder) or ("state" if state else None)


def _view(data: bytes, path: str) -> str | None:
    """The canonical view, or None when the file is not a planning file this view knows."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if name.endswith(".jsonl"):
        return history_view(data)
    from planstate.model.kinds import KINDS
    from planstate.text.document import Document

    doc = Document.from_bytes(data, path)
    front = doc.data
    if not doc.has_front_matter or not isinstance(front, dict):
        return None
    kind = kind_of(front, path)
    if kind is None:
        return None
    lines = field_lines(front, KINDS[kind])
    lines.append(BODY_SEPARATOR)
    return "".join(line + "\n" for line in lines) + body_view(doc.body)


def body_view(body: str) -> str:
    """The body with LF line ends and without the volatile attributes of generated-region begin markers."""
    body = body.replace("\r\n", "\n")
    if "planstate:begin" not in body:
        return body
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if _BEGIN.match(line):
            lines[i] = _VOLATILE.sub("", line)
    return "\n".join(lines)


def field_lines(data: dict[str, Any], model: type[Model]) -> list[str]:
    """The `path: value` lines of a front matter read as `model` (see the module docstring)."""
    out: list[str] = []
    if model.__name__ == "State":
        _state(data, out)
    else:
        _mapping(data, model, "", out)
    return out


def _state(data: dict[str, Any], out: list[str]) -> None:
    """STATE.md: phases are keyed by their number, counted from `structure.first_phase`."""
    from planstate.model.kinds import Phase, State

    for name, field in State.fields.items():
        if name not in data:
            continue
        phases = data[name]
        if name == "phases" and isinstance(phases, list):
            for index, phase in enumerate(phases):
                prefix = shown_path([PHASES, index], data)
                if isinstance(phase, dict):
                    _mapping(phase, Phase, prefix + ".", out)
                else:
                    _value(phase, None, prefix, out)
            continue
        _value(data[name], field.kind, name, out)
    _unknown(data, State, "", out)


def _mapping(data: dict[str, Any], model: type[Model] | None, prefix: str, out: list[str]) -> None:
    """A mapping's lines: declared fields in model order, then unknown keys sorted."""
    if model is not None:
        for name, field in model.fields.items():
            if name in data:
                _value(data[name], field.kind, prefix + name, out)
    _unknown(data, model, prefix, out)


def _unknown(data: dict[str, Any], model: type[Model] | None, prefix: str, out: list[str]) -> None:
    """Keys the model does not declare, sorted (by their text, so mixed key types sort too)."""
    known = model.fields if model is not None else {}
    for key in sorted((k for k in data if k not in known), key=str):
        _value(data[key], None, prefix + _key(key), out)


def _key(key: Any) -> str:
    """A mapping key as a path segment (dots and brackets in it escaped, as planstate paths do)."""
    return format_path([str(key)])


def _value(value: Any, kind: Kind[Any] | None, path: str, out: list[str]) -> None:
    """The lines of one value at `path`: a scalar on one line, containers spelled out below `path`."""
    while isinstance(kind, Nullable):
        kind = kind.inner
    if isinstance(value, dict):
        _dict_value(value, kind, path, out)
    elif isinstance(value, list):
        _list_value(value, kind, path, out)
    else:
        _scalar(value, kind, path, out)


def _dict_value(value: dict[Any, Any], kind: Kind[Any] | None, path: str, out: list[str]) -> None:
    """A mapping below `path`: a model's fields in its order, other keys sorted; `{}` when empty."""
    if isinstance(kind, Nested):
        _mapping(value, kind.model, path + ".", out)
    else:
        item = kind.value if isinstance(kind, MapOf) else None
        for key in sorted(value, key=str):
            _value(value[key], item, f"{path}.{_key(key)}", out)
    if not value:
        out.append(f"{path}: {{}}")


def _list_value(value: list[Any], kind: Kind[Any] | None, path: str, out: list[str]) -> None:
    """A list below `path`: scalars as `path[]` lines (a set's view: no index to shift), containers by index."""
    item_kind = kind.item if isinstance(kind, ListOf) else None
    if not value:
        out.append(f"{path}: []")
    for index, item in enumerate(value):
        if isinstance(item, dict | list):
            _value(item, item_kind, f"{path}.{index}", out)
        else:
            _scalar(item, item_kind, f"{path}[]", out)


def _scalar(value: Any, kind: Kind[Any] | None, path: str, out: list[str]) -> None:
    """One scalar: `path: value`, or `path: |` and the lines of a multi-line string indented by two spaces."""
    text = scalar_text(value, kind)
    if "\n" in text:
        out.append(f"{path}: |")
        out.extend(f"  {line}" if line else "" for line in text.split("\n"))
    else:
        out.append(f"{path}: {text}")


def scalar_text(value: Any, kind: Kind[Any] | None = None) -> str:
    """How a scalar reads in the view: timestamps in UTC with `Z`, null/true/false as in YAML, strings as they are
    (quoted as JSON only when empty or with spaces at an end, and multi-line without their final newline)."""
    while isinstance(kind, Nullable):
        kind = kind.inner
    if isinstance(kind, DateTime) and isinstance(value, str | date):
        value = parse_datetime(value) or value
    if isinstance(value, datetime):
        return iso_utc(value)
    if isinstance(value, date):
        return value.isoformat()
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _string_text(value)
    return str(value)


def _string_text(value: str) -> str:
    """A string as it is (LF line ends, no final newline); quoted as JSON when it is one line that is empty or has
    spaces at an end, which the view would otherwise lose."""
    text = value.replace("\r\n", "\n").rstrip("\n")
    if "\n" in text:
        return text
    return text if text and text.strip() == text else json.dumps(text, ensure_ascii=False)


def iso_utc(value: datetime) -> str:
    """A timestamp as ISO 8601 in UTC with `Z` (a timestamp without a zone is taken as UTC)."""
    moment = value if value.tzinfo else value.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"


def history_view(data: bytes) -> str:
    """history.jsonl as one line per entry, oldest first; a line that is not an entry is kept as it is, in place."""
    text = data.decode("utf-8", errors="surrogateescape").replace("\r\n", "\n")
    entries: list[tuple[int, str, str]] = []  # (group, sort key, line): unreadable lines keep their place in group
    group = 0
    for raw in text.split("\n"):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except ValueError:
            item = None
        if not isinstance(item, dict):
            group += 1
            entries.append((group, "", raw))
            group += 1
            continue
        entries.append((group, _entry_time(item), history_line(item)))
    entries.sort(key=lambda e: (e[0], e[1]))
    return "".join(line + "\n" for _, _, line in entries)


def _entry_time(item: dict[str, Any]) -> str:
    at = parse_datetime(item.get("at"))
    return at.isoformat() if at is not None else str(item.get("at"))


def history_line(item: dict[str, Any]) -> str:
    """One history entry on one line: `AT FROM → TO (TRIGGER) by BY: REASON`, extra keys after it as JSON."""
    at = item.get("at")
    parsed = parse_datetime(at)
    when = iso_utc(parsed) if parsed is not None else "(no time)" if at is None else str(at)
    line = f"{when} {item.get('from') or '(none)'} → {item.get('to')}"
    if item.get("trigger"):
        line += f" ({item['trigger']})"
    if item.get("by"):
        line += f" by {item['by']}"
    if item.get("reason"):
        line += f": {_one_line(str(item['reason']))}"
    extra = {k: v for k, v in item.items() if k not in _HISTORY_KEYS}
    if extra:
        line += " " + json.dumps(extra, ensure_ascii=False, sort_keys=True, default=str)
    return line


def _one_line(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\\n")
