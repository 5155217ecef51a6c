"""java_string_hashes against ids.java_string_hash: ASCII ids of every length (empty ones among them, long ones
whose powers of 31 wrap), and non-ASCII text (the one-by-one path)."""

from __future__ import annotations

import random

import pytest

from taskassign.ids import java_string_hash
from taskassign.internals.string_hashes import java_string_hashes


@pytest.mark.parametrize("seed", range(20))
def test_the_same_hashes_as_one_at_a_time(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = "abcXYZ0123456789-_~ \x7f" if seed % 4 else "abcé€\U0001f600"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 5, 12, 36, 300])))
             for _ in range(rng.randint(0, 50))]
    assert java_string_hashes(texts) == [java_string_hash(t) for t in texts]


def test_known_values() -> None:
    assert java_string_hashes(["", "a", "member-0", "hello"]) == [0, 97, java_string_hash("member-0"), 99162322]
