"""The built-in digests give exactly hashlib's: checksums in STATE.md and cache keys must never change."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from planstate.core.digests import blake2b_hex, names_and_numbers, sha256_hex


@pytest.mark.parametrize("data", [b"", b"abc", "é ✓\n".encode(), bytes(range(256)) * 40])
def test_digests_match_hashlib(data: bytes) -> None:
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert blake2b_hex(data, 16) == hashlib.blake2b(data, digest_size=16).hexdigest()


def _identities(count: int) -> list[tuple[int, int, int, int, int]]:
    """Stat identities as a folder of `count` files gives them (device, inode, size, mtime_ns, ctime_ns)."""
    at = 1_795_000_000_000_000_000
    return [(2049, 1_000_000 + i, 300 + i % 97, at + i * 1_000_003, at + i * 1_000_033) for i in range(count)]


def test_names_and_numbers_change_with_any_one_name_or_number() -> None:
    """One number of 17,000 identities changed, one name, or the order of two entries: each changes the key."""
    names = [f"dec-{i:012d}-a-title.md" for i in range(17_000)]
    identities = _identities(17_000)
    key = names_and_numbers(names, identities)
    assert names_and_numbers(list(names), list(identities)) == key
    for index in (0, 8_500, 16_999):
        for field in range(5):
            changed = list(identities)
            item = list(changed[index])
            item[field] += 1
            changed[index] = tuple(item)  # type: ignore[assignment]
            assert names_and_numbers(names, changed) != key
        renamed = list(names)
        renamed[index] = renamed[index].replace("a-title", "b-title")
        assert names_and_numbers(renamed, identities) != key
    swapped, swapped_ids = list(names), list(identities)
    swapped[1], swapped[2] = swapped[2], swapped[1]
    swapped_ids[1], swapped_ids[2] = swapped_ids[2], swapped_ids[1]
    assert names_and_numbers(swapped, swapped_ids) != key
    assert names_and_numbers(["ab", "c"], []) != names_and_numbers(["a", "bc"], [])  # joined by NUL, in no name
    assert names_and_numbers(["é", "\udcff"], [1]) == names_and_numbers(["é", "\udcff"], [1])  # undecodable names


def test_names_and_numbers_are_the_same_in_every_process() -> None:
    """Text hashes differ between processes (PYTHONHASHSEED); the key must not, or no cache would ever hit."""
    program = (
        "from planstate.core.digests import names_and_numbers\n"
        "print(names_and_numbers(['STATE.md', 'dec-x.md'], [(1, 2, 3, 1795000000000000001, -4), 33188, 16877]))\n"
    )
    keys = {
        subprocess.run(
            [sys.executable, "-c", program], env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True
        ).stdout
        for seed in ("0", "1", "12345", "random")
    }
    assert len(keys) == 1 and keys.pop().strip()
