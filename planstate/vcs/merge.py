"""Three-way merge of planning data, field by field, by the rules of mergerules.py.

Pure data in, data and conflicts out: the files, the text and the conflict markers are
mergefile.py's job. A conflict leaves our side's value in the result and names its path.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from typing import Any, NamedTuple

from planstate.model.schema import ListOf, Model, Nested, Nullable
from planstate.vcs.mergerules import MODELS, Rule, rule_for

Path = tuple[str | int, ...]


class _Missing:
    """The value of a key a side does not have (distinct from null)."""

    def __repr__(self) -> str:
        return "MISSING"

    def __copy__(self) -> _Missing:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Missing:
        return self


MISSING: Any = _Missing()


class Conflict(NamedTuple):
    """Both sides changed the value at `path` to different values, and its rule cannot choose."""

    path: Path
    base: Any
    ours: Any
    theirs: Any


class Merged(NamedTuple):
    """The merged data (our value wherever there is a conflict) and the conflicts, in document order."""

    data: Any
    conflicts: list[Conflict]


def merge(kind: str, base: Any, ours: Any, theirs: Any) -> Merged:
    """Merge the front matter of one file kind (`state`, `decision`, `blocker`, `session`) three ways.

    `base` may be None (the file was added on both sides). Derived values are recomputed from the result.
    """
    model = MODELS[kind]
    conflicts: list[Conflict] = []
    data = _value(Rule("nested"), model, _mapping(base), ours, theirs, (), conflicts)
    if kind == "state" and isinstance(data, dict):
        from planstate.model import derived
        from planstate.model.kinds import State

        derived.recompute(State(data))
    return Merged(data, conflicts)


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types, all the way down (so `1`, `1.0` and `true` are three different values)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# ---------------------------------------------------------------------------- by rule


def _value(
    rule: Rule, model: type[Model] | None, base: Any, ours: Any, theirs: Any, path: Path, out: list[Conflict]
) -> Any:
    """The merged value at `path` (MISSING when the key goes away)."""
    if same(ours, theirs):
        return ours
    if same(base, ours):
        return theirs
    if same(base, theirs):
        return ours
    name = rule.name
    if name == "derived":
        return ours
    if name in ("latest", "earliest"):
        a, b = when(ours), when(theirs)
        if a is not None and b is not None:
            later = ours if a >= b else theirs
            earlier = theirs if later is ours else ours
            return later if name == "latest" else earlier
    elif name == "final":
        if ours == rule.final and theirs != rule.final:
            return ours
        if theirs == rule.final and ours != rule.final:
            return theirs
    elif name == "lifecycle":
        return _lifecycle(base, ours, theirs, path, out)
    elif name in ("set", "log"):
        if (
            all(isinstance(v, list) or v is MISSING or v is None for v in (base, ours, theirs))
            and isinstance(ours, list)
            and isinstance(theirs, list)
        ):
            return union(_list(base), ours, theirs, ordered=name == "log")
    elif name == "by_index" and isinstance(ours, list) and isinstance(theirs, list):
        return _by_index(model, _list(base), ours, theirs, path, out)
    if isinstance(ours, dict) and isinstance(theirs, dict) and name in ("nested", "map", "value"):
        return _mapping_merge(model if name == "nested" else None, _mapping(base), ours, theirs, path, out)
    out.append(Conflict(path, base, ours, theirs))
    return ours


def _mapping_merge(
    model: type[Model] | None,
    base: dict[str, Any],
    ours: dict[str, Any],
    theirs: dict[str, Any],
    path: Path,
    out: list[Conflict],
) -> dict[str, Any]:
    """Key by key: our keys in our order, then keys only they added; a model's keys by their rules."""
    result: dict[str, Any] = {}
    keys = list(ours) + [k for k in theirs if k not in ours] + [k for k in base if k not in ours and k not in theirs]
    for key in keys:
        rule = rule_for(model, key) if model is not None else Rule("value")
        merged = _value(
            rule,
            _model_of(model, key),
            base.get(key, MISSING),
            ours.get(key, MISSING),
            theirs.get(key, MISSING),
            (*path, key),
            out,
        )
        if merged is not MISSING:
            result[key] = merged
    return result


def _by_index(
    model: type[Model] | None, base: list[Any], ours: list[Any], theirs: list[Any], path: Path, out: list[Conflict]
) -> list[Any]:
    """Items matched by position, each merged field by field; an item one side removed goes if the other kept it."""
    result: list[Any] = []
    for i in range(max(len(ours), len(theirs))):
        b = base[i] if i < len(base) else MISSING
        o = ours[i] if i < len(ours) else MISSING
        t = theirs[i] if i < len(theirs) else MISSING
        if o is MISSING or t is MISSING:  # added or removed on one side: taken, or a conflict on the whole item
            merged = _value(Rule("value"), model, b, o, t, (*path, i), out)
        else:  # an item both sides have merges field by field (from nothing, when both added it)
            nested = Rule("nested") if model is not None else Rule("value")
            merged = _value(nested, model, {} if b is MISSING else b, o, t, (*path, i), out)
        if merged is not MISSING:
            result.append(merged)
    return result


_RANK = {"archived": 2, "completed": 1}


def _lifecycle(base: Any, ours: Any, theirs: Any, path: Path, out: list[Conflict]) -> Any:
    """The lifecycle as one unit: archived, then completed, outrank the rest; else the later transition wins."""
    if not (isinstance(ours, dict) and isinstance(theirs, dict)):
        out.append(Conflict(path, base, ours, theirs))
        return ours
    rank_o, rank_t = _RANK.get(str(ours.get("state")), 0), _RANK.get(str(theirs.get("state")), 0)
    if rank_o != rank_t:
        return ours if rank_o > rank_t else theirs
    a, b = when(ours.get("since")), when(theirs.get("since"))
    if a is not None and b is not None and a != b:
        return ours if a > b else theirs
    out.append(Conflict(path, base, ours, theirs))
    return ours


def union(base: list[Any], ours: list[Any], theirs: list[Any], *, ordered: bool) -> list[Any]:
    """Items either side added, minus items either side removed (counted, so repeated items stay repeated).

    The base's items keep the base's order; the two sides' additions follow as two blocks whose order does not
    depend on which side is ours. With `ordered`, items that start with a timestamp are then sorted by it.
    """
    counts_b, counts_o, counts_t = _counts(base), _counts(ours), _counts(theirs)
    keep: dict[str, int] = {}
    for key in {**counts_b, **counts_o, **counts_t}:
        b, o, t = counts_b.get(key, 0), counts_o.get(key, 0), counts_t.get(key, 0)
        keep[key] = t if o == b else o if t == b else max(o, t)
    result: list[Any] = []
    used: dict[str, int] = {}

    def take(items: list[Any]) -> list[Any]:
        taken = []
        for item in items:
            key = _key(item)
            if used.get(key, 0) < keep.get(key, 0):
                used[key] = used.get(key, 0) + 1
                taken.append(item)
        return taken

    def added(items: list[Any]) -> list[Any]:
        """A side's additions (occurrences beyond the base's count), found without looking at the other side."""
        seen: dict[str, int] = {}
        out = []
        for item in items:
            key = _key(item)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > counts_b.get(key, 0):
                out.append(item)
        return out

    result = take(base)
    # The two blocks are ordered by their content, so an item both sides added lands in the same place whichever
    # side is ours.
    for block in sorted((added(ours), added(theirs)), key=lambda block: [_key(item) for item in block]):
        result.extend(take(block))
    if ordered:
        stamped = [(_item_time(item), item) for item in result]
        if all(when is not None for when, _ in stamped):
            result = [item for _, item in sorted(stamped, key=lambda pair: pair[0] or _EPOCH)]
    return result


def _counts(items: list[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        key = _key(item)
        counts[key] = counts.get(key, 0) + 1
    return counts


def _key(item: Any) -> str:
    """A list item's identity: its canonical JSON."""
    return json.dumps(item, sort_keys=True, default=str, ensure_ascii=False)


# ---------------------------------------------------------------------------- helpers

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_LEADING_TIME = re.compile(r"\s*(\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)")


def when(value: Any) -> datetime | None:
    """A timestamp as an aware datetime (None when it is not one)."""
    from planstate.core.clock import parse_datetime

    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        try:
            return when(parse_datetime(value))
        except (ValueError, TypeError):
            return None
    return None


def _item_time(item: Any) -> datetime | None:
    """When a log item happened: the timestamp it starts with, or its `started`/`at`/`ended` field."""
    if isinstance(item, str):
        found = _LEADING_TIME.match(item)
        return None if found is None else when(found.group(1))
    if isinstance(item, dict):
        for key in ("started", "at", "ended"):
            stamp = when(item.get(key))
            if stamp is not None:
                return stamp
    return None


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _model_of(model: type[Model] | None, key: str) -> type[Model] | None:
    """The model of a nested mapping (or of a list's items) under `key`, from the schema."""
    if model is None or key not in model.fields:
        return None
    kind: Any = model.fields[key].kind
    while isinstance(kind, Nullable):
        kind = kind.inner
    if isinstance(kind, ListOf):
        kind = kind.item
    return kind.model if isinstance(kind, Nested) else None
