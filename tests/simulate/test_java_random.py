"""Against values printed by OpenJDK 17's java.util.Random (the program is in the comments)."""

from __future__ import annotations

import pytest

from taskassign.simulate.java_random import JavaRandom

# for seed: r = new Random(seed); nextInt(), nextInt(10), nextInt(16), nextInt(1000000007), nextLong(),
# nextBoolean(), nextDouble(), nextInt(3), nextInt(Integer.MAX_VALUE), then Collections.shuffle(0..9, r)
JDK = {
    0: (-1155484576, 8, 3, 302116440, -6688467811848818630, True, 0.11700660880722513, 2, 715581077,
        [1, 3, 5, 0, 6, 8, 9, 4, 2, 7]),
    42: (-1170105035, 3, 10, 102948884, 5694868678511409995, False, 0.7077105889551186, 2, 1939977182,
         [0, 5, 4, 7, 8, 9, 1, 3, 6, 2]),
    -7: (1155869324, 7, 10, 119890471, 2701079913633722686, False, 0.08574465212415472, 1, 1094888921,
         [9, 5, 7, 2, 3, 0, 8, 1, 4, 6]),
    123456789012345: (-1421006947, 4, 13, 308132645, -2184844392376802456, False, 0.9278454752888875, 2,
                      1838689823, [6, 5, 4, 7, 8, 3, 9, 0, 2, 1]),
}


@pytest.mark.parametrize("seed", sorted(JDK))
def test_same_sequence_as_the_jdk(seed: int) -> None:
    r = JavaRandom(seed)
    drawn = (r.next_int(), r.next_int(10), r.next_int(16), r.next_int(1_000_000_007), r.next_long(),
             r.next_boolean(), r.next_double(), r.next_int(3), r.next_int(2**31 - 1))
    items = list(range(10))
    r.shuffle(items)
    assert (*drawn, items) == JDK[seed]


def test_bounded_draws_reject_like_the_jdk() -> None:
    # new Random(99): 12 x nextInt((1 << 30) + 1), a bound whose rejection loop runs half the time
    r = JavaRandom(99)
    assert [r.next_int((1 << 30) + 1) for _ in range(12)] == [
        836448458, 745722429, 840971762, 120279599, 555345868, 739106981, 540811813, 730917838, 795863139,
        881524151, 332565657, 778530279]


def test_a_non_positive_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="bound must be positive"):
        JavaRandom(1).next_int(0)
