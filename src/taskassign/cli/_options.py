"""The options several commands take, declared once: where a new option that more than one command takes goes.

Two forms, both for typer's ``Annotated`` style (``name: Alias = default``):

- an alias, ``KafkaCompat``, ``SetConfigs``, ...: the whole option, flags and help, where every command says the
  same (``kafka_compat: KafkaCompat = False``);
- a factory, ``assignor_option(help)``, ``json_option(help)``, ...: the flags (and metavar, type) once, the help
  each command's own (``as_json: Annotated[bool, json_option("Print ...")] = False``).

An option one command alone takes stays in its command. A version selector for the assignors and the leader
(``--kafka-version``), for instance, is an alias here, added to every command that runs one.

This module imports typer only: ``taskassign COMMAND -h`` builds the options of COMMAND and must stay as quick
as typer itself (tests/cli/test_startup_imports.py). A default shown in a help text is written out here, not
imported from the engine; tests/cli/test_options.py holds each to the engine's value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = (
    "DEFAULT_ASSIGNOR",
    "DEFAULT_CAPTURE_TIMEOUT_S",
    "DEFAULT_KAFKA_LINE",
    "DEFAULT_PLUGIN_MEMORY_MIB",
    "DEFAULT_PLUGIN_TIMEOUT_S",
    "KAFKA_LINES",
    "AddClients",
    "AllowPlugins",
    "AssignmentJson",
    "AssignmentOut",
    "EventsSeed",
    "Force",
    "KafkaCompat",
    "KafkaVersion",
    "PluginMemory",
    "PluginTimeout",
    "RacksDown",
    "RemoveClients",
    "SetConfigs",
    "SparkMaster",
    "SparkRemote",
    "allow_plugins_option",
    "assignor_option",
    "debug_option",
    "events_option",
    "json_option",
    "kafka_compat_option",
    "out_option",
    "strict_option",
)

#: ``assignors.registry.DEFAULT_ASSIGNOR``, as the help texts name it.
DEFAULT_ASSIGNOR = "high_availability"
#: ``api.capture.DEFAULT_TIMEOUT_S``, capture's ``--timeout`` default.
DEFAULT_CAPTURE_TIMEOUT_S = 30.0
#: ``configs.KAFKA_LINES`` and ``configs.DEFAULT_KAFKA_LINE``: the release lines ``--kafka-version`` takes.
KAFKA_LINES: tuple[str, ...] = ("3.9", "4.0", "4.1", "4.2", "4.3", "4.4", "trunk")
DEFAULT_KAFKA_LINE = "4.4"
#: ``assignors.plugin_process.DEFAULT_PLUGIN_TIMEOUT_S`` and ``DEFAULT_PLUGIN_MEMORY_MIB``.
DEFAULT_PLUGIN_TIMEOUT_S = 60.0
DEFAULT_PLUGIN_MEMORY_MIB = 2048

_KAFKA_VERSION_HELP = (f"The Kafka Streams release line whose assignors and group leader are reproduced: "
                       f"{', '.join(KAFKA_LINES)}. Default: the input's kafka.version config, else "
                       f"{DEFAULT_KAFKA_LINE} (the newest release line). docs/kafka-versions.md says what changes "
                       "per line.")


def _check_kafka_line(value: str | None) -> str | None:
    if value is not None and value not in KAFKA_LINES:
        raise typer.BadParameter(f"unknown Kafka release line {value!r}; known lines: {', '.join(KAFKA_LINES)}")
    return value


#: ``--kafka-version LINE`` (a bad line exits 2 naming the option).
KafkaVersion = Annotated[str | None, typer.Option(
    "--kafka-version", metavar="LINE", help=_KAFKA_VERSION_HELP, callback=_check_kafka_line)]


def kafka_compat_option(help: str = "Reproduce Kafka's known bugs bit for bit.") -> Any:
    return typer.Option("--kafka-compat", help=help)


def assignor_option(help: str) -> Any:
    """``-a/--assignor SPEC``: a built-in name, module:Class or file.py:Class."""
    return typer.Option("--assignor", "-a", help=help)


def out_option(help: str, *, output_alias: bool = True, required: bool = False) -> Any:
    """``-o/--out`` (``--output`` too, unless the command never had it): where the command writes. A required one
    is the parameter's default (``out: Path = out_option(..., required=True)``), since in ``Annotated`` form a
    parameter without a default could not follow those with one."""
    flags = ("--out", "-o", *(["--output"] if output_alias else []))
    return typer.Option(..., *flags, help=help) if required else typer.Option(*flags, help=help)


def json_option(help: str) -> Any:
    """``--json``: print the command's document instead of tables."""
    return typer.Option("--json", help=help)


def strict_option(help: str) -> Any:
    return typer.Option("--strict", help=help)


def debug_option(help: str) -> Any:
    return typer.Option("--debug", help=help)


def allow_plugins_option(help: str = "Let the input's task.assignor.class name a plug-in (module.Class: code that "
                                     "runs); without it, only built-in assignors (docs/security.md).") -> Any:
    return typer.Option("--allow-plugins", help=help)


def events_option(help: str, *, required: bool = False) -> Any:
    """``-e/--events EVENTS.json``: the script of a simulation (docs/events.md); a required one is the parameter's
    default, as with ``out_option``."""
    return typer.Option(..., "--events", "-e", help=help) if required else typer.Option("--events", "-e", help=help)


# A plug-in assignor's process (docs/assignors.md, "Plug-ins run apart"): every command that can run one.
PluginTimeout = Annotated[float, typer.Option(
    "--plugin-timeout", metavar="SECONDS", min=0.001, max=86_400.0,
    help=f"Stop a plug-in assignor that has not answered one call (import, configure, assign, callback) within "
         f"SECONDS: exit 1 naming it. Default {DEFAULT_PLUGIN_TIMEOUT_S:g}.")]
PluginMemory = Annotated[int, typer.Option(
    "--plugin-memory", metavar="MIB", min=16, max=1 << 30,
    help=f"The address space a plug-in assignor's process may take beyond taskassign's own (RLIMIT_AS); past "
         f"it the plug-in fails, exit 1 naming it. Default {DEFAULT_PLUGIN_MEMORY_MIB}.")]

KafkaCompat = Annotated[bool, kafka_compat_option()]
AllowPlugins = Annotated[bool, allow_plugins_option()]
AssignmentOut = Annotated[Path | None, out_option("Write the assignment file here.")]
AssignmentJson = Annotated[bool, json_option("Print the assignment file to stdout instead of a table.")]
EventsSeed = Annotated[int | None, typer.Option("--seed", help="Override the events file's seed.")]
#: ``--force``: every command that writes files (formats.output_paths.OutputGuard).
Force = Annotated[bool, typer.Option(
    "--force", help="Write over existing files taskassign did not write (never over an input; docs/commands.md).")]

# The what-if flags of every command that reads a scenario or group file (``_what_if.what_if_from_flags``).
SetConfigs = Annotated[list[str] | None, typer.Option(
    "--set", metavar="CONFIG=VALUE",
    help="What-if: set a Kafka Streams config as a properties file holds it (repeatable), e.g. "
         "num.standby.replicas=1, rack.aware.assignment.tags=zone,cell, task.assignor.class=sticky.")]
AddClients = Annotated[list[str] | None, typer.Option(
    "--add-clients", metavar="N[:threads=T,rack=R,tag.K=V]",
    help="What-if: add N new empty clients (repeatable); unspecified threads, rack and tags are those of the "
         "most common existing client. Their process ids are derived from the input's name (deterministic).")]
RemoveClients = Annotated[list[str] | None, typer.Option(
    "--remove-client", metavar="ID",
    help="What-if: remove the client named ID (as the outputs name it), or whose process id is (or starts "
         "with) ID (repeatable).")]
RacksDown = Annotated[list[str] | None, typer.Option(
    "--rack-down", metavar="RACK", help="What-if: remove every client on RACK (repeatable).")]

# Spark, for the pipeline's commands.
SparkMaster = Annotated[str | None, typer.Option(
    "--master", help="Spark master URL (default local[*]; e.g. spark://host:7077).")]
SparkRemote = Annotated[str | None, typer.Option(
    "--remote", help="Spark Connect server (sc://host:port) instead of a master.")]
