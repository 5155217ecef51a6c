from __future__ import annotations

from taskassign.assignors.state_aware.bins import Bins


def bins(**kwargs: object) -> Bins:
    defaults: dict[str, object] = {"tolerance": 0.1, "count_tolerance": 0.5}
    defaults.update(kwargs)
    return Bins([0.25, 0.75], 100.0, 8, **defaults)  # type: ignore[arg-type]


def test_fair_loads_and_bounds_follow_the_thread_share() -> None:
    b = bins()
    assert b.fair == [25.0, 75.0]
    assert b.upper == [25.0 * 1.1, 75.0 * 1.1] and b.lower == [25.0 * 0.9, 75.0 * 0.9]
    assert b.count_cap == [3, 9]  # ceil(2 x 1.5), ceil(6 x 1.5)


def test_an_empty_client_takes_any_task_then_the_bounds_apply() -> None:
    b = bins()
    assert b.fits(0, 1_000.0)
    b.add(0, 20.0)
    assert b.fits(0, 7.5) and not b.fits(0, 7.6)
    assert b.violation(0, 7.6) == "state"
    b.add(0, 1.0)
    b.add(0, 1.0)
    assert b.violation(0, 0.1) == "count"


def test_subtopology_caps_are_the_even_share_plus_slack() -> None:
    b = Bins([0.5, 0.5], 10.0, 10, tolerance=1.0, count_tolerance=1.0, group_sizes=[3], group_slack=0)
    assert b.group_cap == [[2, 2]]
    b.add(0, 1.0, 0)
    b.add(0, 1.0, 0)
    assert b.violation(0, 1.0, 0) == "subtopology" and b.fits(1, 1.0, 0)


def test_least_loaded_is_relative_to_the_share_and_skips_refusals() -> None:
    b = bins()
    b.add(0, 10.0)  # 40% of its fair load
    b.add(1, 15.0)  # 20% of its fair load
    assert b.least_loaded(lambda c: True, everywhere=True) == 1
    assert b.least_loaded(lambda c: c == 0, everywhere=True) == 0
    assert b.least_loaded(lambda c: False, everywhere=True) is None
    assert b.most_loaded(2, 0.0) == [0, 1]
    b.remove(0, 10.0)
    assert b.relative(0) == 0.0 and b.least_loaded(lambda c: True, everywhere=True) == 0
