from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from taskassign.simulate.restore import RateCarry, restore_budget, share_restore, water_fill


def test_small_needs_are_met_and_the_rest_is_shared() -> None:
    assert water_fill(10, [("a", 2), ("b", 10), ("c", 10)]) == {"a": 2, "b": 4, "c": 4}


def test_records_that_do_not_divide_go_to_the_first_keys() -> None:
    assert water_fill(7, [("a", 10), ("b", 10), ("c", 10)]) == {"a": 3, "b": 2, "c": 2}
    assert water_fill(2, [("a", 10), ("b", 10), ("c", 10)]) == {"a": 1, "b": 1, "c": 0}


def test_a_budget_above_the_needs_meets_them_all() -> None:
    assert water_fill(100, [("a", 5), ("b", 0), ("c", 7)]) == {"a": 5, "b": 0, "c": 7}


def test_actives_restore_before_standbys() -> None:
    assert share_restore(10, [("a", 6)], [("s", 10), ("t", 10)]) == {"a": 6, "s": 2, "t": 2}
    assert share_restore(10, [("a", 20)], [("s", 10)]) == {"a": 10, "s": 0}


@given(st.integers(0, 10_000), st.lists(st.integers(0, 5_000), max_size=8))
def test_water_fill_gives_min_of_budget_and_needs_and_never_more_than_a_need(budget: int, needs: list[int]) -> None:
    keyed = [(i, n) for i, n in enumerate(needs)]
    given_out = water_fill(budget, keyed)
    assert sum(given_out.values()) == min(budget, sum(needs))
    assert all(0 <= given_out[i] <= n for i, n in keyed)
    # fairness: a key that did not get all it needs got at least as much as anyone else, minus one record
    short = [given_out[i] for i, n in keyed if given_out[i] < n]
    if short:
        assert max(given_out.values()) - min(short) <= 1


def test_rate_carry_loses_no_record_over_many_small_intervals() -> None:
    carry = RateCarry()
    taken = [carry.take(3, 500) for _ in range(10)]
    assert taken == [1, 2] * 5 and sum(taken) == restore_budget(3, 5_000) == 15
