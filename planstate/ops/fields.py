"""Guarded writes of STATE.md fields by path: set, append and unset, with typed values or command-line text.

Unknown paths, derived fields and fields only commands change (`lifecycle.*`, `phases[].status`)
are refused; `Workspace.edit()` is the trusted way around these rules.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from planstate.core.errors import PlanstateError, UsageError
from planstate.model.kinds import State, to_json
from planstate.model.schema import ListOf, Nested, field_names, lookup
from planstate.model.types import Kind, Nullable
from planstate.text.paths import data_path, delete_in, format_path, get_in, parse_path, set_in, shown_path
from planstate.text.plaindata import same

if TYPE_CHECKING:
    from planstate.store.context import Context


class Change:
    """One field changed by a write: its path, old and new value."""

    def __init__(self, path: str, old: Any, new: Any, *, removed: bool = False) -> None:
        self.path = path
        self.old = old
        self.new = new
        self.removed = removed

    def to_dict(self) -> dict[str, Any]:
        """Return the change as JSON-ready data (`removed` is present when the field was removed)."""
        out = {"field": self.path, "old": to_json(self.old), "new": to_json(self.new)}
        if self.removed:
            out["removed"] = True
        return out


class Edited(list[Change]):
    """The fields of STATE.md a write changed, in order (empty when it changed nothing): a list of `Change`."""

    def __init__(self, file: str, changes: Iterable[Change] = ()) -> None:
        super().__init__(changes)
        self.file = file

    @property
    def changes(self) -> list[Change]:
        """The changes, as a plain list."""
        return list(self)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data: the file's `path`, whether anything changed, and each change."""
        return {"path": self.file, "changed": bool(self), "changes": [c.to_dict() for c in self]}


class Fields:
    """The fields of the target initiative's STATE.md, written one transaction per call."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def get(self, path: str) -> Any:
        """The value at a path of STATE.md's front matter, a phase by its number; a missing one names the closest
        key there is."""
        from planstate.core.suggest import closest

        state_path = self.ctx.state_path
        data = self.ctx.cached_data(state_path)  # a warm read parses nothing (and imports no YAML parser)
        segs = self._in(data, parse_path(path))
        value = data
        for depth, seg in enumerate(segs):
            found, child = get_in(value, [seg])
            if not found:
                name = closest(str(seg), map(str, value)) if isinstance(value, dict) else None
                hint = "" if name is None else f"; did you mean {shown_path([*segs[:depth], name], data)!r}?"
                shown = self.ctx.display(state_path)
                raise UsageError(f"no value at {shown_path(segs[: depth + 1], data)}{hint}", file=shown)
            value = child
        return value

    def set(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> Edited:
        """Set fields (dotted path to value) in one transaction; return what changed.

        Values are typed (`3`, `None`, `["a"]`); `set_text` takes them as typed on a command line.
        """
        pairs = self._pairs(values)
        targets = [(path, self._writable_path(path)) for path, _value in pairs]
        for (path, segs), (_path, value) in zip(targets, pairs, strict=True):
            self._refuse_blank(value, lookup(State, tuple(segs))[1], path)
        with self.ctx.transaction(oversize=True) as tx:  # it may shorten an over-long file
            state = tx.state()
            data = state.to_data()
            targets = [(path, self._in(data, segs)) for path, segs in targets]
            before = {path: _peek(data, segs) for path, segs in targets}
            for (_path, segs), (_same, value) in zip(targets, pairs, strict=True):
                set_in(data, segs, value)
        return self._edited(before, {path: _peek(data, segs) for path, segs in targets})

    def set_text(self, values: Mapping[str, str] | Iterable[tuple[str, str]]) -> Edited:
        """Set fields from text as typed on a command line (see docs/cli.md "Values"), in one transaction."""
        from planstate.model.coerce import from_text

        pairs = self._pairs(values)
        typed = []
        for path, text in pairs:
            segs = self._writable_path(path)
            typed.append((path, self._typed(from_text, text, lookup(State, tuple(segs))[1], path)))
        return self.set(typed)

    def append(self, path: str, value: Any) -> Edited:
        """Append an item to a list field."""
        segs = self._writable_path(path)
        _field, kind = lookup(State, tuple(segs))
        if not isinstance(kind, ListOf):
            raise UsageError("is not a list; use set", file=self._shown(), field=path)
        self._refuse_blank(value, kind.item, path)
        with self.ctx.transaction() as tx:
            state = tx.state()
            data = state.to_data()
            segs = self._in(data, segs)
            before = _peek(data, segs)
            items = list(before) if isinstance(before, list) else []
            items.append(value)
            set_in(data, segs, items)
        return self._edited({path: before}, {path: items})

    def append_text(self, path: str, text: str) -> Edited:
        """Append an item given as text typed on a command line (see docs/cli.md "Values") to a list field."""
        from planstate.model.coerce import from_text

        segs = self._writable_path(path)
        kind = lookup(State, tuple(segs))[1]
        if not isinstance(kind, ListOf):
            raise UsageError("is not a list; use set", file=self._shown(), field=path)
        return self.append(path, self._typed(from_text, text, kind.item, path))

    def _edited(self, before: dict[str, Any], after: dict[str, Any]) -> Edited:
        """The fields whose values differ between `before` and `after` (path to value)."""
        return Edited(self._shown(), [Change(p, before[p], after[p]) for p in before if not same(before[p], after[p])])

    def _pairs(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
        """The (path, value) pairs of a write; the same field twice (`phases.1` and `phases[1]` too) is refused."""
        pairs = list(values.items()) if isinstance(values, Mapping) else list(values)
        seen: dict[str, str] = {}
        for path, _value in pairs:
            key = format_path(parse_path(path))
            if key in seen:
                raise UsageError(
                    f"{path!r} is given twice (as {seen[key]!r} too); set each field once",
                    file=self._shown(),
                    field=key,
                )
            seen[key] = path
        return pairs

    def _refuse_blank(self, value: Any, kind: Kind[Any] | None, path: str) -> None:
        """Refuse text that is empty or only spaces for a field that must hold text (a title, a phase name)."""
        from planstate.model.types import Str

        if isinstance(kind, Str) and kind.min_length > 0 and isinstance(value, str) and not value.strip():
            raise UsageError("must not be empty or only spaces", file=self._shown(), field=path)

    def _typed(self, convert: Any, text: str, kind: Kind[Any] | None, path: str) -> Any:
        """Convert command-line text for the field at `path`; its errors name STATE.md and the field."""
        try:
            return convert(text, kind, field=path)
        except UsageError as exc:
            raise UsageError(exc.message, file=self._shown(), field=exc.field or path) from None

    def unset(self, path: str) -> Edited:
        """Remove a field (an optional key or a list item)."""
        segs = self._writable_path(path)
        field, _kind = lookup(State, tuple(segs))
        if field is not None and field.required and not isinstance(segs[-1], int) and field.name == segs[-1]:
            raise UsageError("is required and cannot be removed", file=self._shown(), field=path)
        with self.ctx.transaction(oversize=True) as tx:  # it may shorten an over-long file
            state = tx.state()
            data = state.to_data()
            segs = self._in(data, segs)
            before = _peek(data, segs)
            if not delete_in(data, segs):
                raise UsageError("has no value to remove", file=self._shown(), field=path)
        return Edited(self._shown(), [Change(path, before, None, removed=True)])

    def _in(self, data: dict[str, Any], segs: list[Any]) -> list[Any]:
        """The segments into `data` of a path as people write it (a phase by its number), refused with the file
        named when it names no phase."""
        try:
            return data_path(segs, data)
        except UsageError as exc:
            raise UsageError(exc.message, file=self._shown(), field=exc.field) from None

    def _writable_path(self, path: str) -> list[Any]:
        """Check that a path names a field planstate lets a person set; return its segments."""
        segs = parse_path(path)
        field, kind = lookup(State, tuple(segs))
        if kind is None:
            raise UsageError(
                f"is not a field of STATE.md{_suggestion(segs)} (see `planstate schema state` for the fields)",
                file=self._shown(),
                field=format_path(segs),
            )
        if field is not None and field.derived:
            raise self._refusal(segs, "is derived and recomputed on every write; change its source instead")
        managed = _managed(segs)
        if managed is not None:
            raise self._refusal(segs, managed)
        return segs

    def _refusal(self, segs: list[Any], message: str) -> UsageError:
        """A refusal to write the field at `segs`, located at its line in STATE.md when the file has it."""
        line = column = None
        with contextlib.suppress(PlanstateError):  # a file that cannot be read: the refusal stands on its own
            doc = self.ctx.state_document()
            line, column = doc.locate(data_path(segs, doc.data))
        return UsageError(message, file=self._shown(), line=line, column=column, field=format_path(segs))

    def _shown(self) -> str:
        """STATE.md as shown in messages."""
        return self.ctx.display(self.ctx.state_path)


def _managed(segs: list[Any]) -> str | None:
    """Why a path may not be written directly: it is, is inside, or holds a field only commands change."""
    for depth in range(1, len(segs) + 1):
        field, _kind = lookup(State, tuple(segs[:depth]))
        if field is not None and field.managed and segs[depth - 1] == field.name:
            return f"is changed only by commands: {field.managed}"
    inner = _managed_inside(lookup(State, tuple(segs))[1])
    if inner is not None:
        suffix, commands = inner
        return f"holds {format_path(segs)}{suffix}, which is changed only by commands: {commands}"
    return None


def _managed_inside(kind: Any, prefix: str = "") -> tuple[str, str] | None:
    """The first managed field within a value of `kind` (a nested model or a list of them), with its commands."""
    while isinstance(kind, Nullable):
        kind = kind.inner
    if isinstance(kind, ListOf):
        return _managed_inside(kind.item, prefix + "[]")
    if not isinstance(kind, Nested):
        return None
    for name, field in kind.model.fields.items():
        if field.managed:
            return f"{prefix}.{name}", field.managed
        found = _managed_inside(field.kind, f"{prefix}.{name}")
        if found is not None:
            return found
    return None


def _suggestion(segs: list[Any]) -> str:
    """`; did you mean 'PATH'?` for a path the schema does not know, when a declared name is close to the
    first segment it does not know."""
    from planstate.core.suggest import closest

    for i, seg in enumerate(segs):
        if lookup(State, tuple(segs[: i + 1]))[1] is None:
            name = closest(str(seg), field_names(State, tuple(segs[:i])))
            return "" if name is None else f"; did you mean {format_path([*segs[:i], name, *segs[i + 1 :]])!r}?"
    return ""


def _peek(data: Any, segs: list[Any]) -> Any:
    return get_in(data, segs)[1]
