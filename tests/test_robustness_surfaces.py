"""Issue 32 point 7: the robustness harness on the surfaces of issue 32 (tests/fuzz_surfaces.py): streams-group
files, the what-if flags, diff, compare, streams-migration, check-assignor, output-path collisions, and capture
against a fake broker answering malformed frames. A few inputs each here; benchmarks/fuzz_inputs.py and
benchmarks/fuzz_wire.py run them at volume and record the counts."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_surfaces import SURFACES, attempt_streams_group, capture_attempt, collision_outcomes, surface_attempt
from tests.test_robustness import clean, quiet_warnings  # noqa: F401  (an autouse fixture: imported to apply here)

QUICK = settings(max_examples=100, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
randoms = st.randoms(use_true_random=False)


@QUICK
@given(rng=randoms)
def test_streams_group_files_are_read_and_assigned_or_refused(rng: random.Random) -> None:
    clean(attempt_streams_group(rng))


@pytest.mark.parametrize("surface", sorted(SURFACES))
@settings(QUICK, max_examples=8)
@given(rng=randoms)
def test_each_surface_exits_0_1_or_2_without_a_traceback(surface: str, rng: random.Random,
                                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    clean(surface_attempt(surface, rng, tmp_path_factory.mktemp(surface)))


@pytest.mark.parametrize("seed", range(6))
def test_capture_against_a_broker_answering_malformed_frames(seed: int, tmp_path: Path) -> None:
    clean(capture_attempt(random.Random(f"malformed:{seed}"), tmp_path))


def test_no_command_overwrites_an_input_or_a_users_file(tmp_path: Path) -> None:
    outcomes = collision_outcomes(tmp_path / "work")
    assert [o.error for o in outcomes if o.kind == "finding"] == []
