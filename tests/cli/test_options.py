"""``cli._options`` writes out the engine's defaults its help texts show (importing them would load the engine
for every ``-h``): each must stay the engine's value."""

from __future__ import annotations

from typing import Any

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


def test_the_plugin_limits_every_command_shows_are_the_engines() -> None:
    import typer

    from taskassign.assignors.plugin_process import DEFAULT_PLUGIN_MEMORY_MIB, DEFAULT_PLUGIN_TIMEOUT_S
    from taskassign.cli import _options as shown
    from taskassign.cli import app

    assert (shown.DEFAULT_PLUGIN_TIMEOUT_S, shown.DEFAULT_PLUGIN_MEMORY_MIB) == (DEFAULT_PLUGIN_TIMEOUT_S,
                                                                             DEFAULT_PLUGIN_MEMORY_MIB)
    found = {}

    def walk(command: Any, path: str) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}".strip())
        for param in command.params:
            if param.name in ("plugin_timeout", "plugin_memory"):
                found[(path, param.name)] = param.default

    walk(typer.main.get_command(app), "")
    commands = {path for path, _ in found}
    assert commands >= {"assign", "compare", "check-assignor", "simulate", "rebalance", "streams-migration", "plan",
                        "serve", "pipeline run", "pipeline export-scenario"}
    assert {value for (_, name), value in found.items() if name == "plugin_timeout"} == {DEFAULT_PLUGIN_TIMEOUT_S}
    assert {value for (_, name), value in found.items() if name == "plugin_memory"} == {DEFAULT_PLUGIN_MEMORY_MIB}
