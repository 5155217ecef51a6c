"""The robustness suite (issue 18): mutated scenario, group, events, assignment, simulation, wire, properties
and topology inputs through the readers the commands use, mutated snapshot buckets through the pipeline's row
checks, and mutated input files through the commands themselves. Each must end in a valid result or a clean
refusal (a UserInputError; exit code 2 with one ``error:`` line), never anything else (tests/fuzz_inputs.py).

Hypothesis drives the inputs (``st.randoms``: every mutation is a draw it can shrink). The default suite tries
a few hundred inputs per reader; the slow suite (``-m slow``) 10,000 per reader and 300 per command.
``python -m benchmarks.fuzz_inputs`` runs the same harness at volume and records its counts and findings in
benchmarks/results/fuzz_inputs.json.
"""

from __future__ import annotations

import logging
import random
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_inputs import COMMANDS, READERS, Outcome, attempt, cli_attempt, read_snapshot_bucket

QUICK = settings(max_examples=150, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
THOROUGH = settings(max_examples=10_000, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
randoms = st.randoms(use_true_random=False)


@pytest.fixture(autouse=True)
def quiet_warnings() -> Iterator[None]:
    """Assignors log Kafka's warnings (too few clients for the standbys, ...) for thousands of inputs."""
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def clean(outcome: Outcome) -> None:
    assert outcome.kind != "finding", f"{outcome.error}\n{outcome.detail}\ninput: {outcome.input}"


@pytest.mark.parametrize("reader", sorted(READERS))
@QUICK
@given(rng=randoms)
def test_readers_accept_or_refuse_cleanly(reader: str, rng: random.Random) -> None:
    clean(attempt(reader, rng))


@QUICK
@given(rng=randoms)
def test_snapshot_buckets_reconcile_whatever_their_rows(rng: random.Random) -> None:
    clean(read_snapshot_bucket(rng))


@pytest.mark.parametrize("command", sorted(COMMANDS))
@settings(QUICK, max_examples=15)
@given(rng=randoms)
def test_commands_exit_0_1_or_2_without_a_traceback(command: str, rng: random.Random) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        clean(cli_attempt(command, rng, Path(workdir)))


@pytest.mark.slow
@pytest.mark.parametrize("reader", sorted(READERS))
@THOROUGH
@given(rng=randoms)
def test_readers_at_volume(reader: str, rng: random.Random) -> None:
    clean(attempt(reader, rng))


@pytest.mark.slow
@THOROUGH
@given(rng=randoms)
def test_snapshot_buckets_at_volume(rng: random.Random) -> None:
    clean(read_snapshot_bucket(rng))


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
@settings(THOROUGH, max_examples=300)
@given(rng=randoms)
def test_commands_at_volume(command: str, rng: random.Random) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        clean(cli_attempt(command, rng, Path(workdir)))
