"""``taskassign check-assignor SPEC``: an assignor (typically your plug-in) over the shipped scenarios and random
applications, each result held to Kafka's rules (``api.check_assignor``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from taskassign.cli._app import app
from taskassign.cli._common import (
    EXIT_FAILED,
    config_overrides,
    handle_errors,
    print_traceback,
    stderr_console,
    stdout_console,
    use_plugin_limits,
)
from taskassign.cli._options import (
    DEFAULT_KAFKA_LINE,
    Force,
    KafkaVersion,
    PluginMemory,
    PluginTimeout,
    debug_option,
    json_option,
)
from taskassign.errors import UserInputError

if TYPE_CHECKING:
    from rich.console import RenderableType

    from taskassign.api.check_assignor import AssignorCheckReport, CaseReport
    from taskassign.formats.scenario import Scenario

#: The repository's examples, when taskassign runs from a checkout (an editable install).
SHIPPED = Path(__file__).resolve().parents[3] / "examples"
SHIPPED_DIRECTORIES = ("scenarios", "groups")


def shipped_scenarios() -> list[Path]:
    """The shipped scenario and group files (``examples/scenarios``, ``examples/groups`` of the checkout
    taskassign runs from, else of the current directory); none when neither has them."""
    from taskassign.api.check_assignor import scenario_files

    for root in (SHIPPED, Path.cwd() / "examples"):
        directories = [root / d for d in SHIPPED_DIRECTORIES if (root / d).is_dir()]
        if directories:
            return scenario_files(directories)
    return []


@app.command("check-assignor")
@handle_errors
def check_assignor(
    spec: str = typer.Argument(..., help="The assignor: module:Class, path/to/file.py:Class, or a built-in name."),
    scenarios: list[Path] = typer.Option(
        [], "--scenarios",
        help="Scenario or group files, or directories of them (repeatable). Default: the shipped examples "
             "(examples/scenarios, examples/groups)."),
    count: int = typer.Option(100, "--random", min=0, help="Random applications to check (0: none)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random applications (case random-<seed>-<i>)."),
    as_json: Annotated[bool, json_option("Print the report as JSON.")] = False,
    save: Path | None = typer.Option(
        None, "--save-failures", help="Write each failing application here as a scenario file, to replay with "
                                      "`taskassign assign FILE -a SPEC --debug`."),
    show: int = typer.Option(20, "--show", min=0, help="Failing findings to list (--json has all, notes included)."),
    debug: Annotated[bool, debug_option("Print the traceback of the first exception the assignor raised.")] = False,
    kafka_version: KafkaVersion = None,
    force: Force = False,
    plugin_timeout: PluginTimeout = 60.0,
    plugin_memory: PluginMemory = 2048,
) -> None:
    """Run an assignor over the shipped scenarios and random applications; report what breaks Kafka's rules.

    Fails (exit 1) on an exception, an assignment Kafka's validation refuses, unassigned tasks, missing
    standbys, or different answers to the same input; notes balance and warm-ups."""
    use_plugin_limits(plugin_timeout, plugin_memory)
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from taskassign.api.application import read_application
    from taskassign.api.check_assignor import AssignorCheckReport, check_case, scenario_files
    from taskassign.api.random_applications import random_applications
    from taskassign.assignors.registry import resolve
    from taskassign.formats.json_io import prepare_output_dir, to_json_text
    from taskassign.formats.output_paths import OutputGuard
    from taskassign.formats.scenario import with_config_overrides, write_scenario

    assignor = resolve(spec)  # an unknown name or unloadable plug-in: exit 2 before anything runs
    files = scenario_files(scenarios) if scenarios else shipped_scenarios()
    guard = OutputGuard.of(force, *files)
    if save is not None:
        guard.directory(save, ())
    cases: list[Scenario | Path] = [*files, *random_applications(count, seed)]
    if not cases:
        raise UserInputError("nothing to check: no scenarios found and --random 0")
    errors = stderr_console()
    reports: list[CaseReport] = []
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=errors, transient=True) as progress:
        job = progress.add_task("checking", total=len(cases))
        for case in cases:
            scenario = read_application(case) if isinstance(case, Path) else case
            scenario = with_config_overrides(scenario, config_overrides(kafka_version=kafka_version))
            progress.update(job, description=f"checking {scenario.name}")
            reports.append(check_case(assignor, scenario))
            if save is not None and not reports[-1].ok:
                prepare_output_dir(save)
                write_scenario(scenario, guard.file(save / f"{scenario.name}.scenario.json"))
            progress.advance(job)
    report = AssignorCheckReport(spec, tuple(reports))
    if debug and (raised := next((c.exception for c in report.cases if c.exception is not None), None)):
        print_traceback(raised)
    console = stdout_console()
    line = kafka_version or DEFAULT_KAFKA_LINE
    if as_json:
        console.out(to_json_text({**report.to_dict(), "kafka_version": kafka_version}), end="")
    else:
        console.print(f"[dim]kafka {line}{'' if kafka_version else ' (or the kafka.version a file sets)'}[/]")
        console.print(summary(report, shipped=len(files), random=count, seed=seed, show=show))
        if save is not None and not report.ok:
            console.print(f"[dim]failing applications written to {escape(str(save))}[/]")
    if not report.ok:
        raise typer.Exit(EXIT_FAILED)


def summary(report: AssignorCheckReport, *, shipped: int, random: int, seed: int, show: int) -> RenderableType:
    """A header, one row per check (applications with a finding), and the first failing findings."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from taskassign.api.check_assignor import CHECKS, FAILING_CHECKS

    failed = sum(not c.ok for c in report.cases)
    header = Text.assemble(
        ("checked ", "dim"), (report.assignor, "bold"), (" on ", "dim"),
        (f"{len(report.cases)} applications", "bold"),
        (f" ({shipped} shipped, {random} random of seed {seed})", "dim"))
    checks = Table(show_edge=False, header_style="bold")
    for column in ("check", "applications", "result", "meaning"):
        checks.add_column(column, justify="right" if column == "applications" else "left",
                          style="dim" if column == "meaning" else None)
    for name, count in report.cases_by_check().items():
        fails = name in FAILING_CHECKS
        result = Text("ok", style="green") if not count else \
            Text("FAIL", style="bold red") if fails else Text("note", style="yellow")
        checks.add_row(name, f"{count:,}", result, CHECKS[name])
    parts: list[RenderableType] = [header, checks]
    listed = [f for f in report.findings if f.fails]
    if listed and show:
        findings = Table(show_edge=False, header_style="bold", title="findings", title_justify="left")
        for column in ("application", "check", "finding"):
            findings.add_column(column)
        for finding in listed[:show]:
            findings.add_row(finding.case, finding.check, finding.message)
        parts.append(findings)
        if len(listed) > show:
            parts.append(Text(f"... {len(listed) - show} more (--show N; --json lists every finding, notes included)",
                              style="dim"))
    verdict = f"{failed} of {len(report.cases)} applications failed" if failed else "every application passed"
    parts.append(Text(verdict, style="bold red" if failed else "green"))
    return Group(*parts)
