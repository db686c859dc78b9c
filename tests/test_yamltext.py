"""yamltext: every rendered scalar, flow value and block reads back as exactly the value written."""

from __future__ import annotations

import io
import math
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
import yaml
from conftest import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from planstate.text import yamltext
from planstate.text.document import Document
from planstate.text.plaindata import same, to_plain
from planstate.text.yamltext import Indent

FAST = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def ruamel_load(text: str) -> Any:
    """Load YAML 1.2 the way planstate reads files (ruamel round-trip), as plain data."""
    return to_plain(YAML(typ="rt").load(io.StringIO(text)))


def both_load(text: str) -> tuple[Any, Any]:
    """Load with ruamel (YAML 1.2) and PyYAML (YAML 1.1)."""
    return ruamel_load(text), yaml.safe_load(text)


def assert_reads_back(text: str, expected: Any) -> None:
    """Both loaders read `text` as exactly `expected`."""
    new, old = both_load(text)
    assert same(new, expected), (text, new)
    assert same(to_plain(old), expected), (text, old)


# ---------------------------------------------------------------------------- plain scalars


@pytest.mark.parametrize(
    "text",
    ["hello", "hello world", "a-b", "a:b", "a#b", "x: ", "é ✓ 🎉", "1.2.3", "v1", "3rd", "path/to/file.md", "a'b"],
)
def test_plain_ok_for_ordinary_text(text: str) -> None:
    if text == "x: ":
        assert not yamltext.plain_ok(text)
        return
    assert yamltext.plain_ok(text)
    assert_reads_back(f"k: {text}\n", {"k": text})


@pytest.mark.parametrize(
    "text",
    [
        "",
        " x",
        "x ",
        "\tx",
        "a\nb",
        "a\rb",
        "a\tb",
        "-x",
        "- x",
        "?x",
        ":x",
        ",x",
        "[x",
        "]x",
        "{x",
        "}x",
        "#x",
        "&x",
        "*x",
        "!x",
        "|x",
        ">x",
        "'x",
        '"x',
        "%x",
        "@x",
        "`x",
        "a: b",
        "a #b",
        "x:",
        "---",
        "--- x",
        "...",
        "... x",
        "~",
        "null",
        "Null",
        "NULL",
        "yes",
        "No",
        "ON",
        "off",
        "y",
        "N",
        "true",
        "False",
        "0",
        "-1",
        "+1",
        "1_000",
        "017",
        "0o17",
        "0x1f",
        "0b11",
        "1:30",
        "1:30:15",
        "1.5",
        ".5",
        "1.",
        "1e3",
        "-1E-3",
        ".inf",
        "-.Inf",
        ".NaN",
        "2024-01-01",
        "2024-1-1",
        "2024-01-01T10:00:00Z",
        "2024-01-01 10:00:00 +02:00",
        "=",
        "<<",
        "a\x85b",
        "a\u2028b",
        "a\x00b",
        "\ufeffx",
    ],
)
def test_plain_not_ok(text: str) -> None:
    assert not yamltext.plain_ok(text)
    rendered = yamltext.scalar(text)
    assert rendered.startswith('"')
    assert_reads_back(f"k: {rendered}\n", {"k": text})


@pytest.mark.parametrize("text", ["a,b", "a[1]", "{x}", "x}"])
def test_flow_context_needs_quotes_for_flow_indicators(text: str) -> None:
    assert not yamltext.plain_ok(text, flow=True)
    assert_reads_back(f"[{yamltext.scalar(text, flow=True)}]\n", [text])
    assert_reads_back(f"{{k: {yamltext.scalar(text, flow=True)}}}\n", {"k": text})


# ---------------------------------------------------------------------------- quoted scalars


def test_double_quoted_escapes() -> None:
    assert yamltext.double_quoted('a"b\\c') == '"a\\"b\\\\c"'
    assert yamltext.double_quoted("\x00\x07\x08\t\n\x0b\x0c\r\x1b") == '"\\0\\a\\b\\t\\n\\v\\f\\r\\e"'
    assert yamltext.double_quoted("\x85\u2028\u2029") == '"\\N\\L\\P"'
    assert yamltext.double_quoted("\x01\x7f\x9f\ufeff\ufffe") == '"\\x01\\x7f\\x9f\\ufeff\\ufffe"'
    assert yamltext.double_quoted("é ✓ 🎉") == '"é ✓ 🎉"'


def test_single_quoted() -> None:
    assert yamltext.single_quoted("it's") == "'it''s'"
    assert yamltext.single_quoted_ok("it's # fine: yes")
    for text in ["a\nb", "a\tb", "a\rb", "a\x01", "a\x85", "a\u2028"]:
        assert not yamltext.single_quoted_ok(text)
        assert yamltext.scalar(text, style="'").startswith('"')  # falls back to double quotes


def test_scalar_keeps_the_requested_quote_style() -> None:
    assert yamltext.scalar("x", style="'") == "'x'"
    assert yamltext.scalar("x", style='"') == '"x"'
    assert yamltext.scalar("x") == "x"
    assert yamltext.scalar("yes", style="'") == "'yes'"
    assert yamltext.scalar(5, style="'") == "5"  # only strings are quoted


# ---------------------------------------------------------------------------- other scalar types


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (-12, "-12"),
        (10**40, str(10**40)),
        (1.5, "1.5"),
        (-0.25, "-0.25"),
        (1e20, "1.0e+20"),
        (1e-7, "1.0e-07"),
        (float("inf"), ".inf"),
        (float("-inf"), "-.inf"),
        (date(2024, 2, 29), "2024-02-29"),
        (datetime(2024, 1, 2, 3, 4, 5), "2024-01-02T03:04:05"),
        (datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), "2024-01-02T03:04:05Z"),
        (
            datetime(2024, 1, 2, 3, 4, 5, 600000, tzinfo=timezone(timedelta(hours=2))),
            "2024-01-02T03:04:05.600000+02:00",
        ),
    ],
)
def test_scalar_types(value: Any, text: str) -> None:
    assert yamltext.scalar(value) == text
    new, old = both_load(f"k: {text}\n")
    if isinstance(value, datetime) and value.tzinfo is None:
        assert new["k"] == value
    else:
        assert same(new["k"], value) or new["k"] == value
    assert old["k"] == value


def test_nan_reads_back_as_nan() -> None:
    assert yamltext.scalar(float("nan")) == ".nan"
    new, old = both_load("k: .nan\n")
    assert math.isnan(new["k"]) and math.isnan(old["k"])


def test_scalar_refuses_other_objects() -> None:
    with pytest.raises(TypeError):
        yamltext.scalar(object())
    with pytest.raises(TypeError):
        yamltext.scalar(b"bytes")


def test_format_datetime() -> None:
    assert yamltext.format_datetime(datetime(2026, 1, 1, tzinfo=UTC)) == "2026-01-01T00:00:00Z"
    assert yamltext.format_datetime(datetime(2026, 1, 1)) == "2026-01-01T00:00:00"
    assert yamltext.format_datetime(datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=-5)))) == (
        "2026-01-01T00:00:00-05:00"
    )


# ---------------------------------------------------------------------------- literal blocks


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("a\nb", True),
        ("a\nb\n", True),
        ("a\n\n", True),
        ("\n\na", True),
        ("\ta\n b", True),
        ("# not a comment\n- not a list", True),
        ("", False),
        ("\n", False),
        ("  \n ", False),
        ("a\n  \nb", False),  # a line of only spaces
        ("a\r\nb", False),
        ("a\x85b\n", False),
        ("a\u2028b\n", False),
        ("a\x01\nb", False),
    ],
)
def test_literal_ok(text: str, ok: bool) -> None:
    assert yamltext.literal_ok(text) is ok


@pytest.mark.parametrize(
    ("text", "indent", "parent", "lines"),
    [
        ("a\nb", 2, 0, ["|-", "  a", "  b"]),
        ("a\nb\n", 2, 0, ["|", "  a", "  b"]),
        ("a\n\n", 2, 0, ["|+", "  a", ""]),
        ("a\n\nb", 4, 2, ["|-", "    a", "", "    b"]),
        ("\n\na", 2, 0, ["|-", "", "", "  a"]),
        (" a\nb", 2, 0, ["|2-", "   a", "  b"]),
        (" a\nb", 4, 2, ["|2-", "     a", "    b"]),
        ("\n  a\nb\n", 6, 2, ["|4", "", "        a", "      b"]),
    ],
)
def test_literal_block(text: str, indent: int, parent: int, lines: list[str]) -> None:
    assert yamltext.literal_block(text, indent, parent) == lines
    prefix = " " * parent
    doc = f"{prefix}k: " + "\n".join(lines) + "\n"
    if parent:
        doc = "outer:\n" + doc
    new, old = both_load(doc)
    assert (new["outer"]["k"] if parent else new["k"]) == text
    assert (old["outer"]["k"] if parent else old["k"]) == text


def test_needs_block() -> None:
    assert yamltext.needs_block({"a": 1})
    assert yamltext.needs_block([1])
    assert yamltext.needs_block("a\nb")
    assert not yamltext.needs_block({})
    assert not yamltext.needs_block([])
    assert not yamltext.needs_block("ab")
    assert not yamltext.needs_block(1)


# ---------------------------------------------------------------------------- flow and block collections


def test_flow() -> None:
    assert yamltext.flow({"a": [1, "x, y"], "b": {}}) == '{a: [1, "x, y"], b: {}}'
    assert yamltext.flow([]) == "[]"
    assert yamltext.flow({}) == "{}"
    assert yamltext.flow(["a\nb", None, True]) == '["a\\nb", null, true]'
    assert yamltext.flow({1: "one", "1": "string"}) == '{1: one, "1": string}'


def test_key_text() -> None:
    assert yamltext.key_text("name") == "name"
    assert yamltext.key_text("a: b") == '"a: b"'
    assert yamltext.key_text("n") == '"n"'
    assert yamltext.key_text(3) == "3"
    assert yamltext.key_text("3") == '"3"'
    assert yamltext.key_text("a,b", flow=True) == '"a,b"'


def test_block_default_indent() -> None:
    value = {"a": [1, {"b": 2, "c": [3]}], "d": "p\nq\n", "e": {}, "f": [], "g": [[1], []]}
    lines = yamltext.block(value, 0, Indent())
    assert lines == [
        "a:",
        "  - 1",
        "  - b: 2",
        "    c:",
        "      - 3",
        "d: |",
        "  p",
        "  q",
        "e: {}",
        "f: []",
        "g:",
        "  -",
        "    - 1",
        "  - []",
    ]
    assert_reads_back("\n".join(lines) + "\n", value)


def test_block_follows_the_given_indent() -> None:
    value = {"a": [1, {"b": 2, "c": [3]}], "d": "p\nq\n"}
    lines = yamltext.block(value, 0, Indent(mapping=4, sequence=0, item=4))
    assert lines == ["a:", "- 1", "-   b: 2", "    c:", "    - 3", "d: |", "    p", "    q"]
    assert_reads_back("\n".join(lines) + "\n", value)


def test_block_at_a_column_without_literals() -> None:
    value = {"a": [1, {"b": "x\ny"}]}
    lines = yamltext.block(value, 2, Indent(), literals=False)
    assert lines == ["  a:", "    - 1", '    - b: "x\\ny"']
    assert_reads_back("outer:\n" + "\n".join(lines) + "\n", {"outer": value})


def test_entry() -> None:
    assert yamltext.entry("k", {}, 0, Indent()) == ["k: {}"]
    assert yamltext.entry("k", "a\nb", 2, Indent()) == ["  k: |-", "    a", "    b"]
    assert yamltext.entry("k", " a\nb", 2, Indent()) == ["  k: |2-", "     a", "    b"]
    assert yamltext.entry("k", "a\nb", 2, Indent(), literals=False) == ['  k: "a\\nb"']
    assert yamltext.entry("yes", [1], 0, Indent(sequence=0)) == ['"yes":', "- 1"]


# ---------------------------------------------------------------------------- properties

TEXT = st.text()
TRICKY = st.text(alphabet=" \n\t\r-:#'\"|>[]{}!&*%@`,?x0.~\x85\u2028\ufeff\\")
KEYS = st.one_of(st.text(max_size=6), st.integers(-3, 3), st.booleans())
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    TRICKY,
    st.dates(),
)
DATA = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)


@FAST
@given(st.one_of(TEXT, TRICKY))
def test_any_string_scalar_reads_back(text: str) -> None:
    rendered = yamltext.scalar(text)
    assert "\n" not in rendered
    assert_reads_back(f"k: {rendered}\n", {"k": text})
    assert_reads_back(f"[{yamltext.scalar(text, flow=True)}]\n", [text])
    if yamltext.single_quoted_ok(text):
        assert_reads_back(f"k: {yamltext.scalar(text, style=chr(39))}\n", {"k": text})
    if yamltext.plain_ok(text):
        assert yamltext.scalar(text) == text


@FAST
@given(st.one_of(TEXT, TRICKY), st.integers(0, 6), st.integers(1, 4))
def test_any_literal_block_reads_back(text: str, parent: int, step: int) -> None:
    if not yamltext.literal_ok(text):
        return
    lines = yamltext.literal_block(text, parent + step, parent)
    doc = "outer:\n" + " " * parent + "k: " + "\n".join(lines) + "\n" if parent else "k: " + "\n".join(lines) + "\n"
    expected = {"outer": {"k": text}} if parent else {"k": text}
    assert_reads_back(doc, expected)


@FAST
@given(DATA)
def test_any_flow_value_reads_back(value: Any) -> None:
    new = ruamel_load(f"k: {yamltext.flow(value)}\n")
    assert same(new, {"k": value})


@FAST
@given(
    st.dictionaries(KEYS, DATA, min_size=1, max_size=4),
    st.integers(0, 4),
    st.builds(Indent, st.integers(1, 4), st.integers(0, 4), st.integers(2, 4)),
    st.booleans(),
)
def test_any_block_reads_back(value: dict[Any, Any], col: int, indent: Indent, literals: bool) -> None:
    lines = yamltext.block(value, col, indent, literals=literals)
    text = "\n".join(lines) + "\n"
    if col:
        text = "outer:\n" + text
        value = {"outer": value}
    assert same(ruamel_load(text), value)


@FAST
@given(TEXT)
def test_set_then_reparse_gives_the_same_string(text: str) -> None:
    doc = Document.from_bytes(b"---\ntitle: x\nlist:\n  - a\n---\nbody\n")
    doc.set("title", text)
    doc.append("list", text)
    doc.set("new.nested", text)
    again = Document.from_bytes(doc.to_bytes())
    assert again.get("title") == text
    assert again.get("list.1") == text
    assert again.get("new.nested") == text
    assert again.body == "body\n"
