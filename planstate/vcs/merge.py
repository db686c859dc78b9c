"""Three-way merge of planning data, field by field, by the rules of mergerules.py.

Pure data in, data and conflicts out: the files, the text and the conflict markers are
mergefile.py's job. A conflict leaves our side's value in the result and names its path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any, NamedTuple

from planstate.model.schema import ListOf, Model, Nested
from planstate.model.types import Nullable
from planstate.text.plaindata import same
from planstate.vcs.mergerules import MODELS, UNITS, Rule, Unit, rule_for

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


# ---------------------------------------------------------------------------- by rule


def _value(
    rule: Rule, model: type[Model] | None, base: Any, ours: Any, theirs: Any, path: Path, out: list[Conflict]
) -> Any:
    """The merged value at `path` (MISSING when the key goes away): the change when one side changed it, else what
    its rule makes of two different changes."""
    if same(ours, theirs, ordered=False):
        return ours
    if same(base, ours, ordered=False):
        return theirs
    if same(base, theirs, ordered=False):
        return ours
    both = _Both(rule, model, base, ours, theirs, path, out)
    return _BOTH_CHANGED.get(rule.name, _Both.conflict)(both)


class _Both(NamedTuple):
    """A value both sides changed, to different values: what a rule decides from, and where conflicts go."""

    rule: Rule
    model: type[Model] | None
    base: Any
    ours: Any
    theirs: Any
    path: Path
    out: list[Conflict]

    def conflict(self) -> Any:
        """What a rule cannot decide: report a conflict at the path and keep our value."""
        self.out.append(Conflict(self.path, self.base, self.ours, self.theirs))
        return self.ours


def _ours(both: _Both) -> Any:
    """`derived`: either side's value will do, it is recomputed from the merged fields."""
    return both.ours


def _timestamp(both: _Both) -> Any:
    """`latest` and `earliest`: the later (the earlier) of two timestamps."""
    a, b = when(both.ours), when(both.theirs)
    if a is None or b is None:
        return both.conflict()
    later, earlier = (both.ours, both.theirs) if a >= b else (both.theirs, both.ours)
    return later if both.rule.name == "latest" else earlier


def _final(both: _Both) -> Any:
    """`final:STATUS`: the side that reached the final status, when only one did."""
    final, ours, theirs = both.rule.final, both.ours, both.theirs
    if ours == final and theirs != final:
        return ours
    if theirs == final and ours != final:
        return theirs
    return both.conflict()


_RANK = {"archived": 2, "completed": 1}


def _lifecycle(both: _Both) -> Any:
    """`lifecycle`, as one unit: archived, then completed, outrank the rest; else the later transition wins."""
    ours, theirs = both.ours, both.theirs
    if not (isinstance(ours, dict) and isinstance(theirs, dict)):
        return both.conflict()
    rank_o, rank_t = _RANK.get(str(ours.get("state")), 0), _RANK.get(str(theirs.get("state")), 0)
    if rank_o != rank_t:
        return ours if rank_o > rank_t else theirs
    a, b = when(ours.get("since")), when(theirs.get("since"))
    if a is not None and b is not None and a != b:
        return ours if a > b else theirs
    return both.conflict()


def _union(both: _Both) -> Any:
    """`set` and `log`: the union of two lists (a log's entries in time order)."""
    base, ours, theirs = both.base, both.ours, both.theirs
    lists = all(isinstance(v, list) or v is MISSING or v is None for v in (base, ours, theirs))
    if not (lists and isinstance(ours, list) and isinstance(theirs, list)):
        return both.conflict()
    return union(_list(base), ours, theirs, ordered=both.rule.name == "log")


def _items(both: _Both) -> Any:
    """`by_index`: two lists, item by item."""
    if not (isinstance(both.ours, list) and isinstance(both.theirs, list)):
        return both.conflict()
    return _by_index(both.model, _list(both.base), both.ours, both.theirs, both.path, both.out)


def _keys(both: _Both) -> Any:
    """`nested`, `map` and `value`: two mappings, key by key (a model's keys by their own rules)."""
    if not (isinstance(both.ours, dict) and isinstance(both.theirs, dict)):
        return both.conflict()
    model = both.model if both.rule.name == "nested" else None
    return _mapping_merge(model, _mapping(both.base), both.ours, both.theirs, both.path, both.out)


# How each rule merges a value both sides changed to different values.
_BOTH_CHANGED: dict[str, Callable[[_Both], Any]] = {
    "value": _keys,
    "nested": _keys,
    "map": _keys,
    "latest": _timestamp,
    "earliest": _timestamp,
    "final": _final,
    "lifecycle": _lifecycle,
    "set": _union,
    "log": _union,
    "by_index": _items,
    "derived": _ours,
}


def _mapping_merge(
    model: type[Model] | None,
    base: dict[str, Any],
    ours: dict[str, Any],
    theirs: dict[str, Any],
    path: Path,
    out: list[Conflict],
) -> dict[str, Any]:
    """Key by key: our keys in our order, then keys only they added; a model's keys by their rules (a unit whose
    moves both sides changed differently is one conflict, see mergerules.UNITS)."""
    result: dict[str, Any] = {}
    keys = list(ours) + [k for k in theirs if k not in ours] + [k for k in base if k not in ours and k not in theirs]
    unit = UNITS.get(model) if model is not None else None
    apart = unit is not None and _moved_apart(unit, base, ours, theirs)
    earlier = len(out)
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
    if apart and unit is not None:
        conflict = _unit_conflict(unit, base, ours, theirs, result, path)
        out[earlier:] = [c for c in out[earlier:] if not _inside(c.path, path, unit.fields)] + [conflict]
    return result


def _inside(at: Path, path: Path, fields: tuple[str, ...]) -> bool:
    """Whether `at` is one of `fields` of the mapping at `path`, or inside one."""
    return len(at) > len(path) and at[: len(path)] == path and at[len(path)] in fields


def _moved_apart(unit: Unit, base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """Whether both sides changed a unit's moves (a phase's status and checkpoint), to different values."""
    return unit.moved(ours, theirs) and unit.moved(base, ours) and unit.moved(base, theirs)


def _unit_conflict(
    unit: Unit,
    base: dict[str, Any],
    ours: dict[str, Any],
    theirs: dict[str, Any],
    result: dict[str, Any],
    path: Path,
) -> Conflict:
    """Put our side of the unit back into the merged mapping and return one conflict for the whole unit: their
    side is the merged mapping with their unit's fields, in our key order, so the markers hold only the lines
    that differ."""
    for key in unit.fields:
        if key in ours:
            result[key] = ours[key]
        else:
            result.pop(key, None)
    other = {k: theirs.get(k, MISSING) if k in unit.fields else v for k, v in result.items()}
    other.update({k: v for k, v in theirs.items() if k in unit.fields and k not in other})
    return Conflict(path, base, dict(result), {k: v for k, v in other.items() if v is not MISSING})


def _by_index(
    model: type[Model] | None, base: list[Any], ours: list[Any], theirs: list[Any], path: Path, out: list[Conflict]
) -> list[Any]:
    """Items matched by position, each merged field by field; an item one side removed goes if the other kept it."""
    result: list[Any] = []
    earlier = len(out)
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
    unit = UNITS.get(model) if model is not None else None
    if unit is not None and len(base) == len(ours) == len(theirs) == len(result):
        out[earlier:] = _progression(unit, base, ours, theirs, result, path, out[earlier:])
    return result


def _progression(
    unit: Unit,
    base: list[Any],
    ours: list[Any],
    theirs: list[Any],
    result: list[Any],
    path: Path,
    conflicts: list[Conflict],
) -> list[Conflict]:
    """The conflicts of a list of units (the phases), with every unit one side moved joining them once any item
    conflicts: the phases move as one progression (their phase 3 started because their phase 2 completed), so
    keeping one side of every conflict must keep that side's whole progression, never two active phases."""
    at = len(path)
    conflicted = {c.path[at] for c in conflicts if len(c.path) == at + 1}
    if not conflicted:
        return conflicts
    for i, (b, o, t) in enumerate(zip(base, ours, theirs, strict=True)):
        if i in conflicted or not all(isinstance(side, dict) for side in (b, o, t)):
            continue
        if unit.moved(b, o) != unit.moved(b, t):  # one side moved it; both moving it alike leaves nothing to choose
            conflicts = [c for c in conflicts if not _inside(c.path, (*path, i), unit.fields)]
            result[i] = dict(result[i])  # the side that moved it may have handed over its own mapping
            conflicts.append(_unit_conflict(unit, b, o, t, result[i], (*path, i)))
    return sorted(conflicts, key=lambda c: c.path[at])  # document order: the items' order


def union(base: list[Any], ours: list[Any], theirs: list[Any], *, ordered: bool) -> list[Any]:
    """Items either side added, minus items either side removed (counted, so repeated items stay repeated).

    The base's items keep the base's order; the two sides' additions follow as two blocks whose order does not
    depend on which side is ours. With `ordered`, items that start with a timestamp are then sorted by it.
    """
    counts_b = _counts(base)
    keep = _kept(counts_b, _counts(ours), _counts(theirs))
    # The two blocks are ordered by their content, so an item both sides added lands in the same place whichever
    # side is ours.
    first, second = sorted((_added(ours, counts_b), _added(theirs, counts_b)), key=lambda b: [_key(i) for i in b])
    result = _take([*base, *first, *second], keep)
    return _by_time(result) if ordered else result


def _kept(base: dict[str, int], ours: dict[str, int], theirs: dict[str, int]) -> dict[str, int]:
    """How many times each item stays: as the side that changed its count says, the larger count when both did."""
    keep: dict[str, int] = {}
    for key in {**base, **ours, **theirs}:
        b, o, t = base.get(key, 0), ours.get(key, 0), theirs.get(key, 0)
        keep[key] = t if o == b else o if t == b else max(o, t)
    return keep


def _added(items: list[Any], base: dict[str, int]) -> list[Any]:
    """A side's additions (occurrences beyond the base's count), found without looking at the other side."""
    seen: dict[str, int] = {}
    out = []
    for item in items:
        key = _key(item)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > base.get(key, 0):
            out.append(item)
    return out


def _take(items: list[Any], keep: dict[str, int]) -> list[Any]:
    """The items in order, each as many times as `keep` says at most."""
    used: dict[str, int] = {}
    taken = []
    for item in items:
        key = _key(item)
        if used.get(key, 0) < keep.get(key, 0):
            used[key] = used.get(key, 0) + 1
            taken.append(item)
    return taken


def _by_time(items: list[Any]) -> list[Any]:
    """Log items sorted by the time each starts with, when every one has one; else as they are."""
    stamped = [(_item_time(item), item) for item in items]
    if not all(when is not None for when, _ in stamped):
        return items
    return [item for _, item in sorted(stamped, key=lambda pair: pair[0] or _EPOCH)]


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
