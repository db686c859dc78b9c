"""Field-level changes: plain data normalized as the canonical view shows it, and compared path by path.

Values are compared as planstate/vcs/textconv.py shows them: a timestamp written with or without quotes,
or in another zone, is the same timestamp; key order does not count. Paths are in planstate's one
notation (planstate/text/paths.py).
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

from planstate.core.clock import parse_datetime
from planstate.model.schema import ListOf, MapOf, Model, Nested
from planstate.model.types import DateTime, Kind, Nullable
from planstate.text.paths import format_path
from planstate.vcs.textconv import iso_utc

MISSING: Any = object()  # a key or item absent on one side (None is a value)


def normalize(value: Any, kind: Kind[Any] | None) -> Any:
    """Plain data as JSON-ready values, timestamps (where the schema has one, and datetimes anywhere) as ISO UTC."""
    kind = _bare(kind)
    if isinstance(value, dict):
        return {str(key): normalize(item, _child(kind, str(key))) for key, item in value.items()}
    if isinstance(value, list):
        return [normalize(item, kind.item if isinstance(kind, ListOf) else None) for item in value]
    return _scalar(value, kind)


def _scalar(value: Any, kind: Kind[Any] | None) -> Any:
    """A single value as JSON shows it: a timestamp (or a text the schema says is one) in ISO UTC, a date ISO."""
    if isinstance(kind, DateTime) and not isinstance(value, bool):
        parsed = parse_datetime(value)
        return iso_utc(parsed) if parsed is not None else value
    if isinstance(value, datetime):
        return iso_utc(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


def field_changes(old: Any, new: Any, path: str, kind: Kind[Any] | None) -> list[tuple[str, Any, Any]]:
    """The changes from `old` to `new` at `path` as (path, old, new); None stands for absent.

    Mappings are compared key by key, lists of single values as sets of items (`path[]`, one change
    per item added or removed), other lists item by item (`path[i]`); derived fields are skipped.
    """
    kind = _bare(kind)
    if _equal(old, new):
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        return _mapping_changes(old, new, path, kind)
    if isinstance(old, list) and isinstance(new, list):
        return _list_changes(old, new, path, kind)
    return [(path, None if old is MISSING else old, None if new is MISSING else new)]


def _mapping_changes(
    old: dict[str, Any], new: dict[str, Any], path: str, kind: Kind[Any] | None
) -> list[tuple[str, Any, Any]]:
    """Key by key, the model's fields first; derived fields are left out."""
    model = kind.model if isinstance(kind, Nested) else None
    out: list[tuple[str, Any, Any]] = []
    for key in ordered_keys(old, new, model):
        if model is not None and derived(model, key):
            continue
        child = _child(kind, key)
        out.extend(field_changes(old.get(key, MISSING), new.get(key, MISSING), f"{path}.{_segment(key)}", child))
    return out


def _list_changes(old: list[Any], new: list[Any], path: str, kind: Kind[Any] | None) -> list[tuple[str, Any, Any]]:
    """A list of single values as a set (`path[]`: each item removed, then each added); others item by item."""
    if all(not isinstance(v, dict | list) for v in (*old, *new)):
        removed, added = added_items(new, old), added_items(old, new)
        return [(f"{path}[]", v, None) for v in removed] + [(f"{path}[]", None, v) for v in added]
    item = kind.item if isinstance(kind, ListOf) else None
    out: list[tuple[str, Any, Any]] = []
    for i in range(max(len(old), len(new))):
        a = old[i] if i < len(old) else MISSING
        b = new[i] if i < len(new) else MISSING
        out.extend(field_changes(a, b, f"{path}.{i}", item))
    return out


def added_items(old: Any, new: Any) -> list[Any]:
    """The items of list `new` that list `old` does not have (counted: a repeated item is added again)."""
    remaining = list(old) if isinstance(old, list) else []
    out = []
    for item in new if isinstance(new, list) else []:
        if item in remaining:
            remaining.remove(item)
        else:
            out.append(item)
    return out


def _equal(a: Any, b: Any) -> bool:
    """Equal as data: key order does not count, types do (1 is not true, 1 is not 1.0)."""
    if a is MISSING or b is MISSING:
        return a is b
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return entry_key(a) == entry_key(b)
    return type(a) is type(b) and a == b


def entry_key(entry: Any) -> str:
    """Data as canonical JSON: equal data, equal text."""
    return json.dumps(entry, sort_keys=True, ensure_ascii=False, default=str)


def ordered_keys(old: dict[str, Any], new: dict[str, Any], model: type[Model] | None) -> list[str]:
    """The keys of both mappings: the model's fields in their order, then the others sorted."""
    keys = set(old) | set(new)
    declared = [k for k in (model.fields if model is not None else {}) if k in keys]
    return declared + sorted(keys - set(declared))


def _bare(kind: Kind[Any] | None) -> Kind[Any] | None:
    """A kind without its Nullable wrappers."""
    while isinstance(kind, Nullable):
        kind = kind.inner
    return kind


def _child(kind: Kind[Any] | None, key: str) -> Kind[Any] | None:
    """The kind of the value under `key` of a mapping of `kind`: a model's field, a map's values, else unknown."""
    if isinstance(kind, Nested):
        return kind_of(kind.model, key)
    if isinstance(kind, MapOf):
        return kind.value
    return None


def _segment(key: str) -> str:
    return format_path([key])


def derived(model: type[Model], name: str) -> bool:
    """Tell whether `name` is a derived field of `model` (it follows from the rest: never a change of its own)."""
    field = model.fields.get(name)
    return field is not None and field.derived


def kind_of(model: type[Model], name: str) -> Kind[Any] | None:
    """The kind of field `name` of `model`, None when the model does not declare it."""
    field = model.fields.get(name)
    return field.kind if field is not None else None
