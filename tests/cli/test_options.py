"""``cli._options`` writes out the engine's defaults its help texts show (importing them would load the engine
for every ``-h``): each must stay the engine's value."""

from __future__ import annotations

from taskassign.api.capture import DEFAULT_TIMEOUT_S
from taskassign.api.optimize import Api, TaskSelection
from taskassign.assignors.registry import DEFAULT_ASSIGNOR
from taskassign.cli._options import DEFAULT_ASSIGNOR as SHOWN_DEFAULT_ASSIGNOR
from taskassign.cli._options import DEFAULT_CAPTURE_TIMEOUT_S
from taskassign.cli.optimize import ApiChoice, TasksChoice


def test_the_defaults_the_help_shows_are_the_engines() -> None:
    assert SHOWN_DEFAULT_ASSIGNOR == DEFAULT_ASSIGNOR
    assert DEFAULT_CAPTURE_TIMEOUT_S == DEFAULT_TIMEOUT_S


def test_optimizes_choices_are_the_apis() -> None:
    assert [c.value for c in ApiChoice] == [c.value for c in Api]
    assert [c.value for c in TasksChoice] == [c.value for c in TaskSelection]


def test_the_kafka_lines_the_option_takes_are_the_engines() -> None:
    from taskassign.cli._options import DEFAULT_KAFKA_LINE as SHOWN_DEFAULT_LINE
    from taskassign.cli._options import KAFKA_LINES as SHOWN_LINES
    from taskassign.configs import DEFAULT_KAFKA_LINE, KAFKA_LINES

    assert SHOWN_LINES == KAFKA_LINES
    assert SHOWN_DEFAULT_LINE == DEFAULT_KAFKA_LINE
