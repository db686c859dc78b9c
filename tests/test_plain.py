"""plain: dotted paths, strict comparison, minimal diffs and path edits on plain data."""

from __future__ import annotations

import copy
import io
import math
from datetime import UTC, date, datetime
from typing import Any

import pytest
from conftest import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from planstate.core.errors import UsageError
from planstate.text.paths import Segment, child, delete_in, format_path, get_in, parse_path, set_in
from planstate.text.plaindata import Op, apply_op, diff, same, to_plain

FAST = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def same_unordered(a: Any, b: Any) -> bool:
    """`same`, except that mapping key order does not matter (diff appends new keys at the end)."""
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        return all(any(same(k, j) and same_unordered(a[k], b[j]) for j in b if j == k) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same_unordered(x, y) for x, y in zip(a, b, strict=True))
    return same(a, b)


def apply_all(data: Any, ops: list[Op]) -> Any:
    """Apply edits in order to a copy of `data`."""
    out = copy.deepcopy(data)
    for op in ops:
        out = apply_op(out, op)
    return out


# ---------------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    ("path", "segments"),
    [
        ("title", ["title"]),
        ("phases.2.status", ["phases", "2", "status"]),
        ("phases[2].status", ["phases", 2, "status"]),
        ("phases[-1]", ["phases", -1]),
        ("a[0][1]", ["a", 0, 1]),
        ("[0]", [0]),
        ("a\\.b.c", ["a.b", "c"]),
        ("a\\[1]", ["a[1]"]),
        ("back\\\\slash", ["back\\slash"]),
        ("with space.é ✓", ["with space", "é ✓"]),
        ("a]", ["a]"]),
    ],
)
def test_parse_path(path: str, segments: list[Segment]) -> None:
    assert parse_path(path) == segments


def test_parse_path_passes_segment_lists_through() -> None:
    assert parse_path(["a.b", 1]) == ["a.b", 1]
    assert parse_path(("a", 0)) == ["a", 0]


@pytest.mark.parametrize("path", ["", "a..b", "a.", ".a", "a[x]", "a[", "[", "a\\", "a[1"])
def test_bad_paths(path: str) -> None:
    with pytest.raises(UsageError):
        parse_path(path)


def test_format_path() -> None:
    assert format_path(["phases", 2, "status"]) == "phases.2.status"  # the documented dotted form
    assert format_path(["a.b", "c"]) == "a\\.b.c"
    assert format_path(["a[1]", "back\\slash"]) == "a\\[1].back\\\\slash"
    assert format_path([]) == ""


SEGMENT = st.one_of(st.text(min_size=1), st.integers(-1000, 1000))


@FAST
@given(st.lists(st.text(min_size=1), min_size=1))
def test_format_then_parse_is_identity(path: list[Segment]) -> None:
    assert parse_path(format_path(path)) == path


@FAST
@given(st.lists(SEGMENT, min_size=1))
def test_format_then_parse_keeps_indexes_as_their_digits(path: list[Segment]) -> None:
    # Indexes are written `phases.2`, which reads back as the segment "2": every lookup treats it as index 2.
    assert parse_path(format_path(path)) == [str(s) if isinstance(s, int) else s for s in path]
    bracketed = ".".join(f"[{s}]" if isinstance(s, int) else format_path([s]) for s in path).replace(".[", "[")
    assert parse_path(bracketed) == path


# ---------------------------------------------------------------------------- to_plain


def test_to_plain_turns_ruamel_objects_into_builtins() -> None:
    text = (
        "a: 1.5\nb: true\nc: 2024-01-01T10:00:00Z\nd: 2024-01-01\ne: [1, 0x10, 0o17]\n"
        "f: !!set {x}\ng: !!str 1\nh: 'q'\ni: |\n  lit\nj: {k: [v]}\n"
    )
    plain = to_plain(YAML(typ="rt").load(io.StringIO(text)))
    assert plain == {
        "a": 1.5,
        "b": True,
        "c": datetime(2024, 1, 1, 10, 0, tzinfo=UTC),
        "d": date(2024, 1, 1),
        "e": [1, 16, 15],
        "f": {"x": None},
        "g": "1",
        "h": "q",
        "i": "lit\n",
        "j": {"k": ["v"]},
    }
    builtins = (dict, list, str, int, float, bool, date, datetime, type(None))

    def check(value: Any) -> None:
        assert type(value) in builtins, type(value)
        if isinstance(value, dict):
            for k, v in value.items():
                check(k)
                check(v)
        elif isinstance(value, list):
            for v in value:
                check(v)

    check(plain)


def test_to_plain_sets_tuples_and_shared_values() -> None:
    shared = [1]
    out = to_plain({"s": {3, 4}, "t": (1, (2,)), "a": shared, "b": shared})
    assert out["s"] == {3: None, 4: None}
    assert out["t"] == [1, [2]]
    assert out["a"] is out["b"]
    loop: dict[str, Any] = {}
    loop["self"] = loop
    assert to_plain(loop)["self"] is not loop


# ---------------------------------------------------------------------------- same


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1, True),
        (1, True, False),
        (1, 1.0, False),
        (0, False, False),
        ("1", 1, False),
        (None, None, True),
        (None, "", False),
        (float("nan"), float("nan"), True),
        ([1, 2], [1, 2], True),
        ([1, 2], [2, 1], False),
        ([1], [1, 1], False),
        ({"a": 1, "b": 2}, {"a": 1, "b": 2}, True),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, False),  # key order matters
        ({1: "x"}, {True: "x"}, False),  # so do key types
        ({1: "x"}, {"1": "x"}, False),
        ({"a": [1]}, {"a": [True]}, False),
        (date(2024, 1, 1), date(2024, 1, 1), True),
        (date(2024, 1, 1), datetime(2024, 1, 1), False),
        ([], {}, False),
    ],
)
def test_same(a: Any, b: Any, equal: bool) -> None:
    assert same(a, b) is equal
    assert same(b, a) is equal


# ---------------------------------------------------------------------------- diff


@pytest.mark.parametrize(
    ("old", "new", "ops"),
    [
        ({"a": 1}, {"a": 1}, []),
        ({"a": 1}, {"a": 2}, [Op("replace", ("a",), 2)]),
        ({"a": 1}, {"a": True}, [Op("replace", ("a",), True)]),
        ({"a": 1}, {"a": 1, "b": 2}, [Op("add", ("b",), 2)]),
        ({"a": 1, "b": 2}, {"b": 2}, [Op("delete", ("a",))]),
        ({"a": {"b": [1, 2]}}, {"a": {"b": [1, 2, 3]}}, [Op("append", ("a", "b"), 3)]),
        ({"l": [1, 2, 3, 4]}, {"l": [1, 3]}, [Op("delete", ("l", 3)), Op("delete", ("l", 1))]),
        ({"l": [1, 2]}, {"l": [9, 2]}, [Op("replace", ("l", 0), 9)]),
        ({"l": [1, 2]}, {"l": [9]}, [Op("replace", ("l", 0), 9), Op("delete", ("l", 1))]),
        ({"l": [1]}, {"l": [9, 8]}, [Op("replace", ("l", 0), 9), Op("append", ("l",), 8)]),
        ({"l": ["a", "b"]}, {"l": ["z", "a", "b"]}, [Op("insert", ("l", 0), "z")]),
        (
            {"l": ["a", "b"]},
            {"l": ["a", "m", "b", "e"]},
            [Op("insert", ("l", 1), "m"), Op("append", ("l",), "e")],
        ),
        (
            {"l": [1, 2]},
            {"l": [0, 1, 0, 2, 0]},
            [Op("insert", ("l", 0), 0), Op("insert", ("l", 2), 0), Op("append", ("l",), 0)],
        ),
        ({"l": [{"s": "a"}, {"s": "b"}]}, {"l": [{"s": "a"}, {"s": "c"}]}, [Op("replace", ("l", 1, "s"), "c")]),
        ({"l": []}, {"l": [1]}, [Op("replace", ("l",), [1])]),
        ({"m": {"a": 1}}, {"m": {}}, [Op("replace", ("m",), {})]),
        ({"a": 1}, [1], [Op("replace", (), [1])]),
        (None, {"a": 1}, [Op("replace", (), {"a": 1})]),
        ({1: "x"}, {True: "x"}, [Op("delete", (1,)), Op("add", (True,), "x")]),
    ],
)
def test_diff_is_minimal(old: Any, new: Any, ops: list[Op]) -> None:
    assert diff(old, new) == ops
    assert same(apply_all(old, ops), new)


def test_diff_appends_new_keys_at_the_end() -> None:
    ops = diff({"b": 1}, {"a": 0, "b": 1})
    assert ops == [Op("add", ("a",), 0)]
    assert list(apply_all({"b": 1}, ops)) == ["b", "a"]  # the file's order is kept; keys are not moved


def test_diff_without_inserts_rewrites_items() -> None:
    ops = diff({"l": ["a", "b"]}, {"l": ["z", "a", "b"]}, inserts=False)
    assert ops == [Op("replace", ("l", 0), "z"), Op("replace", ("l", 1), "a"), Op("append", ("l",), "b")]


def test_diff_uses_the_given_prefix() -> None:
    assert diff(1, 2, ("x", 0)) == [Op("replace", ("x", 0), 2)]


# ---------------------------------------------------------------------------- apply_op, child, get/set/delete


def test_apply_op_kinds() -> None:
    data = {"a": {"b": 1}, "l": [1, 2], "1": "one"}
    assert apply_op(copy.deepcopy(data), Op("replace", ("a", "b"), 2))["a"] == {"b": 2}
    assert apply_op(copy.deepcopy(data), Op("add", ("a", "c"), 3))["a"] == {"b": 1, "c": 3}
    assert apply_op(copy.deepcopy(data), Op("append", ("l",), 3))["l"] == [1, 2, 3]
    assert apply_op(copy.deepcopy(data), Op("delete", ("l", "0")))["l"] == [2]
    assert apply_op(copy.deepcopy(data), Op("replace", (1,), "uno"))["1"] == "uno"
    assert apply_op(copy.deepcopy(data), Op("replace", (), [1])) == [1]
    assert apply_op(None, Op("add", ("k",), 1)) == {"k": 1}
    assert apply_op({"only": 1}, Op("delete", ("only",))) is None  # an emptied front matter


def test_apply_op_copies_the_value() -> None:
    value = {"x": [1]}
    out = apply_op({}, Op("add", ("k",), value))
    value["x"].append(2)
    assert out == {"k": {"x": [1]}}


def test_child() -> None:
    assert child({"a": 1}, "a") == (True, 1)
    assert child({1: "one"}, "1") == (True, "one")
    assert child({"1": "one"}, 1) == (True, "one")
    assert child({"a": 1}, "b") == (False, None)
    assert child([10, 20], "1") == (True, 20)
    assert child([10, 20], -1) == (True, 20)
    assert child([10, 20], 2) == (False, None)
    assert child([10, 20], -3) == (False, None)
    assert child([10, 20], "x") == (False, None)
    assert child("scalar", "x") == (False, None)
    assert child(None, "x") == (False, None)


def test_get_in() -> None:
    data = {"phases": [{"status": "done"}]}
    assert get_in(data, ["phases", "0", "status"]) == (True, "done")
    assert get_in(data, ["phases", 1]) == (False, None)
    assert get_in(data, []) == (True, data)


def test_set_in() -> None:
    data: dict[str, Any] = {"a": None, "l": [1, 2], "1": "x"}
    set_in(data, ["a", "b", "c"], 1)
    set_in(data, ["n", "m"], 2)
    set_in(data, ["l", "-1"], 9)
    set_in(data, [1], "y")
    assert data == {"a": {"b": {"c": 1}}, "l": [1, 9], "1": "y", "n": {"m": 2}}


@pytest.mark.parametrize(
    "segments",
    [["l", "5"], ["l", "x"], ["l", "7", "a"], ["s", "a"], ["missing", 0]],
    ids=["out-of-range", "not-an-index", "missing-item", "through-scalar", "missing-list"],
)
def test_set_in_errors(segments: list[Segment]) -> None:
    data = {"l": [1], "s": "text"}
    with pytest.raises(UsageError):
        set_in(data, segments, 1)
    assert data == {"l": [1], "s": "text"}


def test_delete_in() -> None:
    data = {"a": {"b": 1}, "l": [1, 2], "1": "x"}
    assert delete_in(data, ["a", "b"]) is True
    assert delete_in(data, ["l", "0"]) is True
    assert delete_in(data, [1]) is True
    assert delete_in(data, ["a", "b"]) is False
    assert delete_in(data, ["l", "5"]) is False
    assert delete_in(data, ["x", "y"]) is False
    assert data == {"a": {}, "l": [2]}


# ---------------------------------------------------------------------------- properties

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, width=16),
    st.text(max_size=3),
    st.dates(min_value=date(2024, 1, 1), max_value=date(2024, 1, 3)),
)
KEYS = st.one_of(st.sampled_from(["a", "b", "c", "1"]), st.integers(0, 2), st.booleans())
DATA = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=16,
)


@FAST
@given(DATA, DATA)
def test_diff_then_apply_gives_the_new_value(old: Any, new: Any) -> None:
    ops = diff(old, new)
    assert same_unordered(apply_all(old, ops), new)


@FAST
@given(DATA)
def test_diff_of_equal_values_is_empty(value: Any) -> None:
    assert diff(value, copy.deepcopy(value)) == []
    assert same(value, copy.deepcopy(value))


@FAST
@given(st.lists(DATA, max_size=5), st.data())
def test_diff_of_removed_items_is_deletes_only(items: list[Any], data: st.DataObject) -> None:
    keep = data.draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items)))
    new = [x for x, k in zip(items, keep, strict=True) if k]
    ops = diff({"l": items}, {"l": new})
    if new:  # a subsequence: one delete per removed item, nothing else
        assert [op.kind for op in ops] == ["delete"] * (len(items) - len(new))
    elif items:  # everything removed: the list becomes []
        assert ops == [Op("replace", ("l",), [])]
    assert same_unordered(apply_all({"l": items}, ops), {"l": new})


@FAST
@given(st.lists(DATA, min_size=1, max_size=5), st.lists(st.tuples(st.integers(0, 8), DATA), min_size=1, max_size=4))
def test_diff_of_added_items_inserts_only(items: list[Any], added: list[tuple[int, Any]]) -> None:
    new = list(items)
    for position, value in added:
        new.insert(position % (len(new) + 1), value)
    ops = diff({"l": items}, {"l": new})
    assert {op.kind for op in ops} <= {"insert", "append"}
    assert len(ops) == len(added)
    assert same_unordered(apply_all({"l": items}, ops), {"l": new})


@FAST
@given(DATA, st.lists(st.one_of(st.sampled_from(["a", "b", "1"]), st.integers(-2, 2)), min_size=1, max_size=3))
def test_get_in_agrees_with_child(value: Any, path: list[Segment]) -> None:
    found, got = get_in(value, path)
    cur, ok = value, True
    for seg in path:
        ok, cur = child(cur, seg)
        if not ok:
            break
    assert found == ok
    if found:
        assert got is cur


def test_nan_same_and_diff() -> None:
    assert diff({"x": math.nan}, {"x": math.nan}) == []
