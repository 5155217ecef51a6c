"""The typer application every command module registers on, with the habits of Kafka's own tools:
``-h`` beside ``--help`` and ``--version`` on the root and on every command.

The commands load lazily: ``COMMANDS`` names each with its module and the one-line help ``taskassign --help``
lists, so the root's help and ``--version`` import no command module, and running (or asking ``-h`` of) a
command imports its module only (tests/cli/test_startup_imports.py). A new command goes into ``COMMANDS``
(tests/cli/test_command_loading.py checks the table against the commands)."""

from __future__ import annotations

import importlib
import inspect
from typing import Any, NamedTuple

import typer
from typer.core import TyperGroup


class CommandEntry(NamedTuple):
    """A top-level command (or command group): the ``taskassign.cli`` module that registers it, and the first
    paragraph of its help, which is what ``taskassign --help`` shows of it."""

    module: str
    summary: str


#: Every top-level command or group, in the order ``taskassign --help`` lists them.
COMMANDS: dict[str, CommandEntry] = {
    "assign": CommandEntry(
        "assign", "Assign every task of a scenario (or of every scenario in a directory) to its clients."),
    "assignors": CommandEntry(
        "assignors", "List the built-in assignors (any module:Class or file.py:Class works too)."),
    "capture": CommandEntry(
        "capture", "Read what a Kafka Streams group's leader used at its last rebalance, and the assignment it made."),
    "check-assignor": CommandEntry(
        "check_assignor",
        "Run an assignor over the shipped scenarios and random applications; report what breaks Kafka's rules."),
    "compare": CommandEntry(
        "compare",
        "The same application through each assignor (one rebalance, or a simulation with --events), side by side:\n"
        "metrics as rows, assignors as columns, the better value of each row marked. With one assignor and a what-if:"
        "\nthe input as it is against the altered input, as a before -> after diff."),
    "diff": CommandEntry(
        "diff",
        "Before -> after, per client: tasks gained and lost (active and standby) and the metrics that changed,\n"
        "after the totals (replicas moved, actives moved, data to move), as Cruise Control summarises a proposal."),
    "optimize": CommandEntry(
        "optimize",
        "Improve the scenario's current_assignment for cross-rack traffic, keeping every client's task count."),
    "predict-check": CommandEntry(
        "predict_check",
        "How exact is a what-if? Each change the group went through is predicted from the capture before it with\n"
        "the matching what-if (--remove-client, --add-clients, --set) and the assignor the group runs, then\n"
        "checked against Kafka's assignment: tasks placed as Kafka placed them, and a named cause for every\n"
        "difference (exit 1 when a difference has no cause but taskassign's own replay)."),
    "rebalance": CommandEntry(
        "rebalance",
        "Run Kafka Streams' group leader on GROUP.json: every member's assignment bytes and what it does next."),
    "report": CommandEntry(
        "report",
        "One self-contained HTML page (plots inlined, opens offline): a simulation's results, a fleet pipeline's\n"
        "output, or the topology with every task on the process that runs it and what moves."),
    "simulate": CommandEntry(
        "simulate",
        "Replay a sequence of rebalances (joins, crashes, restarts, restores, probing) and report each one."),
    "streams-migration": CommandEntry(
        "streams_migration",
        "What moving an application to the streams protocol (KIP-1071) would change: the classic assignor against\n"
        "Kafka's broker-side sticky and balanced assignors, on the same application."),
    "validate": CommandEntry(
        "validate", "Print the AssignmentError Kafka would report and a completeness report; exit 0 only for NONE."),
    "decode": CommandEntry(
        "wire", "Decode a Kafka Streams rebalance message and print it as JSON (taskassign encode reverses it)."),
    "encode": CommandEntry(
        "wire", "Encode a message from its JSON form (as taskassign decode prints it) into Kafka's bytes."),
    "fleet": CommandEntry("fleet", "Synthetic fleets of Kafka Streams applications."),
    "pipeline": CommandEntry("pipeline", "Run the engine over a fleet snapshot on Spark."),
    "bridge": CommandEntry("bridge", "Run taskassign's assignors in real applications (docs/bridge.md)."),
    "serve": CommandEntry(
        "serve",
        "Answer the bridge's rebalances: the application's assignor on its ApplicationState, or its approved plan."),
    "plan": CommandEntry(
        "plan", "Compute an assignment for a captured application and show what would move (before -> after)."),
    "approve": CommandEntry(
        "plan", "Hand a plan to the service: it answers the application's rebalances with it while it fits the group."),
}


def _version() -> str:
    """The installed distribution's version (the package's top is above the CLI, so not ``__version__``)."""
    import importlib.metadata  # here: it imports the email package, which only --version needs

    try:
        return importlib.metadata.version("taskassign")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _print_version(ctx: typer.Context, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        typer.echo(f"taskassign {_version()}")
        raise typer.Exit()


def _version_parameter() -> Any:
    """The ``--version`` flag as typer builds it (eager, never passed to the command), made once and shared."""
    probe = typer.Typer()

    @probe.command()
    def _probe(_version: bool = typer.Option(False, "--version", is_eager=True, expose_value=False,
                                             callback=_print_version, help="Show the version and exit.")) -> None:
        """Only its parameter is used."""

    return typer.main.get_command(probe).params[0]


_VERSION = _version_parameter()


def _with_version(command: Any) -> Any:
    """``--version`` on ``command`` (and, for a group such as ``fleet``, on each of its commands)."""
    if all(p is not _VERSION for p in command.params):
        command.params.append(_VERSION)
    for sub in getattr(command, "commands", {}).values():
        _with_version(sub)
    return command


class _Unloaded(typer.core.TyperCommand):
    """A command whose module is not imported yet: its name and one-line help, for the root's help list."""


class CommandGroup(TyperGroup):
    """A command group (the root, ``fleet``, ``pipeline``) whose ``-h/--help``, when not given, is False rather
    than None: a group parses its own options before its command's ``-h``, and typer 0.29 checked a None
    through pydantic, whose import alone took longer than typer's (the pinned 0.28 has no pydantic)."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False
        return option

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """Each command with the whole first paragraph of its help, wrapped (click would cut it to the width)."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                first = inspect.cleandoc(command.help or "").split("\n\n")[0]
                rows.append((name, " ".join(first.split())))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class _KafkaToolGroup(CommandGroup):
    """The root group: every command of ``COMMANDS``, its module imported when the command is asked for (to run
    or for its ``-h``); it and every command it hands out take ``--version``."""

    def __init__(self, *args: Any, commands: dict[str, Any] | None = None, **kwargs: Any) -> None:
        loaded = commands or {}
        table = {name: loaded.get(name) or _Unloaded(name, help=entry.summary) for name, entry in COMMANDS.items()}
        super().__init__(*args, commands={**table, **loaded}, **kwargs)
        self._listing = False
        _with_version(self)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True  # the list of commands needs their one-line help only: no module is imported
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if isinstance(command, _Unloaded) and not self._listing:
            importlib.import_module(f"taskassign.cli.{COMMANDS[cmd_name].module}")
            command = self.commands[cmd_name] = typer.main.get_group(app).commands[cmd_name]
        return _with_version(command) if command is not None else None


app = typer.Typer(
    name="taskassign",
    help="Kafka Streams task assignment: assign, validate, optimise, simulate, and run fleets on Spark.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help (click's formatter): typer's rich help renderer alone costs about 3x `import typer, rich`.
    rich_markup_mode=None,
    cls=_KafkaToolGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _group() -> None:
    # A callback keeps the app a command group when a single command's module is loaded (typer would otherwise
    # run that lone command without its name).
    pass
