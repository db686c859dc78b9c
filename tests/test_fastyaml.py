"""The libyaml path to a front matter's node tree (text/fastyaml.text_nodes) gives ruamel's tree, or nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS

from planstate.core.errors import PlanstateError
from planstate.text import envelope, fastyaml, parser
from planstate.text.document import Document
from planstate.text.plaindata import same

FILES = sorted(p for p in (CORPUS, CORPUS.parent / "examples") for p in p.rglob("*.md") if p.is_file())
SAMPLE = FILES[::6]  # the whole corpus agrees (checked when this path was written); a sixth keeps the suite fast


def differences(ours: Any, theirs: Any, where: str = "root") -> str | None:
    """Where two node trees differ in what an edit reads (kind, tag, value, style, flow style, marks), or None."""
    if type(ours) is not type(theirs):
        return f"{where}: {type(ours).__name__} / {type(theirs).__name__}"
    for name in ("tag", "style", "flow_style"):
        if getattr(ours, name, None) != getattr(theirs, name, None):
            return f"{where}: {name} {getattr(ours, name, None)!r} / {getattr(theirs, name, None)!r}"
    for name in ("start_mark", "end_mark"):
        a, b = getattr(ours, name), getattr(theirs, name)
        if (a.index, a.line, a.column) != (b.index, b.line, b.column):
            return f"{where}: {name} {(a.index, a.line, a.column)} / {(b.index, b.line, b.column)}"
    if isinstance(ours.value, str) or isinstance(theirs.value, str):
        return None if ours.value == theirs.value else f"{where}: value {ours.value!r} / {theirs.value!r}"
    if len(ours.value) != len(theirs.value):
        return f"{where}: {len(ours.value)} / {len(theirs.value)} children"
    for i, (a, b) in enumerate(zip(ours.value, theirs.value, strict=True)):
        found = (
            differences(a[0], b[0], f"{where}.key{i}") or differences(a[1], b[1], f"{where}.{i}")
            if isinstance(a, tuple)
            else differences(a, b, f"{where}.{i}")
        )
        if found:
            return found
    return None


def agrees(text: str) -> bool:
    """Assert the fast path answers `text` only with ruamel's own tree and data; tell whether it answered."""
    composed = fastyaml.text_nodes(text)
    try:
        expected = parser.parse(text, lambda index: (0, 0), None, fast=False)
    except PlanstateError as exc:
        assert composed is fastyaml.MISS, f"answered what the round-trip parser refuses: {exc}"
        return False
    if composed is fastyaml.MISS:
        return False
    root, data = composed
    assert differences(root, expected.root) is None, differences(root, expected.root)
    assert same(data, expected.data)
    return True


@pytest.mark.parametrize("path", SAMPLE, ids=lambda p: p.name[:40])
def test_the_node_tree_is_the_round_trip_parsers_or_nothing(path: Path) -> None:
    """Over real files: every tree the fast path answers is ruamel's, node for node, and so is its data."""
    try:
        parts = envelope.decode(path.read_bytes(), None)
    except PlanstateError:
        return
    if parts.head and parts.text.strip():
        agrees(parts.text)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: [x, 'y', \"z\"]\nc: {d: 2}\n",
        "empty:\nnext: 1\n",  # an empty value is marked at the next key
        "outer:\n  inner:\nlast:\n",  # at the end of a mapping, and of the text
        "- a:\n  b:\n- c\n",
        "name: é ü 日本\nafter: 2\n",  # marks count characters
        "a: 1\r\nb: two\r\n",
        "text: |\n  line one\n  line two\n\n\nnext: 1\n",
        "when: 2026-01-02T03:04:05Z\nday: 2026-01-02\nn: 0o17\nok: true\nf: 2.5\nnone: null\n",
        "# a comment\n\nkey: value  # trailing\n# between\nother: [1, 2]  # more\n",
        "a:\n# a comment\nb: 1\n",
        "outer:\n  inner:\n# a comment\nlast: 1\n",
        'a: 😀 ok\nb: [😀, 日本]\nc: "\\U0001F600"\n',  # characters beyond the BMP count one each
        "n: .inf\nq: 0x1F\nr: 1e3\ns: +12\nt: 1_000\nu: ~\nv: yes\nw: True\n",
    ],
)
def test_plain_yaml_is_answered_with_ruamels_tree(text: str) -> None:
    """The shapes planstate writes and people add by hand go the fast way, with ruamel's marks."""
    assert agrees(text), text


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",  # aliases
        "a: !!str 12\n",  # explicit tags
        "base: {a: 1}\nc:\n  <<: {a: 2}\n",  # merge keys
        "a: 1\na: 2\n",  # duplicate keys, refused round trip
        "a: [1\n",  # an error, located round trip
        "%YAML 1.2\n---\na: 1\n",
        "a: plain text\n  folded over two lines\n",  # ruamel notes where a plain scalar folds
        "a: >\n  folded\n  block\n",
        "- \n- a\n",  # an empty item
        "empty:   # a comment\nnext: 1\n",  # where ruamel marks this one depends on where it puts the comment
        "? [a, b]\n: c\n",  # a key that is a list
        "a:\tb\n",
        "a: 1",  # no newline at the end: libyaml marks the last line's end elsewhere
        "a: x\ufeffy\n",  # libyaml skips a byte order mark in its marks
        "a: 1\x85b: 2\n",  # a line break in YAML 1.1 only (libyaml's), not in YAML 1.2 (ruamel's)
        "a: x\u2028y\n",
    ],
)
def test_what_the_fast_path_does_not_vouch_for_is_parsed_round_trip(text: str) -> None:
    """Anchors, tags, merges, duplicates, errors, folds, odd empties and odd characters go round trip, which says
    what they mean."""
    assert fastyaml.text_nodes(text) is fastyaml.MISS, text
    agrees(text)


def test_a_document_parsed_either_way_takes_the_same_edits_to_the_same_bytes() -> None:
    """Edits splice into the text at the tree's marks: the same tree, so the same bytes, whichever path read it."""
    assert fastyaml.load()  # as the MCP server does: from here on, Document parses through libyaml
    text = "---\n# keep me\ntitle: Old  # note\nempty:\nitems:\n  - one\nnested:\n  deep: 1\n---\nbody\n"
    fast = Document.from_bytes(text.encode())
    slow = Document.from_bytes(text.encode())
    parsed = parser.parse(slow.front_matter_text, slow._position, None, fast=False)
    slow._root, slow._data, slow._shared, slow._merges = parsed
    assert differences(fast._root, slow._root) is None and fast._root is not slow._root
    for doc in (fast, slow):
        doc.set("title", "New")
        doc.set("empty", "filled")
        doc.append("items", "two")
        doc.set("nested.deep", {"x": [1, 2]})
        doc.delete("items.0")
    assert fast.to_bytes() == slow.to_bytes()
    assert "# keep me" in fast.to_bytes().decode() and "# note" in fast.to_bytes().decode()


PIECES = [":", " ", "\n", "- ", "#", "'", '"', "  ", "[", "]", "{", "}", ",", "|", ">", "?", "a", "1", "\n  ", ": "]
PIECES += ["\n- ", "null", "~", "é", "\r\n", "key:", "x: y", " # c", "\n# c\n", "&a ", "*a", "<<: ", ">\n  ", "|-\n  "]


def test_edits_of_real_files_by_a_seeded_fuzz_agree_or_go_round_trip() -> None:
    """Real front matter with a few characters inserted or deleted at random (seeded: the same texts every run):
    each is answered with ruamel's tree or left to ruamel. Edits like these found the marks of a commented empty
    value; a longer run (4 × 3,000 texts) found nothing more."""
    import random

    rng = random.Random(13)
    texts = []
    for path in SAMPLE:
        try:
            parts = envelope.decode(path.read_bytes(), None)
        except PlanstateError:
            continue
        if parts.head and parts.text.strip() and len(parts.text) < 2000:
            texts.append(parts.text)
    answered = 0
    for _ in range(300):
        text = rng.choice(texts)
        for _edit in range(rng.randint(1, 3)):
            at = rng.randrange(len(text) + 1)
            cut = rng.random() < 0.3  # delete a character, else insert a piece
            text = text[:at] + ("" if cut else rng.choice(PIECES)) + text[at + cut :]
        answered += agrees(text)
    assert answered > 100  # most edits leave plain YAML: the fast path is what is being compared


TIMESTAMPS = [
    "2025-11-21",
    "2025-11-21T08:30:55Z",
    "9999-12-31T23:59:59Z",
    "2025-02-30",  # no such day: the text
    "2025-02-29T08:00:00Z",
    "2024-02-29T23:59:60Z",  # a leap second: no such time
    "2025-11-21T24:00:00Z",
    "0000-01-01",
    "2025-11-21t08:30:55z",
    "2025-11-21T08:30:55.123Z",
    "2025-11-21 08:30:55",
    "2025-11-21T08:30:55+02:00",
    "2025-1-2",
]


@pytest.mark.parametrize("value", TIMESTAMPS)
def test_a_timestamp_is_made_as_ruamel_makes_it(value: str) -> None:
    """The two forms planstate writes are made without ruamel's constructor, the rest with it: either way the value
    is the round-trip parser's, down to its type and zone (a day or time that does not exist stays its text)."""
    text = f"when: {value}\nlist: [{value}]\n"
    fast = fastyaml.text_data(text)
    expected = parser.parse(text, lambda index: (0, 0), None, fast=False).data
    assert repr(fast) == repr(expected)
    assert same(fast, expected)


# ---------------------------------------------------------------------------- PyYAML's patterns, compiled when used

PYYAML_USE = """
import json, re, threading
from planstate.text import fastyaml

if yaml_first:
    import yaml
if threads:
    threading.Thread(target=threading.Event().wait, daemon=True).start()
assert fastyaml.load()
import yaml

assert re.compile is fastyaml._COMPILE
deferred = type(yaml.reader.Reader.NON_PRINTABLE).__name__ == "_Deferred"
text = "a: 2026-01-01T10:00:00Z\\nb: [1, true, null, 0x1f, 1.5, ~]\\n"
text += "base: &b {x: 1}\\nc: {<<: *b, y: 2}\\nd: !!binary aGk=\\n"
try:
    yaml.safe_load("bad: \\x07")
    refused = False
except yaml.YAMLError:
    refused = True
print(json.dumps([deferred, repr(yaml.safe_load(text)), refused, repr(yaml.full_load("e: 1e3"))]))
"""


def _pyyaml_in_a_new_process(*, yaml_first: bool = False, threads: bool = False) -> list[Any]:
    """What PyYAML answers in a fresh process that made planstate's fast path ready (see `PYYAML_USE`)."""
    import json
    import subprocess
    import sys

    program = f"yaml_first, threads = {yaml_first}, {threads}\n{PYYAML_USE}"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def test_pyyaml_compiles_its_patterns_when_used_and_answers_as_it_always_does() -> None:
    """Making the fast path ready imports PyYAML with its patterns deferred (a process of one thread): `re.compile`
    is itself again afterwards, and PyYAML's own loaders, which use them, answer exactly as when PyYAML was imported
    first (resolvers, merge keys, binary, a refused control character); with another thread running, or PyYAML
    already imported, nothing is deferred."""
    deferred = _pyyaml_in_a_new_process()
    plain = _pyyaml_in_a_new_process(yaml_first=True)
    threaded = _pyyaml_in_a_new_process(threads=True)
    assert (deferred[0], plain[0], threaded[0]) == (True, False, False)
    assert deferred[1:] == plain[1:] == threaded[1:]
    assert deferred[2] is True and "datetime.datetime(2026, 1, 1, 10, 0" in deferred[1]


def test_a_deferred_pattern_is_the_pattern_re_would_have_compiled() -> None:
    """`re.compile` takes its flags by position or by name: a deferred pattern takes them the same ways."""
    import re

    for deferred in (fastyaml._Deferred("a+b", re.I), fastyaml._Deferred("a+b", flags=re.I)):
        assert deferred.pattern == "a+b" and deferred.flags == re.compile("a+b", re.I).flags
        assert deferred.fullmatch("AAB") is not None and deferred.sub("-", "xaab") == "x-"
