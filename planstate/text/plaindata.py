"""Plain front-matter data: conversion from parsed YAML, strict comparison, minimal diffs and applying them."""

from __future__ import annotations

import copy
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from datetime import date, datetime
from typing import Any, NamedTuple

from planstate.text.paths import Segment, child, real_key


def to_plain(value: Any, _memo: dict[int, Any] | None = None) -> Any:
    """Convert ruamel round-trip objects into plain dict, list, str, int, float, bool, dates."""
    memo = {} if _memo is None else _memo
    if isinstance(value, dict | list):
        return _plain_container(value, memo)
    if isinstance(value, AbstractSet):  # `!!set`, read by ruamel as a CommentedSet
        return {to_plain(v, memo): None for v in value}
    if isinstance(value, tuple):
        return [to_plain(v, memo) for v in value]
    return _plain_scalar(value)


_IMMUTABLE = (str, int, float, bool, type(None), date, datetime)


def clone(value: Any) -> Any:
    """A copy of plain data in which no container is reached twice (no YAML alias made it): what `copy.deepcopy`
    gives, several times faster (a write copies its STATE.md's data a few times)."""
    kind = type(value)
    if kind is dict:
        return {k: clone(v) for k, v in value.items()}
    if kind is list:
        return [clone(v) for v in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


def _plain_scalar(value: Any) -> Any:
    """A scalar as the plain type it stands for (ruamel's subclasses carry formatting, tags the text itself)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    for kind, plain in _PLAIN_SCALARS:
        if isinstance(value, kind):
            return plain(value)
    from ruamel.yaml.comments import TaggedScalar

    if isinstance(value, TaggedScalar):  # `!!str 12`, `!custom x`: the text itself
        return str(value.value)
    return value


def _plain_container(value: dict[Any, Any] | list[Any], memo: dict[int, Any]) -> Any:
    """A mapping or list, converted once however often it is referenced (YAML anchors and aliases)."""
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, list):
        items: list[Any] = []
        memo[id(value)] = items
        items.extend(to_plain(v, memo) for v in value)
        return items
    out: dict[Any, Any] = {}
    memo[id(value)] = out
    for k, v in value.items():
        out[to_plain(k, memo)] = to_plain(v, memo)
    return out


def _plain_datetime(value: datetime) -> datetime:
    return datetime(
        value.year, value.month, value.day, value.hour, value.minute, value.second, value.microsecond, value.tzinfo
    )


def _plain_date(value: date) -> date:
    return date(value.year, value.month, value.day)


# ruamel's scalar subclasses (ScalarFloat, TimeStamp ...) and the plain type each becomes; a subclass comes before
# its base (bool before int, datetime before date), as the first match wins.
_PLAIN_SCALARS: tuple[tuple[type[Any], Callable[[Any], Any]], ...] = (
    (bool, bool),
    (str, str),
    (int, int),
    (float, float),
    (datetime, _plain_datetime),
    (date, _plain_date),
)


def same(a: Any, b: Any, *, ordered: bool = True) -> bool:
    """Compare plain values strictly: types matter (1 is not True, 1 is not 1.0), and key order too unless not
    `ordered` (a merge compares values, not the order of their keys)."""
    if isinstance(a, dict):
        if not isinstance(b, dict):
            return False
        if ordered:
            return _same_mapping(a, b)
        return a.keys() == b.keys() and all(same(a[k], b[k], ordered=False) for k in a)
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(same(x, y, ordered=ordered) for x, y in zip(a, b, strict=True))
        )
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and a != a:  # NaN is the same as NaN here, though never equal to it
        return bool(b != b)
    return bool(a == b)


def _same_mapping(a: dict[Any, Any], b: dict[Any, Any]) -> bool:
    """The same keys in the same order, with the same values."""
    return len(a) == len(b) and all(same(x, y) and same(a[x], b[y]) for x, y in zip(a, b, strict=True))


class Op(NamedTuple):
    """One edit of the data: `kind` is replace, add, delete, append or insert; `path` ends at the target.

    `insert` puts `value` before the list item at `path` (whose last segment is its index).
    """

    kind: str
    path: tuple[Segment, ...]
    value: Any = None


def diff(old: Any, new: Any, path: tuple[Segment, ...] = (), *, inserts: bool = True) -> list[Op]:
    """Return the smallest list of edits that turns plain value `old` into `new`.

    Items added to a list before existing ones become `insert` edits, so the existing items (and
    the comments on their lines) stay where they are; `inserts=False` rewrites such lists item by
    item instead, for a text that cannot take an insertion.
    """
    if same(old, new):
        return []
    if isinstance(old, dict) and isinstance(new, dict) and old and new:
        return _mapping_diff(old, new, path, inserts)
    if isinstance(old, list) and isinstance(new, list) and old and new:
        return _list_diff(old, new, path, inserts)
    return [Op("replace", path, new)]


def _mapping_diff(old: dict[Any, Any], new: dict[Any, Any], path: tuple[Segment, ...], inserts: bool) -> list[Op]:
    """Keys deleted, then each key of `new` in order: changed in place or added."""
    ops = [Op("delete", (*path, key)) for key in old if not _has_key(new, key)]
    for key, value in new.items():
        if _has_key(old, key):
            ops.extend(diff(old[key], value, (*path, key), inserts=inserts))
        else:
            ops.append(Op("add", (*path, key), value))
    return ops


def _list_diff(old: list[Any], new: list[Any], path: tuple[Segment, ...], inserts: bool) -> list[Op]:
    """Items appended, taken out or (with `inserts`) put in as such; any other change item by item."""
    if len(new) >= len(old) and all(same(x, y) for x, y in zip(old, new, strict=False)):
        return [Op("append", path, v) for v in new[len(old) :]]
    removed = _removed_indexes(old, new)
    if removed is not None:
        return [Op("delete", (*path, i)) for i in reversed(removed)]
    inserted = _insertions(old, new, path) if inserts else None
    if inserted is not None:
        return inserted
    return _item_by_item(old, new, path, inserts)


def _item_by_item(old: list[Any], new: list[Any], path: tuple[Segment, ...], inserts: bool) -> list[Op]:
    """Each item compared with the one at its index; the extra items appended, or the missing ones deleted."""
    ops = []
    for i in range(min(len(old), len(new))):
        ops.extend(diff(old[i], new[i], (*path, i), inserts=inserts))
    if len(new) > len(old):
        ops.extend(Op("append", path, v) for v in new[len(old) :])
    else:
        ops.extend(Op("delete", (*path, i)) for i in reversed(range(len(new), len(old))))
    return ops


def _has_key(mapping: dict[Any, Any], key: Any) -> bool:
    """Tell whether `mapping` has `key` itself, not just an equal key of another type (1 and True)."""
    if key not in mapping:
        return False
    if isinstance(key, int | float):  # only numbers compare equal across types
        return any(same(k, key) for k in mapping if k == key)
    return True


def _removed_indexes(old: list[Any], new: list[Any]) -> list[int] | None:
    """If `new` is `old` with some items taken out, return the indexes taken out."""
    if len(new) >= len(old):
        return None
    removed, j = [], 0
    for i, item in enumerate(old):
        if j < len(new) and same(item, new[j]):
            j += 1
        else:
            removed.append(i)
    return removed if j == len(new) else None


def _insertions(old: list[Any], new: list[Any], path: tuple[Segment, ...]) -> list[Op] | None:
    """If `new` is `old` with items added (anywhere), the insert and append edits that add them, in order.

    Each edit's index is the item's place in the list as the edits before it left it.
    """
    if len(new) <= len(old):
        return None
    ops: list[Op] = []
    j = 0
    for k, item in enumerate(new):
        if j < len(old) and same(item, old[j]):
            j += 1
        elif j < len(old):
            ops.append(Op("insert", (*path, k), item))
        else:
            ops.append(Op("append", path, item))
    return ops if j == len(old) else None


def apply_op(data: Any, op: Op) -> Any:
    """Apply an edit to plain data (the expected result the text edit must produce)."""
    if op.kind == "replace" and not op.path:
        return copy.deepcopy(op.value)
    if data is None:
        data = {}
    parent = _parent(data, op)
    edit = _EDITS.get(op.kind)
    if edit is not None:
        edit(parent, op.path[-1] if op.path else None, op.value)
    if op.kind == "delete" and not data and not op.path[:-1]:
        return None  # the last top-level key went: no front matter is left
    return data


def _parent(data: Any, op: Op) -> Any:
    """The mapping or list an edit changes: where its path leads but for the last step (an append's path ends at
    the list itself)."""
    parent = data
    for seg in op.path if op.kind == "append" else op.path[:-1]:
        _found, parent = child(parent, seg)
    return parent


def _append(parent: Any, last: Any, value: Any) -> None:
    parent.append(copy.deepcopy(value))


def _insert(parent: Any, last: Any, value: Any) -> None:
    parent.insert(int(last), copy.deepcopy(value))


def _add(parent: Any, last: Any, value: Any) -> None:
    parent[last] = copy.deepcopy(value)


def _replace(parent: Any, last: Any, value: Any) -> None:
    parent[real_key(parent, last)] = copy.deepcopy(value)


def _delete(parent: Any, last: Any, value: Any) -> None:
    del parent[real_key(parent, last)]


# What each kind of edit does to the mapping or list it ends in (`last` is the key or index in it).
_EDITS: dict[str, Callable[[Any, Any, Any], None]] = {
    "append": _append,
    "insert": _insert,
    "add": _add,
    "replace": _replace,
    "delete": _delete,
}
