"""Record ids that never collide across clones, branches or worktrees: time-ordered, random, short."""

from __future__ import annotations

import os
import re
import time
import unicodedata

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base 32, lowercase: no i, l, o, u
PREFIXES = {"decision": "dec", "blocker": "blk", "session": "ses", "task": "tsk"}
TIME_CHARS = 7  # seconds since 1970 in 35 bits: sorts by time until the year 3058
RANDOM_CHARS = 5  # 25 random bits: two ids made in the same second collide once in 33 million


def _base32(number: int, width: int) -> str:
    chars = []
    for _ in range(width):
        number, digit = divmod(number, 32)
        chars.append(ALPHABET[digit])
    return "".join(reversed(chars))


def new_id(kind: str, when: float | None = None) -> str:
    """Return a new id for a record of `kind` (decision, blocker, session or task)."""
    seconds = int(time.time() if when is None else when)
    random_bits = int.from_bytes(os.urandom(4), "big") >> 7
    return f"{PREFIXES[kind]}-{_base32(seconds, TIME_CHARS)}{_base32(random_bits, RANDOM_CHARS)}"


def derived_id(kind: str, when: float, key: str) -> str:
    """An id made from what a record is rather than from chance: its time and a hash of `key` in place of the
    random part. An import gives a record without an id in its source the same id on every machine and run."""
    import hashlib

    digest = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:4], "big") >> 7
    return f"{PREFIXES[kind]}-{_base32(int(when), TIME_CHARS)}{_base32(digest, RANDOM_CHARS)}"


def first_since(kind: str, when: float) -> str:
    """The smallest id of `kind` made at or after `when` (seconds since 1970): every id made later sorts after it."""
    return f"{PREFIXES[kind]}-{_base32(int(when), TIME_CHARS)}"


_NAMED = re.compile(
    rf"((?:{'|'.join(PREFIXES.values())})-[{ALPHABET}]{{{TIME_CHARS + RANDOM_CHARS}}})(?:-.*)?\.md", re.DOTALL
)


def named_after(name: str) -> str:
    """The id a record file's name says: the id planstate named it after (`dec-1ng6gnqf4rdf-title.md`), else its
    stem (a hand-made file's; its front matter's `id` is the truth, which only a read finds)."""
    match = _NAMED.fullmatch(name)
    return match.group(1) if match else name.removesuffix(".md")


def slug(text: str, limit: int = 48) -> str:
    """Lowercase ASCII letters and digits joined by '-', at most `limit` characters."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    out = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return out[:limit].rstrip("-")


def file_name(record_id: str, title: str) -> str:
    """The file name of a record: its id, a dash and a slug of its title or agent."""
    tail = slug(title)
    return f"{record_id}-{tail}.md" if tail else f"{record_id}.md"
