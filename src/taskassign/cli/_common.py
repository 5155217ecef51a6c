"""What every command shares: consoles, error handling, exit codes, scenario loading."""

from __future__ import annotations

import functools
import os
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import typer

from taskassign.errors import InvalidAssignmentError, TaskassignError, UserInputError

if TYPE_CHECKING:  # rich's console and tables load when a command prints, not for its -h (test_startup_imports)
    from rich.console import Console
    from rich.table import Table

    from taskassign.api.what_if import WhatIf
    from taskassign.formats.scenario import Scenario

P = ParamSpec("P")
R = TypeVar("R")

#: Exit codes: 0 success, 1 the assignment is invalid or the run failed, 2 the input is wrong.
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def escape(text: str) -> str:
    """rich's markup escape, imported when first used."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def stdout_console() -> Console:
    """Console for results; when piped (no terminal), wide enough that tables are not squeezed."""
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(highlight=False, soft_wrap=False, width=160)
    return console


def new_table(**options: Any) -> Table:
    """Every table of the command, in one style: a bold header, no outer edge; box-drawing lines only on a
    terminal (piped or redirected output gets plain columns that ``grep``, ``awk`` and diffs read)."""
    from rich import box
    from rich.table import Table

    plain = not stdout_console().is_terminal
    return Table(show_edge=False, header_style="bold", box=None if plain else box.HEAVY_HEAD, **options)


def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def print_traceback(exc: BaseException) -> None:
    """``exc``'s traceback, its causes' first (a plug-in's own exception), on stderr: what ``--debug`` adds."""
    stderr_console().out("".join(traceback.format_exception(exc)), end="", highlight=False)


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn taskassign errors into one clear line on stderr and an exit code (no traceback)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except UserInputError as exc:
            stderr_console().print(f"[bold red]error:[/] {escape(str(exc))}")
            raise typer.Exit(EXIT_BAD_INPUT) from None
        except InvalidAssignmentError as exc:
            stderr_console().print(f"[bold red]invalid assignment:[/] {escape(str(exc))}")
            raise typer.Exit(EXIT_FAILED) from None
        except TaskassignError as exc:
            stderr_console().print(f"[bold red]failed:[/] {escape(str(exc))}")
            raise typer.Exit(EXIT_FAILED) from None

    return wrapper


def use_plugin_limits(timeout_s: float, memory_mib: int) -> None:
    """``--plugin-timeout`` and ``--plugin-memory``: the limits of every plug-in assignor this run starts."""
    from taskassign.assignors.plugin_process import PluginLimits, set_plugin_limits

    set_plugin_limits(PluginLimits(timeout_s, memory_mib))


def config_overrides(kafka_compat: bool = False, kafka_version: str | None = None) -> dict[str, Any]:
    """The configs ``--kafka-compat`` and ``--kafka-version`` set (the flag wins over the file's config)."""
    from taskassign.configs import KAFKA_COMPAT, KAFKA_VERSION

    overrides: dict[str, Any] = {}
    if kafka_compat:
        overrides[KAFKA_COMPAT] = True
    if kafka_version is not None:
        overrides[KAFKA_VERSION] = kafka_version
    return overrides


def load_scenario(path: Path, *, kafka_compat: bool = False, kafka_version: str | None = None) -> Scenario:
    """Read a scenario file or a GROUP.json (as its leader sees it), applying ``--kafka-compat`` and
    ``--kafka-version`` when given."""
    from taskassign.api.application import read_application
    from taskassign.formats.scenario import with_config_overrides

    return with_config_overrides(read_application(path), config_overrides(kafka_compat, kafka_version))


def load_altered(path: Path, what_if: WhatIf, *, kafka_compat: bool = False,
                 kafka_version: str | None = None) -> tuple[Scenario, tuple[str, ...]]:
    """``load_scenario`` then the what-if flags: the scenario to run and what the what-if changed."""
    from taskassign.api.what_if import apply_what_if

    return apply_what_if(load_scenario(path, kafka_compat=kafka_compat, kafka_version=kafka_version), what_if)


def case_name(path: Path) -> str:
    """``dir/foo.scenario.json`` -> ``foo``."""
    return path.name.removesuffix(".json").removesuffix(".scenario")
