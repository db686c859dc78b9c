"""The built-in digests give exactly hashlib's: checksums in STATE.md and cache keys must never change."""

from __future__ import annotations

import hashlib

import pytest

from planstate.core.digests import blake2b_hex, sha256_hex


@pytest.mark.parametrize("data", [b"", b"abc", "é ✓\n".encode(), bytes(range(256)) * 40])
def test_digests_match_hashlib(data: bytes) -> None:
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert blake2b_hex(data, 16) == hashlib.blake2b(data, digest_size=16).hexdigest()
