"""Plain front-matter data: conversion from parsed YAML, strict comparison, minimal diffs and applying them."""

from __future__ import annotations

import copy
from collections.abc import Set as AbstractSet
from datetime import date, datetime
from typing import Any, NamedTuple

from planstate.text.paths import Segment, child, real_key


def to_plain(value: Any, _memo: dict[int, Any] | None = None) -> Any:
    """Convert ruamel round-trip objects into plain dict, list, str, int, float, bool, dates."""
    memo = {} if _memo is None else _memo
    if isinstance(value, dict):
        return _plain_dict(value, memo)
    if isinstance(value, list):
        return _plain_list(value, memo)
    if value is None or type(value) in (str, int, float, bool):
        return value
    return _plain_scalar(value, memo)


def _plain_dict(value: dict[Any, Any], memo: dict[int, Any]) -> dict[Any, Any]:
    """A plain copy of a mapping; one copy per original, so shared (aliased) values stay shared."""
    if id(value) in memo:
        return memo[id(value)]  # type: ignore[no-any-return]
    out: dict[Any, Any] = {}
    memo[id(value)] = out
    for k, v in value.items():
        out[to_plain(k, memo)] = to_plain(v, memo)
    return out


def _plain_list(value: list[Any], memo: dict[int, Any]) -> list[Any]:
    """A plain copy of a sequence; one copy per original, so shared (aliased) values stay shared."""
    if id(value) in memo:
        return memo[id(value)]  # type: ignore[no-any-return]
    items: list[Any] = []
    memo[id(value)] = items
    items.extend(to_plain(v, memo) for v in value)
    return items


def _plain_scalar(value: Any, memo: dict[int, Any]) -> Any:
    """A plain value for a ruamel scalar subclass, a date, a `!!set`, a tuple or a tagged scalar."""
    for kind in (bool, str, int, float):  # bool before int: a bool is an int too
        if isinstance(value, kind):
            return kind(value)
    if isinstance(value, datetime):
        return datetime(
            value.year,
            value.month,
            value.day,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
            value.tzinfo,
        )
    if isinstance(value, date):
        return date(value.year, value.month, value.day)
    if isinstance(value, AbstractSet):  # `!!set`, read by ruamel as a CommentedSet
        return {to_plain(v, memo): None for v in value}
    if isinstance(value, tuple):
        return [to_plain(v, memo) for v in value]
    from ruamel.yaml.comments import TaggedScalar

    if isinstance(value, TaggedScalar):  # `!!str 12`, `!custom x`: the text itself
        return str(value.value)
    return value


def same(a: Any, b: Any) -> bool:
    """Compare plain values strictly: types matter (1 is not True, 1 is not 1.0), key order too."""
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and len(a) == len(b)
            and all(same(x, y) and same(a[x], b[y]) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and a != a:
        return bool(b != b)
    return bool(a == b)


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
        return _diff_mappings(old, new, path, inserts)
    if isinstance(old, list) and isinstance(new, list) and old and new:
        return _diff_lists(old, new, path, inserts)
    return [Op("replace", path, new)]


def _diff_mappings(old: dict[Any, Any], new: dict[Any, Any], path: tuple[Segment, ...], inserts: bool) -> list[Op]:
    """Delete the keys `new` lacks, change the values of the keys both have, add the keys `old` lacks."""
    ops = [Op("delete", (*path, key)) for key in old if not _has_key(new, key)]
    for key, value in new.items():
        if _has_key(old, key):
            ops.extend(diff(old[key], value, (*path, key), inserts=inserts))
        else:
            ops.append(Op("add", (*path, key), value))
    return ops


def _diff_lists(old: list[Any], new: list[Any], path: tuple[Segment, ...], inserts: bool) -> list[Op]:
    """Appends, deletions or insertions when that is all that changed; else each item in place."""
    if len(new) >= len(old) and all(same(x, y) for x, y in zip(old, new, strict=False)):
        return [Op("append", path, v) for v in new[len(old) :]]
    removed = _removed_indexes(old, new)
    if removed is not None:
        return [Op("delete", (*path, i)) for i in reversed(removed)]
    inserted = _insertions(old, new, path) if inserts else None
    if inserted is not None:
        return inserted
    return _diff_items(old, new, path, inserts)


def _diff_items(old: list[Any], new: list[Any], path: tuple[Segment, ...], inserts: bool) -> list[Op]:
    """Change each item in place, then append the items `old` lacks or delete those `new` lacks."""
    ops: list[Op] = []
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
    parent = data
    for seg in op.path[:-1] if op.kind != "append" else op.path:
        _found, parent = child(parent, seg)
    last = op.path[-1] if op.path else None
    if op.kind == "append":
        parent.append(copy.deepcopy(op.value))
    elif op.kind == "insert":
        parent.insert(int(last), copy.deepcopy(op.value))  # type: ignore[arg-type]
    elif op.kind == "add":
        parent[last] = copy.deepcopy(op.value)
    elif op.kind == "replace":
        key = real_key(parent, last)
        parent[key] = copy.deepcopy(op.value)
    elif op.kind == "delete":
        key = real_key(parent, last)
        del parent[key]
        if not data and not op.path[:-1]:
            return None
    return data
